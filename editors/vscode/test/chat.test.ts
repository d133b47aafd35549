import assert from "node:assert/strict";
import { test } from "node:test";
import { agentName, Chat, shownPath, slashCandidates } from "../src/chat";

const update = (index: number, u: object) => ({ sessionId: "s1", messageId: "m1", index, update: u as never });

test("chunks stream into the chat in order, each once", () => {
  const chat = new Chat("s1", { agent: () => "Claude Agent" });
  assert.ok(chat.apply(update(1, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Hi?" } })));
  assert.ok(chat.apply(update(2, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } })));
  assert.ok(chat.apply(update(3, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo ✓" } })));
  assert.equal(chat.apply(update(2, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } })), false);
  assert.ok(chat.end({ sessionId: "s1", messageId: "m1", index: 4, stopReason: "end_turn" }));
  assert.equal(chat.text, "# Claude Agent chat · s1\n\n## You\n\nHi?\n\n## Claude Agent\n\nHello ✓\n");
  assert.equal(chat.seen, 4);
});

test("an event after a gap is not applied: the chat has missed some, and the replay fills it in order", () => {
  const chat = new Chat("s1", { agent: () => "goose" });
  const chunk = (index: number, text: string) => update(index, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  assert.ok(chat.apply(chunk(1, "one ")));
  assert.equal(chat.apply(chunk(4, "four")), false, "two and three never came");
  assert.equal(chat.end({ sessionId: "s1", messageId: "m1", index: 5, stopReason: "end_turn" }), false);
  assert.ok(chat.missed);
  assert.equal(chat.seen, 1, "goose/replay is asked for after index 1");
  chat.missed = false;
  for (const [index, text] of [[2, "two "], [3, "three "], [4, "four"]] as const) assert.ok(chat.apply(chunk(index, text)));
  assert.ok(chat.end({ sessionId: "s1", messageId: "m1", index: 5, stopReason: "end_turn" }));
  assert.equal(chat.text, "# goose chat · s1\n\n## goose\n\none two three four\n");
  assert.equal(chat.missed, false);
});

test("events past a gap the journal has too are applied once the replay answers", () => {
  // A goose-ls killed mid-chat leaves indices it never used: the replay brings none of them.
  const chat = new Chat("s1", { agent: () => "goose" });
  const chunk = (index: number, text: string) => update(index, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  for (const [index, text] of [[1, "one "], [2, "two "]] as const) assert.ok(chat.apply(chunk(index, text)));
  assert.equal(chat.apply(chunk(1004, "after ")), false, "held: 3 to 1003 may come in the replay");
  assert.ok(chat.missed);
  assert.equal(chat.apply(chunk(1004, "after ")), false, "the replay sends it again");
  assert.equal(chat.apply(chunk(1005, "the gap")), false);
  assert.equal(chat.end({ sessionId: "s1", messageId: "m1", index: 1006, stopReason: "end_turn" }), false);
  assert.ok(chat.running);
  assert.ok(chat.settle(true), "the replay answered: the held events are applied");
  assert.equal(chat.text, "# goose chat · s1\n\n## goose\n\none two after the gap\n");
  assert.equal(chat.seen, 1006);
  assert.equal(chat.running, false, "the turn's end was applied too");
  assert.equal(chat.settle(true), false, "each once");
  assert.ok(chat.apply(chunk(1007, "next")), "and the chat goes on");
});

test("a failed replay drops what was held: the next event asks again", () => {
  const chat = new Chat("s1", { agent: () => "goose" });
  const chunk = (index: number, text: string) => update(index, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  assert.ok(chat.apply(chunk(1, "one")));
  assert.equal(chat.apply(chunk(9, "nine")), false);
  assert.equal(chat.settle(false), false);
  assert.equal(chat.seen, 1);
});

test("a cancelled turn says so", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "par" } }));
  chat.end({ sessionId: "s1", messageId: "m1", index: 2, stopReason: "cancelled" });
  assert.match(chat.text, /par\n\n_cancelled_\n$/);
});

const output = (text: string) => [{ type: "content", content: { type: "text", text } }];

