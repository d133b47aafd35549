// The chat model: goose/* notifications in, markdown out. No vscode import, so it is
// unit-tested under plain node.
import { checklist, Compactions, planDocument, type PlanDocument, type Queued, queueText } from "./blocks";

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
}

function textOf(content: Content): string {
  if (content.type === "text") return content.text ?? "";
  if (content.type === "resource_link") return `[${content.name ?? content.uri}]`;
  if (content.type === "resource") return `📎 ${content.resource?.uri ?? ""}`;
  return `[${content.type}]`;
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
    .filter((item) => item?.type === "content" && item.content?.type === "text")
    .map((item) => String(item.content.text));
  return texts.join("\n").replace(/\n+$/, "");
}

/** A status line (the tool's own name beside its title when it differs), then the output
 * as an indented (code) block under it. */
export function renderTool(tool: ToolCall): string {
  const name = tool.name && tool.name !== tool.title ? ` · \`${tool.name}\`` : "";
  const line = `🔧 ${tool.title}${name} — ${tool.status}\n`;
  if (!tool.output) return line;
  return `${line}\n${tool.output.split("\n").map((l) => `    ${l}`).join("\n")}\n`;
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

const OUTCOMES: Record<string, string> = { accept: "answered", decline: "declined", cancel: "cancelled" };

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
  /** An event came after a gap and was not applied: the events after `seen` are to be
   * asked for again (goose/replay), which sends them and that one, in order. */
  missed = false;

  constructor(readonly sessionId: string) {}

  get seen(): number {
    return this.lastIndex;
  }

  get running(): boolean {
    return this.turn !== undefined;
  }

  get text(): string {
    const body = this.parts.map((part) => (typeof part === "string" ? part : "text" in part ? part.text : renderTool(part)));
    return `# ${this.title ?? `goose chat · ${this.sessionId}`}${body.join("")}${queueText(this.queue)}`;
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
  private next(index: number): boolean {
    if (index <= this.lastIndex) return false;
    if (index > this.lastIndex + 1) {
      this.missed = true;
      return false;
    }
    this.lastIndex = index;
    return true;
  }

  /** Apply an update; returns false when it was already shown (a replay) or comes after
   * a gap (`missed`). */
  apply(params: Update): boolean {
    if (!this.next(params.index)) return false;
    if (params.messageId && !params.replay) this.start(params.messageId);
    const u = params.update;
    switch (u.sessionUpdate) {
      case "user_message_chunk":
        this.open("user", "## You\n\n");
        this.add(textOf(u.content as Content) + "\n");
        break;
      case "agent_message_chunk":
        this.open("agent", "## goose\n\n");
        this.add(textOf(u.content as Content));
        break;
      case "agent_thought_chunk":
        this.open("thought", "> 💭 ");
        this.add(textOf(u.content as Content).replace(/\n/g, "\n> "));
        break;
      case "tool_call":
      case "tool_call_update":
        this.tool(u);
        break;
      case "permission_request":
        this.separate("permission");
        this.add(`🔐 permission: ${(u.toolCall as { title?: string } | undefined)?.title ?? "a tool"}\n`);
        break;
      case "elicitation_request":
        this.separate("question");
        this.add(`❓ ${u.message as string}\n${u.mode === "url" ? `\n${u.url as string}\n` : ""}`);
        break;
      case "elicitation_resolved":
        this.separate("question");
        this.add(`❓ ${OUTCOMES[u.action as string] ?? (u.action as string)}\n`);
        break;
      case "available_commands_update":
        this.commands = Array.isArray(u.availableCommands) ? (u.availableCommands as SlashCommand[]) : [];
        break;
      case "note":
        this.separate("note");
        this.add(`> ${u.text as string}\n`);
        break;
      case "usage_update":
        this.usage = { used: Number(u.used), size: Number(u.size) };
        break;
      case "plan":
        this.draw("plan", checklist(u.entries));
        break;
      case "plan_update":
        this.draw(`plan:${String((u.plan as PlanDocument | undefined)?.planId)}`, planDocument((u.plan ?? {}) as PlanDocument));
        break;
      case "plan_removed":
        this.draw(`plan:${String(u.planId)}`, "_Plan removed._\n");
        break;
      case "compaction_update":
      case "compaction_summary_chunk":
        this.draw(`compaction:${String(u.compactionId)}`, this.compactions.apply(u));
        break;
      case "session_info_update":
        if (typeof u.title === "string" && u.title.trim()) this.title = u.title.trim().replace(/\s+/g, " ");
        break;
    }
    return true;
  }

  end(params: TurnEnd): boolean {
    if (!this.next(params.index)) return false;
    const id = params.messageId ?? "";
    this.queue = this.queue.filter((queued) => queued.id !== id); // cancelled while it waited
    if (this.joined.delete(id)) return true; // it ended with the turn it joined, said just above
    if (this.turn === id) this.turn = undefined;
    this.block = "";
    const outcome = params.error ?? params.stopReason;
    if (outcome !== "end_turn") this.add(`\n\n_${outcome}_`);
    this.add("\n");
    return true;
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

  /** The first update of a toolCallId adds its block at the end; later ones change it. */
  private tool(u: Update["update"]): void {
    const id = u.toolCallId as string;
    let tool = this.tools.get(id);
    if (!tool) {
      this.separate("tool");
      tool = { id, title: id, status: "pending", output: "" };
      this.tools.set(id, tool);
      this.parts.push(tool);
    }
    if (typeof u.title === "string") tool.title = u.title;
    if (typeof u.status === "string") tool.status = u.status;
    if (typeof u.name === "string") tool.name = u.name;
    if ("content" in u) tool.output = outputOf(u.content); // content replaces the earlier one
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

  private open(kind: string, heading: string): void {
    if (this.block !== kind) {
      this.separate(kind);
      this.add(heading);
    }
  }
}
