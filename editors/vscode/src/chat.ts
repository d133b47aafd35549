// The chat model: goose/* notifications in, markdown out. No vscode import, so it is
// unit-tested under plain node.
import { homedir } from "node:os";
import { isAbsolute, normalize, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { checklist, codeSpan, Compactions, planDocument, type PlanDocument, type Queued, queueText } from "./blocks";
import { DECIDES, imitates, inert, inertLine, oneLine, ownLinesEscaped } from "./inert";

export { oneLine };

export interface Update {
  sessionId: string;
  messageId: string | null;
  index: number;
  replay?: boolean;
  update: { sessionUpdate: string; [key: string]: unknown };
}

export interface TurnEnd {
  sessionId: string;
  messageId: string | null;
  index: number;
  stopReason?: string;
  error?: string;
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
  /** The words to show for it, as goose-ls words every option. */
  label: string;
}

interface Content {
  type?: string;
  text?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string };
  /** An image's (docs/protocol.md, "Images in updates"): what goose-ls found its bytes
   * to be, their size, the file it was read from (the user's), or why it was not kept. */
  mimeType?: string;
  size?: number;
  source?: string;
  refused?: string;
}

const IMAGE_KINDS: Record<string, string> = { "image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP" };

/** A size in bytes as a person reads it: 812 bytes, 14 KB, 2.4 MB. */
export function sizeText(size: number): string {
  if (size < 1000) return `${size} bytes`;
  if (size < 1_000_000) return `${Math.round(size / 1000)} KB`;
  return `${(size / 1_000_000).toFixed(1)} MB`;
}

/** An image as a line of the chat's own: the copy goose-ls kept of it, as a markdown
 * image (the preview shows it; Ctrl+click opens the file), or why it was not kept. */
export function imageLine(content: Content): string {
  if (typeof content.refused === "string" || typeof content.uri !== "string" || !content.uri.startsWith("file:")) {
    return `⚠ image not shown: ${inertLine(typeof content.refused === "string" ? content.refused : "goose-ls kept no copy of it")}`;
  }
  const kind = IMAGE_KINDS[content.mimeType ?? ""] ?? "image";
  const size = typeof content.size === "number" ? `, ${sizeText(content.size)}` : "";
  const target = content.uri.replace(/[()\s<>]/g, (c) => encodeURIComponent(c));
  return `🖼 ![${kind} image${size}](${target})`;
}

/** The agent's name for people (goose/agentStatus `name`) as the chat heads its messages
 * with it: on one line; "agent" when it has none, or one that would pass for the user's. */
export function agentName(name: unknown): string {
  const line = typeof name === "string" ? oneLine(name) : "";
  return line && line.toLowerCase() !== "you" ? line : "agent";
}

/** A path as the user knows it: relative to the workspace folder it is in, else whole,
 * the home folder as `~` (as goose-ls's own transcript names files). */
export function shownPath(path: string, folders: readonly string[], home = homedir()): string {
  for (const folder of folders) {
    const inside = relative(folder, path);
    if (inside && !inside.startsWith("..") && !isAbsolute(inside)) return inside;
  }
  const under = home && home !== "/" ? relative(home, path) : "..";
  return under && !under.startsWith("..") && !isAbsolute(under) ? `~/${under}` : path;
}

/** What a chat takes from the window that shows it. */
export interface ChatContext {
  /** The agent's name for people, that heads its messages ("agent" when not given). */
  agent?: () => string;
  /** The workspace folders' paths, that attached files are named from. */
  folders?: () => readonly string[];
}

/** A tool call as the chat shows it: its status line and the text of its output. */
export interface ToolCall {
  id: string;
  title: string;
  /** The tool's own name (`fs_read`), when the agent says it. */
  name?: string;
  status: string;
  output: string;
}

/** A block drawn again in place as it changes: a plan, a compaction. */
interface Drawn {
  text: string;
}

