// Feed recorded goose/* notifications (JSON lines, see record-goose-events.py) to the
// VS Code extension's compiled chat model and print the document it shows; WORKSPACE is
// the folder VS Code has open (attached files are named from it).
//   node scripts/render-vscode-chat.js editors/vscode/out/src/chat.js EVENTS.jsonl WORKSPACE
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [model, events, workspace] = process.argv.slice(2);
const { agentName, Chat } = require(path.resolve(model));
let agent = "agent";
const context = { agent: () => agent, folders: () => (workspace ? [path.resolve(workspace)] : []) };
let chat;
for (const line of fs.readFileSync(events, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const { method, params } = JSON.parse(line);
  if (method === "goose/agentStatus") {
    if (params.name !== undefined) agent = agentName(params.name);
    continue;
  }
  chat = chat ?? new Chat(params.sessionId, context);
  if (method === "goose/update") chat.apply(params);
  else if (method === "goose/turnEnd") chat.end(params);
}
if (!chat) throw new Error(`no events in ${events}`);
process.stdout.write(chat.text);
