// Text the agent controls, made inert before the chat or a prompt shows it. goose-ls
// forwards the agent's raw text (docs/protocol.md), so what would act is neutralised here,
// as goose-ls does for its own views, and a line that would pass for one of the chat's
// own is marked. No vscode import, so it is unit-tested under plain node.

/** What acts in agent text instead of being read: C0 and C1 controls but newline and tab
 * (ESC starts terminal sequences, OSC 52 writes the clipboard, `\r` overwrites a line),
 * DEL, bidi controls (reorder a line), zero-width and invisible characters (hide text),
 * the Unicode line and paragraph separators. As goose-ls's own `inert.py`. */
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const ACTING_ON_A_LINE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const SHORT: Record<string, string> = { "\n": "\\n", "\t": "\\t", "\r": "\\r" };

function isEmoji(char: string | undefined): boolean {
  const code = char?.codePointAt(0) ?? 0;
  return code >= 0x1f000 || (code >= 0x2600 && code <= 0x27bf) || code === 0xfe0f;
}

function escapeActing(char: string, at: number, text: string): string {
  if (char === "\u200d") {
    const before = Array.from(text.slice(Math.max(0, at - 2), at)).pop();
    const after = Array.from(text.slice(at + 1, at + 3))[0];
    if (isEmoji(before) && isEmoji(after)) return char; // 👩‍💻: one emoji drawn from several
  }
  if (SHORT[char]) return SHORT[char];
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** A block of agent text (a reply, a tool's output) with what would act shown as its
 * escape (`\x1b`, `\u202e`), visible and never interpreted; newlines and tabs kept. */
export function inert(text: string): string {
  return text.replace(ACTING, escapeActing);
}

/** One line of agent text (a title, a label, a name): inert, its newlines and tabs
 * escaped too, so it cannot start a line of its own. */
export function inertLine(text: string): string {
  return text.replace(ACTING_ON_A_LINE, escapeActing);
}

/** Agent text on one line, as a prompt or a heading shows it: runs of spaces, newlines
 * and tabs as one space, the rest inert. */
export function oneLine(text: string): string {
  return inertLine(text.replace(/[ \t\n]+/g, " ").trim());
}

/** How the chat's own lines begin: a line of agent text beginning so is escaped. A
 * speaker's heading ("## You", "## <agent>") is checked apart. */
const OWN = ["# ", "🔧", "🔐", "❓", "📎", "🖼", "⚠", "💾", "_", "**Plan**", "> 💭", "> ⚠", "> 📋", "### 🤖"];

/** How much of a line decides whether it imitates (a heading with a long name too). */
export const DECIDES = 200;

/** Whether a line of agent text begins as the chat's own lines do, as markdown shows it:
 * up to three spaces of indent, and `>x` read as `> x`. */
export function imitates(line: string, speakers: readonly string[]): boolean {
  let shown = line.replace(/^ {0,3}/, "");
  if (shown.startsWith(">") && !shown.startsWith("> ")) shown = `> ${shown.slice(1)}`;
  if (OWN.some((opener) => shown.startsWith(opener))) return true;
  return shown.startsWith("## ") && speakers.some((speaker) => speaker && shown.slice(3).startsWith(speaker));
}

/** Each line of agent text that imitates the chat's own led by a backslash (text that
 * comes whole). */
export function ownLinesEscaped(text: string, speakers: readonly string[]): string {
  return text
    .split("\n")
    .map((line) => (imitates(line, speakers) ? `\\${line}` : line))
    .join("\n");
}
