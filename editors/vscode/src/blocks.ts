// Blocks of a chat that are drawn again where they are as they change: the agent's plans
// and its compactions of the conversation, worded as goose-ls's own transcript words them;
// and the messages waiting for the running turn. No vscode import, so it is unit-tested
// under plain node.
import { inert, inertLine, ownLinesEscaped } from "./inert";

interface Entry {
  content?: unknown;
  status?: unknown;
}

/** A plan as a checklist under its heading; entries that are not objects are skipped. */
export function checklist(entries: unknown, head = "**Plan**"): string {
  const lines = [head];
  for (const entry of Array.isArray(entries) ? (entries as unknown[]) : []) {
    if (entry === null || typeof entry !== "object") continue;
    const { content, status } = entry as Entry;
    lines.push(`- [${status === "completed" ? "x" : " "}] ${inertLine(String(content ?? ""))}`);
  }
  return `${lines.join("\n")}\n`;
}

export interface PlanDocument {
  type?: unknown;
  planId?: unknown;
  entries?: unknown;
  content?: unknown;
  path?: unknown;
  uri?: unknown;
}

/** `text` as inline code, whatever backticks it holds. */
export function codeSpan(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** One plan of several (plan_update): a checklist, markdown (and the file it names), or a
 * file; a plan of a kind goose-ls does not know by what it carries of those. `file` shows
 * the file a plan names (a path or a file URI). */
export function planDocument(plan: PlanDocument, file: (location: string) => string): string {
  if (plan.type === "items") return checklist(plan.entries);
  if (plan.type === "file") return `**Plan**: ${file(String(plan.uri ?? ""))}\n`;
  let head = "**Plan**";
  if (plan.type !== "markdown") head += ` of a kind goose-ls does not know: ${codeSpan(inertLine(String(plan.type)))}`;
  const where = plan.path ?? plan.uri;
  if (typeof where === "string") head += ` · ${file(where)}`;
  if (plan.type !== "markdown" && Array.isArray(plan.entries)) return checklist(plan.entries, head);
  const content = typeof plan.content === "string" ? plan.content.trim() : "";
  return content ? `${head}\n\n${ownLinesEscaped(inert(content), [])}\n` : `${head}\n`;
}

const COMPACTION_WORDS: Record<string, string> = {
  in_progress: "🗜 Compacting the conversation…",
  completed: "🗜 The conversation was compacted.",
  cancelled: "🗜 Compacting the conversation was cancelled.",
};

function textOf(blocks: unknown): string {
  if (!Array.isArray(blocks)) return "";
  return blocks.map((b) => (b?.type === "text" ? String(b.text ?? "") : "")).join("");
}

interface CompactionState {
  status: string;
  error?: string;
  summary?: unknown;
  streamed: string;
}

/** Each compaction of a chat: where it stands and the summary streamed so far. */
export class Compactions {
  private readonly states = new Map<string, CompactionState>();

  /** Take a compaction_update or compaction_summary_chunk; the compaction's block. */
  apply(u: { sessionUpdate: string; [key: string]: unknown }): string {
    const id = String(u.compactionId);
    const state = this.states.get(id) ?? { status: "in_progress", streamed: "" };
    if (u.sessionUpdate === "compaction_update") {
      state.status = String(u.status);
      state.error = typeof u.error === "string" ? u.error : undefined;
      state.summary = u.summary;
    } else {
      state.streamed += textOf([u.content]);
    }
    this.states.set(id, state);
    return render(state);
  }
}

/** Where a compaction stands, and the summary the agent kept (or streams) under it. */
function render(state: CompactionState): string {
  if (state.status === "failed") return `> ⚠ **Compacting the conversation failed:** ${inertLine(state.error ?? "no reason given")}\n`;
  const text = `_${COMPACTION_WORDS[state.status] ?? `🗜 Compaction: ${inertLine(state.status)}`}_\n`;
  const summary = ownLinesEscaped(inert((textOf(state.summary) || state.streamed).trim()), []);
  return summary ? `${text}\n> ${summary.replace(/\n/g, "\n> ")}\n` : text;
}

export interface Queued {
  id: string;
  text: string;
}

/** The messages waiting for the running turn, after the chat: "⏳ queued 1: first line …". */
export function queueText(queue: Queued[]): string {
  const lines = queue.map(({ text }, i) => {
    const [first, ...more] = text.split("\n");
    return `⏳ queued ${i + 1}: ${first}${more.length ? " …" : ""}`;
  });
  return lines.length ? `\n${lines.join("\n")}\n` : "";
}
