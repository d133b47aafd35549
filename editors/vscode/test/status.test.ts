import assert from "node:assert/strict";
import { test } from "node:test";
import { Chat } from "../src/chat";
import { statusText, tokens } from "../src/status";

test("token counts are short: 950, 12k, 200k, 1.2M, 2M", () => {
  assert.deepEqual([950, 12_345, 200_000, 999_999, 1_234_567, 2_000_000].map(tokens), ["950", "12k", "200k", "1M", "1.2M", "2M"]);
});

test("the status tells the turn's state, then how full the context is once some is used", () => {
  const chat = new Chat("s1");
  const update = (index: number, messageId: string | null, u: object) => ({ sessionId: "s1", messageId, index, update: u as never });
  chat.apply(update(1, null, { sessionUpdate: "usage_update", used: 0, size: 200000 }));
  assert.equal(statusText(chat, "goose"), "goose: idle");
  chat.apply(update(2, "m1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } }));
  chat.apply(update(3, "m1", { sessionUpdate: "usage_update", used: 12345, size: 200000, cost: { amount: 0.4, currency: "USD" } }));
  assert.equal(statusText(chat, "Claude Agent"), "Claude Agent: running · 12k/200k", "after the agent's name");
  chat.end({ sessionId: "s1", messageId: "m1", index: 4, stopReason: "end_turn" });
  assert.equal(statusText(chat, "goose"), "goose: idle · 12k/200k");
  assert.equal(statusText(undefined), "agent: idle");
});
