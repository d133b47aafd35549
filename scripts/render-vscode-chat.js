// Feed recorded goose/* notifications (JSON lines, see record-goose-events.py) to the
// VS Code extension's compiled chat model and print the document it shows.
//   node scripts/render-vscode-chat.js editors/vscode/out/src/chat.js EVENTS.jsonl
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [model, events] = process.argv.slice(2);
const { Chat } = require(path.resolve(model));
let chat;
for (const line of fs.readFileSync(events, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const { method, params } = JSON.parse(line);
  chat = chat ?? new Chat(params.sessionId);
  if (method === "goose/update") chat.apply(params);
  else if (method === "goose/turnEnd") chat.end(params);
}
if (!chat) throw new Error(`no events in ${events}`);
process.stdout.write(chat.text);
