// The status bar's words: the current chat's state and how full its context is. No vscode
// import, so it is unit-tested under plain node.
import type { Chat } from "./chat";

/** A token count in a few characters: 950, 12k, 1.2M. */
export function tokens(n: number): string {
  if (n >= 999_500) return `${(n / 1e6).toFixed(1).replace(/\.0$/, "")}M`;
  if (n >= 1000) return `${Math.floor(n / 1000 + 0.5)}k`;
  return `${Math.floor(n)}`;
}

/** "goose: idle · 12k/200k", after the agent's name: the context's part once the chat has
 * used some of it. */
export function statusText(chat: Chat | undefined, agent = "agent"): string {
  const state = `${agent}: ${chat?.running ? "running" : "idle"}`;
  const usage = chat?.usage;
  return usage && usage.used > 0 ? `${state} · ${tokens(usage.used)}/${tokens(usage.size)}` : state;
}