/** The text items of a tool call's content, joined; "" when it has none. */
function outputOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const texts = content
    .filter((item) => item?.type === "content" && (item.content?.type === "text" || item.content?.type === "image"))
    .map((item) => (item.content.type === "image" ? imageLine(item.content) : String(item.content.text)));
  return texts.join("\n").replace(/\n+$/, "");
}

/** A status line (the tool's own name beside its title when it differs), then the output
 * as an indented (code) block under it. */
export function renderTool(tool: ToolCall): string {
  const name = tool.name && tool.name !== tool.title ? ` · \`${tool.name}\`` : "";
  const line = `🔧 ${inertLine(tool.title)}${inertLine(name)} — ${inertLine(tool.status)}\n`;
  if (!tool.output) return line;
  return `${line}\n${inert(tool.output).split("\n").map((l) => `    ${l}`).join("\n")}\n`;
}

export interface SlashCommand {
  name: string;
  description?: string;
}

/**
 * The agent's commands a message could be starting: those whose name begins with what
 * follows its `/` (a message of one word); undefined when it is no such start, or already
 * one of the commands.
 */
export function slashCandidates(text: string, commands: SlashCommand[]): SlashCommand[] | undefined {
  const typed = /^\/(\S*)$/.exec(text)?.[1];
  if (typed === undefined || commands.some((c) => c.name === typed)) return undefined;
  const found = commands.filter((c) => c.name.startsWith(typed));
  return found.length ? found : undefined;
}

/** A part of a chat's text as drawn. */
function partText(part: string | ToolCall | Drawn): string {
  return typeof part === "string" ? part : "text" in part ? part.text : renderTool(part);
}

/** A place in a chat's text that text drawn again before it does not move: a part, and
 * where in it (a part that is not text yet: `at` 0 of the one to come). */
interface Place {
  part: number;
  at: number;
}

/** A turn as drawn: where its first block begins, and where it ended (the blank line
 * under it), once it did. */
interface TurnMarks {
  messageId: string;
  start: Place;
  end?: Place;
}

/** A turn of the chat, by the lines of its text (0-based): from its first block's first
 * line to the blank line under its end (none while it runs). */
export interface TurnLines {
  messageId: string;
  start: number;
  end?: number;
}

const OUTCOMES: Record<string, string> = { accept: "answered", decline: "declined", cancel: "cancelled" };

/** How a subagent's heading begins: the chat's own words (agent text that begins so is
 * escaped). */
export const SUBAGENT_HEADING = "### 🤖 Subagent";
const SUBAGENT_STATES: Record<string, string> = { running: "⏳ running", requires_action: "✋ waiting for you" };
const SUBAGENT_ENDS: Record<string, string> = {
  end_turn: "✓ done",
  cancelled: "⊘ cancelled",
  error: "✗ failed",
  refusal: "✗ failed (refused)",
};

/** A subagent the agent runs, as its last subagent_update says, and its last heading. */
interface Subagent {
  title?: string;
  description?: string;
  state?: string;
  stopReason?: string;
  described?: boolean;
  heading?: Drawn;
}

/** `### 🤖 Subagent (state): title`: the chat's words first, the agent's title after. */
function subagentHeading(sub: Subagent, continued = false): string {
  if (continued) return `${SUBAGENT_HEADING} (continued below)${sub.title ? `: ${inertLine(sub.title)}` : ""}\n`;
  let state = SUBAGENT_STATES[sub.state ?? "running"] ?? `• ${inertLine(String(sub.state))}`;
  if (sub.state === "idle") {
    state = sub.stopReason ? (SUBAGENT_ENDS[sub.stopReason] ?? `■ ended (${inertLine(sub.stopReason)})`) : "■ ended";
  }
  return `${SUBAGENT_HEADING} (${state})${sub.title ? `: ${inertLine(sub.title)}` : ""}\n`;
}

