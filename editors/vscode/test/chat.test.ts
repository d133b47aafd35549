import assert from "node:assert/strict";
import { test } from "node:test";
import { Chat, optionLabel } from "../src/chat";

const update = (index: number, u: object) => ({ sessionId: "s1", messageId: "m1", index, update: u as never });

test("chunks stream into the chat in order, each once", () => {
  const chat = new Chat("s1");
  assert.ok(chat.apply(update(1, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Hi?" } })));
  assert.ok(chat.apply(update(2, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } })));
  assert.ok(chat.apply(update(3, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo ✓" } })));
  assert.equal(chat.apply(update(2, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } })), false);
  assert.ok(chat.end({ sessionId: "s1", messageId: "m1", index: 4, stopReason: "end_turn" }));
  assert.equal(chat.text, "# goose chat · s1\n\n## You\n\nHi?\n\n## goose\n\nHello ✓\n");
  assert.equal(chat.seen, 4);
});

test("a cancelled turn says so", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "par" } }));
  chat.end({ sessionId: "s1", messageId: "m1", index: 2, stopReason: "cancelled" });
  assert.match(chat.text, /par\n\n_cancelled_\n$/);
});

test("permission buttons come from the kind, or the agent's own names", () => {
  assert.equal(optionLabel({ optionId: "allow_once", name: "allow_once", kind: "allow_once" }), "Allow once");
  assert.equal(optionLabel({ optionId: "reject", name: "No", kind: "reject_once" }), "No");
  assert.equal(optionLabel({ optionId: "x", name: "x", kind: "reject_always" }), "Reject always");
});
