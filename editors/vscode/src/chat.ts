// The chat model: goose/* notifications in, markdown out. No vscode import, so it is
// unit-tested under plain node.

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
  status: string;
  output: string;
}

/** The text items of a tool call's content, joined; "" when it has none. */
function outputOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const texts = content
    .filter((item) => item?.type === "content" && item.content?.type === "text")
    .map((item) => String(item.content.text));
  return texts.join("\n").replace(/\n+$/, "");
}

/** A status line, then the output as an indented (code) block under it. */
export function renderTool(tool: ToolCall): string {
  const line = `🔧 ${tool.title} — ${tool.status}\n`;
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
 * One session's chat, as markdown; events are applied once each, in index order.
 * Text only grows at the end, except a tool call's block, which each update of its
 * toolCallId rewrites where it is.
 */
export class Chat {
  private lastIndex = 0;
  private block = "";
  private readonly parts: (string | ToolCall)[];
  private readonly tools = new Map<string, ToolCall>();
  /** How full the context is: the agent's last usage_update. */
  usage: { used: number; size: number } | undefined;
  /** A turn had an update and has not ended. */
  running = false;
  /** The agent's slash commands (its last available_commands_update). */
  commands: SlashCommand[] = [];

  constructor(readonly sessionId: string) {
    this.parts = [`# goose chat · ${sessionId}\n`];
  }

  get seen(): number {
    return this.lastIndex;
  }

  get text(): string {
    return this.parts.map((part) => (typeof part === "string" ? part : renderTool(part))).join("");
  }

  /** The tool calls so far, in the order they started. */
  get toolCalls(): ToolCall[] {
    return [...this.tools.values()];
  }

  /** Apply an update; returns false when it was already shown (a replay). */
  apply(params: Update): boolean {
    if (params.index <= this.lastIndex) return false;
    this.lastIndex = params.index;
    if (params.messageId) this.running = true;
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
    }
    return true;
  }

  end(params: TurnEnd): boolean {
    if (params.index <= this.lastIndex) return false;
    this.lastIndex = params.index;
    this.running = false;
    this.block = "";
    const outcome = params.error ?? params.stopReason;
    if (outcome !== "end_turn") this.add(`\n\n_${outcome}_`);
    this.add("\n");
    return true;
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