/** The lines (0-based) of each subagent's block in a chat's text, for folding: from its
 * heading to the last line before the next heading of a speaker (`## You`, the agent's,
 * in `speakers`) or of a subagent. Agent text that begins as these do is escaped. */
export function subagentFolds(text: string, speakers: readonly string[]): { start: number; end: number }[] {
  const folds: { start: number; end: number }[] = [];
  const heads = new Set(speakers.map((speaker) => `## ${speaker}`));
  let open: number | undefined;
  const lines = text.split("\n");
  const close = (before: number) => {
    if (open !== undefined && before - 1 > open) folds.push({ start: open, end: before - 1 });
    open = undefined;
  };
  lines.forEach((line, n) => {
    if (line.startsWith(SUBAGENT_HEADING)) {
      close(n);
      open = n;
    } else if (heads.has(line)) {
      close(n);
    }
  });
  close(lines.length);
  return folds;
}

/** Blocks that chunks stream into: the next chunk of the same kind goes on where it is. */
const STREAMED = new Set(["user", "agent", "thought", "task"]);

/**
 * One session's chat, as markdown; events are applied once each, in index order, none
 * after a gap (see `missed`).
 * Text only grows at the end, except a tool call's block, a plan's and a compaction's,
 * which each update of theirs rewrites where it is. The messages waiting for the running
 * turn are listed after it.
 */
export class Chat {
  private lastIndex = 0;
  private block = "";
  private readonly parts: (string | ToolCall | Drawn)[] = ["\n"];
  private readonly tools = new Map<string, ToolCall>();
  private readonly drawn = new Map<string, Drawn>();
  private readonly compactions = new Compactions();
  /** The running turn's messageId: a turn had an update and has not ended. */
  private turn: string | undefined;
  /** Turns that had an update; queued messages sent into the running turn (Send now). */
  private readonly started = new Set<string>();
  private readonly joined = new Set<string>();
  /** How full the context is: the agent's last usage_update. */
  usage: { used: number; size: number } | undefined;
  /** The agent's slash commands (its last available_commands_update). */
  commands: SlashCommand[] = [];
  /** The messages waiting for the running turn, oldest first. */
  queue: Queued[] = [];
  /** The chat's title, as the agent (or a rename) gives it. */
  title: string | undefined;
  /** Each turn drawn here, in the order they began (replayed history too): what
   * `turns` and `turnAt` read (Fork chat here). */
  private readonly marks: TurnMarks[] = [];
  /** An event came after a gap and was not applied: the events after `seen` are to be
   * asked for again (goose/replay), which sends them and that one, in order. */
  missed = false;
  /** The highest index that came, applied or not: after a replay, a gap remains only
   * when one came beyond what the replay brought. */
  private highest = 0;
  /** The events that came after a gap, by index, until the replay asked for answers
   * (`settle`). */
  private readonly held = new Map<number, { update?: Update; end?: TurnEnd }>();

  /** Who spoke last (`user`, `agent`, or `sub:<id>`: a subagent): a heading names the
   * speaker when it changes, so the agent's heads its turn once, over its text, thoughts,
   * tool calls and cards alike. */
  private speaker: string | undefined;
  /** The agent's subagents, by their subagentId. */
  private readonly subagents = new Map<string, Subagent>();

  /** The line agent text goes on: where it begins (after the chat's own lead, in the last
   * part), what of it came so far, and that lead, read with it; undefined once it is known
   * not to imitate the chat's own lines, or after a lead of the chat's own ("> 💭 "). */
  private line: { part: number; at: number; head: string; lead: string } | undefined;

  constructor(
    readonly sessionId: string,
    private readonly context: ChatContext = {},
  ) {}