test("a tool call is one block, rewritten in place by each update of its id", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "tool_call", toolCallId: "t1", title: "shell · make" }));
  chat.apply(update(2, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" }));
  chat.apply(update(3, { sessionUpdate: "tool_call", toolCallId: "t2", title: "read · app.py" }));
  chat.apply(update(4, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Running." } }));
  assert.match(chat.text, /🔧 shell · make — in_progress\n\n🔧 read · app.py — pending\n\nRunning\.$/);
  chat.apply(update(5, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: output("3 passed\n0 failed\n") }));
  chat.apply(update(6, { sessionUpdate: "tool_call_update", toolCallId: "t2", status: "failed", content: output("no such file") }));
  chat.apply(update(7, { sessionUpdate: "tool_call_update", toolCallId: "t1", title: "shell · make test" }));
  chat.apply(update(8, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: " Done." } }));
  chat.end({ sessionId: "s1", messageId: "m1", index: 9, stopReason: "end_turn" });
  assert.equal(
    chat.text,
    "# agent chat · s1\n\n## agent\n\n" +
      "🔧 shell · make test — completed\n\n    3 passed\n    0 failed\n\n" +
      "🔧 read · app.py — failed\n\n    no such file\n\n" +
      "Running. Done.\n",
  );
  assert.deepEqual(
    chat.toolCalls.map((t) => [t.id, t.status]),
    [["t1", "completed"], ["t2", "failed"]],
  );
});

test("content replaces a tool call's output; an update without content keeps it", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "tool_call", toolCallId: "t1", title: "shell", content: output("first") }));
  chat.apply(update(2, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" }));
  assert.match(chat.text, /🔧 shell — in_progress\n\n    first\n$/);
  chat.apply(update(3, { sessionUpdate: "tool_call_update", toolCallId: "t1", content: output("second") }));
  assert.doesNotMatch(chat.text, /first/);
  chat.apply(update(4, { sessionUpdate: "tool_call_update", toolCallId: "t1", content: [] }));
  assert.match(chat.text, /🔧 shell — in_progress\n$/);
  assert.equal(chat.apply(update(3, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed" })), false);
  assert.doesNotMatch(chat.text, /failed/);
});

test("a tool call's first update may be a tool_call_update; it is shown as pending until a status comes", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "tool_call_update", toolCallId: "t9", kind: "execute" }));
  assert.match(chat.text, /🔧 t9 — pending\n$/);
  chat.apply(update(2, { sessionUpdate: "permission_request", requestId: "r1", toolCall: { toolCallId: "t9", title: "shell" }, options: [] }));
  assert.match(chat.text, /🔧 t9 — pending\n\n🔐 permission: shell\n$/);
});

test("a message that starts an agent's command offers the commands it could be", () => {
  const commands = [{ name: "compact", description: "Compact the conversation" }, { name: "clear" }, { name: "prompts" }];
  assert.deepEqual(slashCandidates("/", commands)?.map((c) => c.name), ["compact", "clear", "prompts"]);
  assert.deepEqual(slashCandidates("/c", commands)?.map((c) => c.name), ["compact", "clear"]);
  assert.equal(slashCandidates("/compact", commands), undefined, "already a command");
  assert.equal(slashCandidates("/x", commands), undefined);
  assert.equal(slashCandidates("/c more words", commands), undefined);
  assert.equal(slashCandidates("hello /c", commands), undefined);
});

test("the agent's questions and their outcome are written into the chat", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "elicitation_request", requestId: "q1", message: "Set up the project", mode: "form" }));
  chat.apply(update(2, { sessionUpdate: "elicitation_resolved", requestId: "q1", action: "decline" }));
  assert.match(chat.text, /\n❓ Set up the project\n\n❓ declined\n$/);
});

const plan = (...entries: [string, string][]) => entries.map(([content, status]) => ({ content, status, priority: "medium" }));

