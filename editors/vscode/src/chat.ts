// The chat model: goose/* notifications in, markdown out. No vscode import, so it is
// unit-tested under plain node.

export interface Update {
  sessionId: string;
  messageId: string | null;
  index: number;
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
}

const LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_always: "Allow always",
  reject_once: "Reject",
  reject_always: "Reject always",
};

/** A human label: the agent's own name when it gave one, else one from the kind. */
export function optionLabel(option: PermissionOption): string {
  if (option.name !== option.kind && option.name !== option.optionId) return option.name;
  return LABELS[option.kind] ?? option.name;
}

function textOf(content: { type?: string; text?: string; uri?: string; resource?: { uri?: string } }): string {
  if (content.type === "text") return content.text ?? "";
  if (content.type === "resource_link") return `[${content.uri}]`;
  if (content.type === "resource") return `📎 ${content.resource?.uri ?? ""}`;
  return `[${content.type}]`;
}

/** One session's chat, as markdown; events are applied once each, in index order. */
export class Chat {
  private lastIndex = 0;
  private block = "";
  text: string;

  constructor(readonly sessionId: string) {
    this.text = `# goose chat · ${sessionId}\n`;
  }

  get seen(): number {
    return this.lastIndex;
  }

  /** Apply an update; returns false when it was already shown (a replay). */
  apply(params: Update): boolean {
    if (params.index <= this.lastIndex) return false;
    this.lastIndex = params.index;
    const u = params.update;
    switch (u.sessionUpdate) {
      case "user_message_chunk":
        this.open("user", "\n## You\n\n");
        this.text += textOf(u.content as object) + "\n";
        break;
      case "agent_message_chunk":
        this.open("agent", "\n## goose\n\n");
        this.text += textOf(u.content as object);
        break;
      case "agent_thought_chunk":
        this.open("thought", "\n> 💭 ");
        this.text += textOf(u.content as object).replace(/\n/g, "\n> ");
        break;
      case "tool_call":
        this.block = "tool";
        this.text += `\n\n🔧 ${u.title as string}\n`;
        break;
      case "tool_call_update":
        if (u.status) this.text += `🔧 ${u.toolCallId as string}: ${u.status as string}\n`;
        break;
      case "note":
        this.block = "note";
        this.text += `\n> ${u.text as string}\n`;
        break;
    }
    return true;
  }

  end(params: TurnEnd): boolean {
    if (params.index <= this.lastIndex) return false;
    this.lastIndex = params.index;
    this.block = "";
    const outcome = params.error ?? params.stopReason;
    if (outcome !== "end_turn") this.text += `\n\n_${outcome}_`;
    this.text += "\n";
    return true;
  }

  private open(kind: string, heading: string): void {
    if (this.block !== kind) {
      this.text += heading;
      this.block = kind;
    }
  }
}