  /** What a tool call really changed on disk (goose-ls's disk_changes): a line naming the
   * files under the tool call's title, then the diffs in a fence nothing in them closes. */
  private diskChanges(u: Record<string, unknown>): string {
    const id = typeof u.toolCallId === "string" ? u.toolCallId : undefined;
    const tool = id ? this.tools.get(id) : undefined;
    const by = tool ? ` by ${inertLine(tool.title)}` : " during the turn";
    const files = Array.isArray(u.files) ? (u.files as { path?: string; state?: string; added?: number; removed?: number; diff?: string }[]) : [];
    const named = files.map((f) => {
      const counts = f.diff ? ` +${Number(f.added)} -${Number(f.removed)}` : " (not shown)";
      return `${inertLine(String(f.path ?? ""))} ${inertLine(String(f.state ?? "changed"))}${counts}`;
    });
    let text = `💾 Changed on disk${by}: ${named.join(", ")}\n`;
    for (const f of files) {
      if (!f.diff) continue;
      const body = inert(f.diff).replace(/\n$/, "");
      const longest = Math.max(2, ...(body.match(/`+/g) ?? []).map((run) => run.length));
      const fence = "`".repeat(longest + 1);
      text += `\n${fence}diff\n${body}\n${fence}\n`;
    }
    return text;
  }

  get seen(): number {
    return this.lastIndex;
  }

  /** Whether an event came that is not applied yet (beyond a gap). */
  get behind(): boolean {
    return this.highest > this.lastIndex;
  }

  get running(): boolean {
    return this.turn !== undefined;
  }

  get text(): string {
    const body = this.parts.map(partText);
    return `# ${this.title ?? `${this.context.agent?.() ?? "agent"} chat · ${this.sessionId}`}${body.join("")}${queueText(this.queue)}`;
  }

  /** A prompt sent from here waits for the running turn (unless its turn began already). */
  enqueue(messageId: string, text: string): void {
    if (!this.started.has(messageId)) this.queue.push({ id: messageId, text });
  }

  /** The tool calls so far, in the order they started. */
  get toolCalls(): ToolCall[] {
    return [...this.tools.values()];
  }

  /** Whether the event of `index` is the next one, which then counts as applied. One
   * shown already is a duplicate; one after a gap waits for the replay of what was
   * missed (applied first, it would make the replayed ones below it look like duplicates). */
  private next(index: number, event: { update?: Update; end?: TurnEnd }): boolean {
    this.highest = Math.max(this.highest, index);
    if (index <= this.lastIndex) return false;
    if (index > this.lastIndex + 1) {
      this.missed = true;
      this.held.set(index, event);
      return false;
    }
    this.lastIndex = index;
    return true;
  }

  /** The goose/replay asked for after a gap answered (`answered`; false: it failed): the
   * journal sent all it holds up to the events held, so those are applied in order, past
   * the indices it never had (a goose-ls killed mid-chat leaves such a gap). Returns
   * whether any was applied. */
  settle(answered: boolean): boolean {
    const held = [...this.held.entries()].sort(([a], [b]) => a - b);
    this.held.clear();
    if (!answered) return false;
    let applied = false;
    for (const [index, event] of held) {
      if (index <= this.lastIndex) continue; // the replay brought it
      this.lastIndex = index - 1;
      applied = (event.update ? this.apply(event.update) : this.end(event.end!)) || applied;
    }
    return applied;
  }

  /** Apply an update; returns false when it was already shown (a replay) or comes after
   * a gap (`missed`: it is held until the replay answers, see `settle`). */
  apply(params: Update): boolean {
    if (!this.next(params.index, { update: params })) return false;
    const before = this.unmarked(params.messageId) ? this.place : undefined; // its turn's first event
    if (params.messageId && !params.replay) this.start(params.messageId);
    const u = params.update;
    // A subagent's update goes into its block: its words, tool calls, cards and notes.
    const child = typeof u.subagentId === "string" ? u.subagentId : undefined;
    const who = child === undefined ? "agent" : `sub:${child}`;
    if (child !== undefined && u.sessionUpdate !== "subagent_update" && this.speaker !== who) {
      this.begin("subagent", who);
    }
    const image = (u.content as Content | undefined)?.type === "image";
    switch (image && u.sessionUpdate !== "user_message_chunk" ? "agent_image" : u.sessionUpdate) {
      case "subagent_update":
        if (child !== undefined) this.subagent(child, u);
        break;
      case "agent_image": // goose-ls's line for it, never agent text
        this.begin("image", who);
        this.add(`${imageLine(u.content as Content)}\n`);
        break;
      case "user_message_chunk":
        if (child !== undefined) {
          this.begin("task", who, "> 📋 Task: "); // the task its agent gave it
          this.agentText(this.textOf(u.content as Content), "> ");
          break;
        }
        this.begin("user", "user");
        this.add(this.textOf(u.content as Content, true) + "\n");
        break;
      case "agent_message_chunk":
        this.begin("agent", who);
        this.agentText(this.textOf(u.content as Content), "");
        break;
      case "agent_thought_chunk":
        this.begin("thought", who, "> 💭 ");
        this.agentText(this.textOf(u.content as Content), "> ");
        break;
      case "tool_call":
      case "tool_call_update":
        this.tool(u, who);
        break;
      case "permission_request":
        this.begin("permission", who);
        this.add(`🔐 permission: ${inertLine((u.toolCall as { title?: string } | undefined)?.title ?? "a tool")}\n`);
        break;
      case "elicitation_request":
        this.begin("question", who);
        this.add(`❓ ${inertLine(String(u.message))}\n${u.mode === "url" ? `\n${inertLine(String(u.url))}\n` : ""}`);
        break;
      case "elicitation_resolved":
        this.separate("question");
        this.add(`❓ ${OUTCOMES[u.action as string] ?? inertLine(String(u.action))}\n`);
        break;
      case "available_commands_update":
        this.commands = Array.isArray(u.availableCommands) ? (u.availableCommands as SlashCommand[]) : [];
        break;
      case "note":
        this.separate("note");
        this.add(`> ${inertLine(String(u.text))}\n`); // goose-ls's words, with the agent's in them: one line
        break;
      case "disk_changes":
        this.separate("disk");
        this.add(this.diskChanges(u));
        break;
      case "usage_update":
        this.usage = { used: Number(u.used), size: Number(u.size) };
        break;
      case "plan":
        this.draw("plan", checklist(u.entries));
        break;
      case "plan_update":
        this.draw(`plan:${String((u.plan as PlanDocument | undefined)?.planId)}`, planDocument((u.plan ?? {}) as PlanDocument, (at) => this.planFile(at)));
        break;
      case "plan_removed":
        this.draw(`plan:${String(u.planId)}`, "_Plan removed._\n");
        break;
      case "compaction_update":
      case "compaction_summary_chunk":
        this.draw(`compaction:${String(u.compactionId)}`, this.compactions.apply(u));
        break;
      case "session_info_update":
        if (typeof u.title === "string" && u.title.trim()) this.title = oneLine(u.title);
        break;
    }
    if (before) this.markStart(params.messageId!, before);
    return true;
  }

  end(params: TurnEnd): boolean {
    if (!this.next(params.index, { end: params })) return false;
    const id = params.messageId ?? "";
    this.queue = this.queue.filter((queued) => queued.id !== id); // cancelled while it waited
    if (this.joined.delete(id)) return this.markEnd(id); // it ended with the turn it joined, said just above
    if (this.turn === id) this.turn = undefined;
    this.block = "";
    this.speaker = undefined; // the next turn's agent is headed anew
    const outcome = params.error ?? params.stopReason;
    if (outcome !== "end_turn") this.add(`\n\n_${inertLine(String(outcome))}_`);
    this.add("\n");
    return this.markEnd(id);
  }

  /** Where text drawn next goes: the end of the last part (a tool call's or a plan's:
   * the part after it). */
  private get place(): Place {
    const last = this.parts.length - 1;
    const part = this.parts[last];
    return typeof part === "string" ? { part: last, at: part.length } : { part: last + 1, at: 0 };
  }

  /** Whether `messageId` names a turn not drawn here yet. */
  private unmarked(messageId: string | null): messageId is string {
    return !!messageId && !this.marks.some((m) => m.messageId === messageId);
  }

  /** The first event of a turn was drawn from `before` on: its turn begins there, unless
   * it drew nothing (a usage, a command list). */
  private markStart(messageId: string, before: Place): void {
    const after = this.place;
    if (after.part !== before.part || after.at !== before.at) this.marks.push({ messageId, start: before });
  }

  /** A turn ended: it ends where the text now ends (the line under it). */
  private markEnd(messageId: string): true {
    const turn = this.marks.find((m) => m.messageId === messageId);
    if (turn && !turn.end) turn.end = this.place;
    return true;
  }

  /** The turns drawn here, by their lines in `text` (0-based), in the order they began:
   * from the first line of a turn's first block (the blank lines before it are the turn
   * before's) to the blank line under its end. */
  get turns(): TurnLines[] {
    const lines = this.text.split("\n");
    // The line and column of each part's start, in order: the heading is line 0.
    const starts: { line: number; column: number }[] = [];
    let line = 0;
    let column = this.text.indexOf("\n") < 0 ? this.text.length : this.text.indexOf("\n");
    for (const part of this.parts) {
      starts.push({ line, column });
      const text = partText(part);
      const breaks = text.split("\n");
      line += breaks.length - 1;
      column = breaks.length > 1 ? breaks[breaks.length - 1].length : column + text.length;
    }
    starts.push({ line, column });
    const at = (place: Place): { line: number; column: number } => {
      const from = starts[Math.min(place.part, starts.length - 1)];
      const part = this.parts[place.part];
      if (typeof part !== "string") return from;
      const before = part.slice(0, place.at).split("\n");
      return before.length > 1 ? { line: from.line + before.length - 1, column: before[before.length - 1].length } : { line: from.line, column: from.column + place.at };
    };
    return this.marks.map((mark) => {
      const begin = at(mark.start);
      let start = begin.column > 0 ? begin.line + 1 : begin.line;
      while (start < lines.length - 1 && lines[start].trim() === "") start++;
      return { messageId: mark.messageId, start, end: mark.end && at(mark.end).line };
    });
  }

  /** The turn that line `line` (0-based) of `text` is in; undefined for a line in none
   * (the heading, a note between turns, the queued messages). A message sent into a
   * running turn is a turn of its own within it: the innermost wins. */
  turnAt(line: number): TurnLines | undefined {
    let found: TurnLines | undefined;
    for (const turn of this.turns) if (turn.start <= line && (turn.end === undefined || line <= turn.end)) found = turn;
    return found;
  }

  /** A turn had its first update: it leaves the queue. A queued message whose updates
   * come while another turn runs was sent into that turn. */
  private start(messageId: string): void {
    if (this.started.has(messageId)) return;
    this.started.add(messageId);
    this.queue = this.queue.filter((queued) => queued.id !== messageId);
    if (this.turn !== undefined) this.joined.add(messageId);
    else this.turn = messageId;
  }

  /** The first update of a block adds it at the end; later ones draw it where it is. */
  private draw(key: string, text: string): void {
    const drawn = this.drawn.get(key);
    if (drawn) return void (drawn.text = text);
    this.separate("block");
    this.drawn.set(key, { text });
    this.parts.push(this.drawn.get(key)!);
  }

  /** A subagent_update: the subagent's state kept, its heading drawn again where it is;
   * the first one begins its block. */
  private subagent(id: string, u: Update["update"]): void {
    const sub = this.subagents.get(id) ?? {};
    this.subagents.set(id, sub);
    const text = (key: string) => (typeof u[key] === "string" ? (u[key] as string) : undefined);
    sub.title = text("title");
    sub.description = text("description");
    sub.state = text("state");
    sub.stopReason = text("stopReason");
    if (sub.heading) sub.heading.text = subagentHeading(sub);
    else this.begin("subagent", `sub:${id}`);
  }

  /** The first update of a toolCallId adds its block at the end; later ones change it. */
  private tool(u: Update["update"], who = "agent"): void {
    const id = u.toolCallId as string;
    let tool = this.tools.get(id);
    if (!tool) {
      this.begin("tool", who);
      tool = { id, title: id, status: "pending", output: "" };
      this.tools.set(id, tool);
      this.parts.push(tool);
    }
    if (typeof u.title === "string") tool.title = u.title;
    if (typeof u.status === "string") tool.status = u.status;
    if (typeof u.name === "string") tool.name = u.name;
    if ("content" in u) tool.output = outputOf(u.content); // content replaces the earlier one
  }

  /** The names the chat heads turns with, as drawn. */
  private get speakers(): string[] {
    return ["You", this.context.agent?.() ?? "agent"];
  }

  /** Add text the agent controls: inert, each new line led by `lead` (the chat's own), and
   * a line that begins as the chat's own lines do led by a backslash. Chunks split lines
   * anywhere, so a line's beginning is judged as it is assembled, over chunks. */
  private agentText(text: string, lead: string): void {
    inert(text)
      .split("\n")
      .forEach((piece, n) => {
        if (n > 0) {
          this.add(`\n${lead}`);
          this.line = { part: this.parts.length - 1, at: (this.parts[this.parts.length - 1] as string).length, head: "", lead };
        }
        this.add(piece);
        const line = this.line;
        if (!line || line.head.length >= DECIDES) return;
        line.head += piece;
        if (imitates(line.lead + line.head, this.speakers)) {
          const part = this.parts[line.part] as string;
          this.parts[line.part] = `${part.slice(0, line.at)}\\${part.slice(line.at)}`;
          this.line = undefined;
        }
      });
  }

  private add(text: string): void {
    const last = this.parts.length - 1;
    if (typeof this.parts[last] === "string") this.parts[last] += text;
    else this.parts.push(text);
  }

  /** End the last block with a blank line; the next one is of this kind. */
  private separate(kind: string): void {
    this.block = kind;
    const last = this.parts[this.parts.length - 1];
    const tail = typeof last === "string" ? last : "\n";
    this.add(tail.endsWith("\n\n") ? "" : tail.endsWith("\n") ? "\n" : "\n\n");
  }

  /** Begin a block of `kind` at the end, `lead` first, unless a streamed one of the same
   * kind goes on. `who` says it (none: goose-ls's own lines); a new speaker's heading
   * ("You", the agent's own name, a subagent's heading under the agent's) comes first. */
  private begin(kind: string, who?: string, lead = ""): void {
    if (who && who !== this.speaker) {
      const child = who.startsWith("sub:") ? who.slice(4) : undefined;
      if (child !== undefined && (this.speaker === undefined || this.speaker === "user")) {
        this.speaker = "agent";
        this.separate(kind);
        this.add(`## ${this.context.agent?.() ?? "agent"}\n\n`);
      }
      this.speaker = who;
      this.separate(kind);
      if (child !== undefined) this.subagentBegins(child);
      else this.add(`## ${who === "user" ? "You" : (this.context.agent?.() ?? "agent")}\n\n`);
      this.add(lead);
    } else if (this.block !== kind || !STREAMED.has(kind)) {
      this.separate(kind);
      this.add(lead);
    } else {
      return; // the same streamed block goes on, and its line with it
    }
    const last = this.parts[this.parts.length - 1];
    this.line = lead || typeof last !== "string" ? undefined : { part: this.parts.length - 1, at: last.length, head: "", lead: "" };
  }

  /** A subagent's block begins: its heading (drawn again in place as its state changes),
   * the first time its description. */
  private subagentBegins(id: string): void {
    const sub = this.subagents.get(id) ?? {};
    this.subagents.set(id, sub);
    // An earlier block of it (its parent spoke between): its state is told below now.
    if (sub.heading) sub.heading.text = subagentHeading(sub, true);
    sub.heading = { text: subagentHeading(sub) };
    this.parts.push(sub.heading);
    const described = sub.description && !sub.described ? `> _${inertLine(sub.description)}_\n` : "";
    sub.described ||= Boolean(described);
    this.add(`${described}\n`);
  }

  /** Where each subagent's block is in the chat's text, for folding (0-based lines). */
  get folds(): { start: number; end: number }[] {
    return subagentFolds(this.text, this.speakers);
  }

  /** The file a plan names (a path or a file URI): a link when it is in a workspace
   * folder, else its path as text. The agent chose it: a link to anywhere else would put
   * whatever file it named one click from being opened. */
  private planFile(location: string): string {
    let path = location;
    try {
      if (location.startsWith("file:")) path = fileURLToPath(location);
    } catch {
      return codeSpan(inertLine(location)); // not a path this machine can name
    }
    if (!isAbsolute(path)) return codeSpan(inertLine(location));
    path = normalize(path);
    const folders = this.context.folders?.() ?? [];
    const shown = codeSpan(inertLine(shownPath(path, folders)));
    const inside = folders.some((folder) => {
      const under = relative(folder, path);
      return under && !under.startsWith("..") && !isAbsolute(under);
    });
    return inside ? `[${shown}](${pathToFileURL(path).href.replace(/\(/g, "%28").replace(/\)/g, "%29")})` : shown;
  }

  /** "📎 src/app.py:4-6" for a file URI with a "#L4-L6" fragment, "📎 src/app.py" without. */
  private attachment(uri: string): string {
    const [base, fragment = ""] = uri.split("#", 2);
    let path = base;
    try {
      if (base.startsWith("file:")) path = shownPath(fileURLToPath(base), this.context.folders?.() ?? []);
    } catch {
      // not a path this machine can name: shown as it came
    }
    const lines = /^L(\d+)(?:-L(\d+))?$/.exec(fragment);
    const last = lines?.[2] && lines[2] !== lines[1] ? `-${lines[2]}` : "";
    return `📎 ${path}${lines ? `:${lines[1]}${last}` : ""}`;
  }

  /** A message's content as the chat shows it; in the user's, attached context is 📎 lines:
   * the agent's own `<context ref="…">…</context>` wrapping (a resumed chat's history) and
   * goose-ls's "path:8-12" heading over a fenced block (for agents without embedded context). */
  private textOf(content: Content, user = false): string {
    if (content.type === "image") {
      const from = typeof content.source === "string" ? `${this.attachment(content.source)} (image)\n` : "";
      return from + imageLine(content);
    }
    if (content.type === "resource_link") return this.attachment(content.uri ?? content.name ?? "");
    if (content.type === "resource") return this.attachment(content.resource?.uri ?? "");
    if (content.type !== "text") return `[${content.type}]`;
    const text = content.text ?? "";
    if (!user) return text;
    // A resumed chat's user messages are replayed by the agent: inert, no line of ours.
    const safe = ownLinesEscaped(inert(text), this.speakers);
    const fenced = /^(\/[^\n]*):(\d+)-(\d+)\n```[\s\S]*```\s*$/.exec(safe);
    if (fenced) return this.attachment(`${pathToFileURL(fenced[1]).href}#L${fenced[2]}-L${fenced[3]}`);
    return safe.replace(/\n?<context ref="([^"]*)">[\s\S]*?<\/context>/g, (_, uri: string) => `\n${this.attachment(uri)}`);
  }
}