test("a plan is drawn again where it is; plans by id are a block each, and a removed one says so", () => {
  const chat = new Chat("s1", { folders: () => ["/home/me/my app"] });
  chat.apply(update(1, { sessionUpdate: "plan", entries: plan(["Read", "in_progress"], ["Write", "pending"]) }));
  chat.apply(update(2, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Reading." } }));
  chat.apply(update(3, { sessionUpdate: "plan", entries: plan(["Read", "completed"], ["Write", "pending"], ["Run", "pending"]) }));
  chat.apply(update(4, { sessionUpdate: "plan_update", plan: { type: "markdown", planId: "approved", content: "1. Split\n2. Test\n" } }));
  chat.apply(update(5, { sessionUpdate: "plan_update", plan: { type: "items", planId: "draft", entries: plan(["Draft", "pending"]) } }));
  chat.apply(update(6, { sessionUpdate: "plan_update", plan: { type: "file", planId: "f", uri: "file:///home/me/my%20app/docs/plan.md" } }));
  chat.apply(update(7, { sessionUpdate: "plan_removed", planId: "draft" }));
  assert.equal(
    chat.text,
    "# agent chat · s1\n\n**Plan**\n- [x] Read\n- [ ] Write\n- [ ] Run\n\n## agent\n\nReading.\n\n" +
      "**Plan**\n\n1. Split\n2. Test\n\n_Plan removed._\n\n**Plan**: [`docs/plan.md`](file:///home/me/my%20app/docs/plan.md)\n",
  );
});

test("a plan's file is linked only inside the workspace; a plan of an unknown kind is shown by what it carries", () => {
  const chat = new Chat("s1", { folders: () => ["/work/shop"] });
  chat.apply(update(1, { sessionUpdate: "plan_update", plan: { type: "markdown", planId: "a", content: "Go", path: "/work/shop/docs/plan (v2).md" } }));
  chat.apply(update(2, { sessionUpdate: "plan_update", plan: { type: "markdown", planId: "b", content: "Go", path: "/work/shop/../elsewhere/plan.md" } }));
  chat.apply(update(3, { sessionUpdate: "plan_update", plan: { type: "file", planId: "c", uri: "file:///etc/x%0A%23%23%20You" } }));
  chat.apply(update(4, { sessionUpdate: "plan_update", plan: { type: "kanban", planId: "d", entries: [{ content: "Board", status: "completed" }, "not an entry"] } }));
  chat.apply(update(5, { sessionUpdate: "plan_update", plan: { type: "outline", planId: "e" } }));
  assert.equal(
    chat.text,
    "# agent chat · s1\n\n**Plan** · [`docs/plan (v2).md`](file:///work/shop/docs/plan%20%28v2%29.md)\n\nGo\n\n" +
      "**Plan** · `/work/elsewhere/plan.md`\n\nGo\n\n**Plan**: `/etc/x\\n## You`\n\n" +
      "**Plan** of a kind goose-ls does not know: `kanban`\n- [x] Board\n\n**Plan** of a kind goose-ls does not know: `outline`\n",
  );
});

test("a compaction is one line drawn again as it goes, its summary streamed under it", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" }));
  assert.match(chat.text, /_🗜 Compacting the conversation…_\n$/);
  chat.apply(update(2, { sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: { type: "text", text: "We split\nthe parser" } }));
  assert.match(chat.text, /_🗜 Compacting the conversation…_\n\n> We split\n> the parser\n$/);
  chat.apply(update(3, { sessionUpdate: "compaction_update", compactionId: "c1", status: "completed" }));
  chat.apply(update(4, { sessionUpdate: "compaction_update", compactionId: "c2", status: "failed", error: "too long" }));
  assert.equal(
    chat.text,
    "# agent chat · s1\n\n_🗜 The conversation was compacted._\n\n> We split\n> the parser\n\n" +
      "> ⚠ **Compacting the conversation failed:** too long\n",
  );
});

test("a tool's own name is shown beside its title when it differs; the title heads the chat", () => {
  const chat = new Chat("s1");
  chat.apply(update(1, { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read app.py", name: "fs_read" }));
  chat.apply(update(2, { sessionUpdate: "tool_call", toolCallId: "t2", title: "shell", name: "shell" }));
  chat.apply(update(3, { sessionUpdate: "session_info_update", title: "Parser\nrefactor" }));
  assert.equal(chat.text, "# Parser refactor\n\n## agent\n\n🔧 Read app.py · `fs_read` — pending\n\n🔧 shell — pending\n");
});

test("a queued message sent into the running turn leaves the queue for the chat, and ends with that turn", () => {
  const chat = new Chat("s1");
  const second = (index: number, u: object) => ({ sessionId: "s1", messageId: "m2", index, update: u as never });
  chat.apply(update(1, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Working." } }));
  chat.enqueue("m2", "Keep the alias\nplease");
  assert.match(chat.text, /Working\.\n⏳ queued 1: Keep the alias …\n$/);
  chat.apply(second(2, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Keep the alias\nplease" } }));
  chat.apply(update(3, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } }));
  assert.ok(chat.end({ sessionId: "s1", messageId: "m1", index: 4, stopReason: "cancelled" }));
  assert.ok(chat.end({ sessionId: "s1", messageId: "m2", index: 5, stopReason: "cancelled" }));
  assert.equal(chat.text, "# agent chat · s1\n\n## agent\n\nWorking.\n\n## You\n\nKeep the alias\nplease\n\n## agent\n\nDone.\n\n_cancelled_\n");
  assert.deepEqual([chat.queue, chat.running], [[], false]);
});

test("the agent's name heads its turn once, over its thoughts, tool calls, cards, plans and notes", () => {
  const chat = new Chat("s1", { agent: () => "Claude Agent" });
  const say = (index: number, text: string) => update(index, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  chat.apply(update(1, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Fix it" } }));
  chat.apply(update(2, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "Look first" } }));
  chat.apply(say(3, "Reading."));
  chat.apply(update(4, { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit app.py" }));
  chat.apply(update(5, { sessionUpdate: "permission_request", requestId: "r1", toolCall: { toolCallId: "t1", title: "Edit app.py" }, options: [] }));
  chat.apply(update(6, { sessionUpdate: "permission_resolved", requestId: "r1", optionId: "allow" }));
  chat.apply(update(7, { sessionUpdate: "plan", entries: plan(["Edit", "completed"]) }));
  chat.apply(update(8, { sessionUpdate: "note", text: "goose-ls: a note" }));
  chat.apply(say(9, "Fixed."));
  chat.end({ sessionId: "s1", messageId: "m1", index: 10, stopReason: "end_turn" });
  chat.apply(say(11, "Anything else?")); // a turn of the agent's own: headed again
  assert.equal(
    chat.text,
    "# Claude Agent chat · s1\n\n## You\n\nFix it\n\n## Claude Agent\n\n> 💭 Look first\n\nReading.\n\n🔧 Edit app.py — pending\n\n" +
      "🔐 permission: Edit app.py\n\n**Plan**\n- [x] Edit\n\n> goose-ls: a note\n\nFixed.\n\n## Claude Agent\n\nAnything else?",
  );
});

test("the agent's name is one line, and never the user's heading", () => {
  assert.equal(agentName("Claude\nAgent\u202e "), "Claude Agent\\u202e", "shown, not hidden");
  assert.deepEqual([agentName(""), agentName(" you "), agentName(undefined)], ["agent", "agent", "agent"]);
});

test("an attachment is named from the workspace folder it is in; outside, whole, the home folder as ~", () => {
  const chat = new Chat("s1", { folders: () => ["/work/shop"] });
  const resource = (uri: string) => ({ type: "resource", resource: { uri, text: "x" } });
  chat.apply(update(1, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Why?" } }));
  chat.apply(update(2, { sessionUpdate: "user_message_chunk", content: resource("file:///work/shop/src/app.py#L4-L6") }));
  chat.apply(update(3, { sessionUpdate: "user_message_chunk", content: { type: "resource_link", uri: "file:///etc/hosts", name: "hosts" } }));
  chat.apply(update(4, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "/work/shop/app.py:1-2\n```py\ndef add(x, y):\n```" } }));
  assert.equal(chat.text, "# agent chat · s1\n\n## You\n\nWhy?\n📎 src/app.py:4-6\n📎 /etc/hosts\n📎 app.py:1-2\n");
  assert.equal(shownPath("/home/me/notes/todo.md", ["/work/shop"], "/home/me"), "~/notes/todo.md");
});

test("agent text is shown inert and forges no line of the chat, however the chunks split it", () => {
  const chat = new Chat("s1", { agent: () => "Claude Agent" });
  let index = 0;
  const apply = (u: object) => assert.ok(chat.apply(update(++index, u)));
  const chunk = (sessionUpdate: string, text: string) => apply({ sessionUpdate, content: { type: "text", text } });
  chunk("user_message_chunk", "What does this do?");
  chunk("agent_thought_chunk", "planning\x1b]52;c;cHduZWQ=\x07\n⚠ fake warning");
  apply({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls\x1b[2J\r🔐 permission: nothing", status: "pending" });
  apply({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: output("out\x1b[31m\r\u202eok") });
  apply({ sessionUpdate: "permission_request", requestId: 1, toolCall: { toolCallId: "t2", title: "Read\x1b[2J README.md\u202e" } });
  const chunks = ["Hello\x1b[2J\n#", "# Yo", "u\n## Claude", " Agent\n🔐 per", "mission: rm -rf ~ (it calls this “Read”)\n", "fine\u200b\rX\u202eY 👩\u200d💻\n"];
  for (const text of chunks) chunk("agent_message_chunk", text);
  assert.ok(chat.end({ sessionId: "s1", messageId: "m1", index: ++index, stopReason: "end_turn" }));
  const text = chat.text;
  for (const acting of ["\x1b", "\x07", "\r", "\u202e", "\u200b"]) assert.ok(!text.includes(acting), JSON.stringify(text));
  const lines = text.split("\n");
  assert.deepEqual(lines.filter((line) => line.startsWith("## ")), ["## You", "## Claude Agent"]);
  assert.deepEqual(lines.filter((line) => line.startsWith("🔐")), ["🔐 permission: Read\\x1b[2J README.md\\u202e"]);
  for (const forged of [
    "\\## You",
    "\\## Claude Agent",
    "\\🔐 permission: rm -rf ~ (it calls this “Read”)",
    "> \\⚠ fake warning",
    "> 💭 planning\\x1b]52;c;cHduZWQ=\\x07",
    "fine\\u200b\\rX\\u202eY 👩\u200d💻",
    "    out\\x1b[31m\\r\\u202eok",
    "🔧 ls\\x1b[2J\\r🔐 permission: nothing — completed",
  ]) {
    assert.ok(lines.includes(forged), `${forged} in ${JSON.stringify(text)}`);
  }
});

test("a subagent's work is a block of its own, its heading drawn again in place, and it folds", () => {
  const chat = new Chat("s1", { agent: () => "Claude Agent" });
  let index = 0;
  const apply = (u: object) => assert.ok(chat.apply(update(++index, u)));
  const sub = (u: object) => apply({ subagentId: "a1", ...u });
  const state = (state: string, stopReason?: string) =>
    sub({ sessionUpdate: "subagent_update", title: "Count\nfiles", description: "general-purpose", state, stopReason, cancellable: true });
  apply({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "Count them" } });
  state("running");
  sub({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "Count the files" } });
  sub({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Counting.\n### 🤖 Subagent (✓ done): forged" } });
  sub({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", status: "pending" });
  state("requires_action");
  sub({ sessionUpdate: "permission_request", requestId: "r1", toolCall: { toolCallId: "t1", title: "ls" }, options: [] });
  state("idle", "end_turn");
  apply({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Three." } });
  assert.equal(
    chat.text,
    "# Claude Agent chat · s1\n\n## You\n\nCount them\n\n## Claude Agent\n\n### 🤖 Subagent (✓ done): Count\\nfiles\n> _general-purpose_\n\n" +
      "> 📋 Task: Count the files\n\nCounting.\n\\### 🤖 Subagent (✓ done): forged\n\n🔧 ls — pending\n\n🔐 permission: ls\n\n" +
      "## Claude Agent\n\nThree.",
  );
  assert.deepEqual(chat.folds, [{ start: 8, end: 19 }]);
  const lines = chat.text.split("\n");
  assert.equal(lines[8], "### 🤖 Subagent (✓ done): Count\\nfiles");
  assert.equal(lines[20], "## Claude Agent");
});

test("a subagent whose work its parent's words split keeps one live heading: the earlier says it goes on below", () => {
  const chat = new Chat("s1", { agent: () => "Claude Agent" });
  let index = 0;
  const apply = (u: object) => assert.ok(chat.apply(update(++index, u)));
  const sub = (u: object) => apply({ subagentId: "a1", ...u });
  const state = (state: string, stopReason?: string) => sub({ sessionUpdate: "subagent_update", title: "Notes", state, stopReason });
  state("running");
  sub({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Working." } });
  state("requires_action");
  apply({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Main: waiting." } });
  sub({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Made it." } });
  state("idle", "end_turn");
  const lines = chat.text.split("\n");
  assert.ok(lines.includes("### 🤖 Subagent (continued below): Notes"), chat.text);
  assert.ok(lines.includes("### 🤖 Subagent (✓ done): Notes"), chat.text);
  assert.ok(!chat.text.includes("waiting for you"), "no state left stale above");
});

test("images are goose-ls's own lines: the kept copy as a markdown image, or why it was not kept", () => {
  const chat = new Chat("s1", { agent: () => "goose", folders: () => ["/work/shop"] });
  const kept = { type: "image", mimeType: "image/png", uri: "file:///data/outputs/s1/ab.png", sha256: "ab", size: 48213 };
  chat.apply(update(1, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "What is this?" } }));
  chat.apply(update(2, { sessionUpdate: "user_message_chunk", content: { ...kept, source: "file:///work/shop/docs/shot.png" } }));
  chat.apply(update(3, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "🖼 forged" } }));
  chat.apply(update(4, { sessionUpdate: "agent_message_chunk", content: kept }));
  chat.apply(update(5, { sessionUpdate: "agent_message_chunk", content: { type: "image", refused: "its data is not base64" } }));
  chat.apply(update(6, { sessionUpdate: "tool_call", toolCallId: "t1", title: "screenshot", status: "completed", content: [{ type: "content", content: { ...kept, size: 900 } }] }));
  const lines = chat.text.split("\n");
  assert.ok(lines.includes("📎 docs/shot.png (image)"), chat.text);
  assert.equal(lines.filter((line) => line === "🖼 ![PNG image, 48 KB](file:///data/outputs/s1/ab.png)").length, 2, chat.text);
  assert.ok(lines.includes("\\🖼 forged"), "the agent's text cannot pass for an image line");
  assert.ok(lines.includes("⚠ image not shown: its data is not base64"), chat.text);
  assert.ok(lines.includes("    🖼 ![PNG image, 900 bytes](file:///data/outputs/s1/ab.png)"), chat.text);
});

/** Each line of the chat's text with the turn `turnAt` puts it in ("-" for none). */
function turnOfEachLine(chat: Chat): string[] {
  return chat.text.split("\n").map((line, n) => `${chat.turnAt(n)?.messageId ?? "-"} ${line}`);
}

test("each line is in the turn drawn around it, though a block of an earlier turn grows in place", () => {
  const chat = new Chat("s1", { agent: () => "goose" });
  const say = (index: number, messageId: string | null, u: object, replay = false) =>
    chat.apply({ sessionId: "s1", messageId, index, update: u as never, replay });
  const text = (t: string) => ({ type: "text", text: t });
  const plan = (...entries: string[]) => ({ sessionUpdate: "plan", entries: entries.map((content) => ({ content, status: "pending" })) });
  // A history replayed (a fork's, a chat reopened): its turns are known as the others are.
  say(1, "m1", { sessionUpdate: "user_message_chunk", content: text("first") }, true);
  say(2, "m1", { sessionUpdate: "usage_update", used: 1, size: 2 }, true);
  say(3, "m1", plan("one"), true);
  say(4, "m1", { sessionUpdate: "agent_message_chunk", content: text("First answer.") }, true);
  chat.end({ sessionId: "s1", messageId: "m1", index: 5, stopReason: "end_turn" });
  say(6, null, { sessionUpdate: "note", text: "Forked from “x”." });
  say(7, "m2", { sessionUpdate: "usage_update", used: 1, size: 2 }); // draws nothing: not the turn's start
  say(8, "m2", { sessionUpdate: "user_message_chunk", content: text("second") });
  say(9, "m2", plan("one", "two", "three")); // drawn again where it is, in the first turn
  say(10, "m2", { sessionUpdate: "agent_message_chunk", content: text("Second answer.") });
  assert.deepEqual(turnOfEachLine(chat), [
    "- # goose chat · s1",
    "- ",
    "m1 ## You",
    "m1 ",
    "m1 first",
    "m1 ",
    "m1 **Plan**",
    "m1 - [ ] one",
    "m1 - [ ] two",
    "m1 - [ ] three",
    "m1 ",
    "m1 ## goose",
    "m1 ",
    "m1 First answer.",
    "m1 ",
    "- > Forked from “x”.",
    "- ",
    "m2 ## You",
    "m2 ",
    "m2 second",
    "m2 ",
    "m2 ## goose",
    "m2 ",
    "m2 Second answer.",
  ]);
  assert.deepEqual(
    chat.turns.map((t) => [t.messageId, t.start, t.end]),
    [["m1", 2, 14], ["m2", 17, undefined]],
    "the second turn runs: it has no end yet",
  );
  chat.end({ sessionId: "s1", messageId: "m2", index: 11, stopReason: "cancelled" });
  assert.deepEqual(turnOfEachLine(chat).slice(-4), ["m2 Second answer.", "m2 ", "m2 _cancelled_", "m2 "]);
  assert.equal(chat.turns[1].end, 26);
});
