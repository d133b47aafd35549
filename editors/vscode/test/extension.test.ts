// extension.ts under plain node, against a real goose-ls and the scripted agent. `vscode`
// and the language client are stand-ins: the first records what the user is shown, the
// second speaks JSON-RPC to the server over stdio. tests/test_vscode.py sets GOOSE_CMD
// (the server's command), GOOSE_AGENT (the scripted agent's, less the script) and GOOSE_OPTIONS
// (goose's config options, as the scripted agent offers them).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

const serverCommand: string[] = JSON.parse(process.env.GOOSE_CMD ?? "[]");
const agentCommand: string[] = JSON.parse(process.env.GOOSE_AGENT ?? "[]");
const scratch = mkdtempSync(join(tmpdir(), "goose-ls-vscode-"));
const script = join(scratch, "script.json");
const workspace = join(scratch, "workspace");
mkdirSync(join(workspace, ".git"), { recursive: true });
after(() => rmSync(scratch, { recursive: true, force: true }));

const shown: { message: string; labels: string[] }[] = [];
const commands = new Map<string, () => Promise<void>>();
let chats: { provideTextDocumentContent(uri: { path: string }): string } | undefined;
const turnEnds: { sessionId: string }[] = [];
const statusBar = { text: "", shown: false, show() { this.shown = true; }, dispose() {} };
/** Each quick pick shown: its items' labels (separators as `-- label`); the user picks
 * the item whose label is the next of `picks` (none when they run out). */
const quickPicks: string[][] = [];
const picks: string[] = [];

const vscode = {
  EventEmitter: class {
    event = () => ({ dispose() {} });
    fire() {}
  },
  Uri: { from: (parts: { path: string }) => parts },
  StatusBarAlignment: { Left: 1 },
  ViewColumn: { Beside: -2 },
  QuickPickItemKind: { Separator: -1 },
  workspace: {
    getConfiguration: () => ({ get: (key: string, fallback?: unknown) => (key === "agent" ? { command: [...agentCommand, script] } : fallback) }),
    registerTextDocumentContentProvider: (_scheme: string, provider: typeof chats) => (chats = provider),
    openTextDocument: async () => ({}),
  },
  window: {
    createStatusBarItem: () => statusBar,
    showInputBox: async () => "Edit app.py, please",
    showInformationMessage: async () => undefined,
    showQuickPick: async <T extends { label: string; kind?: number }>(items: T[]) => {
      quickPicks.push(items.map((item) => (item.kind === -1 ? `-- ${item.label}` : item.label)));
      const wanted = picks.shift();
      return items.find((item) => item.kind !== -1 && item.label === wanted);
    },
    showTextDocument: async () => ({}),
    showWarningMessage: async (message: string, ...labels: string[]) => {
      shown.push({ message, labels });
      return "Allow"; // the user presses the allow-once button, known by its label
    },
  },
  commands: {
    registerCommand: (id: string, run: () => Promise<void>) => commands.set(id, run),
  },
};

class LanguageClient {
  private readonly server = spawn(serverCommand[0], serverCommand.slice(1), { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
  private readonly connection = createMessageConnection(new StreamMessageReader(this.server.stdout), new StreamMessageWriter(this.server.stdin));

  constructor(_id: string, _name: string, _server: unknown, private readonly options: { initializationOptions: unknown }) {}

  onNotification<P>(method: string, handler: (params: P) => void): void {
    this.connection.onNotification(method, (params: P) => {
      handler(params);
      if (method === "goose/turnEnd") turnEnds.push(params as (typeof turnEnds)[number]);
    });
  }

  sendRequest<R>(method: string, params: unknown): Promise<R> {
    return this.connection.sendRequest(method, params);
  }

  async start(): Promise<void> {
    this.connection.listen();
    const root = pathToFileURL(workspace).href;
    await this.connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "workspace" }],
      capabilities: {},
      initializationOptions: this.options.initializationOptions,
    });
    await this.connection.sendNotification("initialized", {});
  }

  async stop(): Promise<void> {
    await this.connection.sendRequest("shutdown");
    await this.connection.sendNotification("exit");
    this.connection.dispose();
  }
}

// Hand the stand-ins to extension.ts when it asks for `vscode` and the language client.
const moduleLoader = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
const load = moduleLoader._load;
moduleLoader._load = function (request: string, ...rest: unknown[]) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return { LanguageClient };
  return load.call(this, request, ...rest);
};
const extension: typeof import("../src/extension") = require("../src/extension");

async function until(done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !done(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
  }
}

const skip = serverCommand.length === 0 && "GOOSE_CMD is not set (tests/test_vscode.py sets it)";

test("the permission buttons are the labels goose-ls sent; the one pressed answers with its option", { skip }, async () => {
  // claude-code-acp's options, and one the agent left unnamed: goose-ls words them, not
  // the kind ("Allow", not "Allow once"), and adds its own last.
  const options = [
    { optionId: "allow_always", name: "Always Allow", kind: "allow_always" },
    { optionId: "allow", name: "Allow", kind: "allow_once" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
    { optionId: "never", name: "", kind: "reject_always" },
  ];
  const permission = { permission: { toolCall: { toolCallId: "e1", title: "Edit app.py" }, options } };
  const turn = [permission, { text: "done" }, { usage: { used: 12345, size: 200000 } }];
  writeFileSync(script, JSON.stringify({ turns: [turn] }));

  await extension.activate({ subscriptions: [] } as never);
  try {
    await commands.get("gooseLs.send")!();
    await until(() => turnEnds.length > 0, "the turn to end");
    assert.deepEqual(shown, [
      {
        message: "goose wants to run: Edit app.py",
        labels: ["Always Allow", "Allow", "Reject", "Reject always", "Allow for this session"],
      },
    ]);
    assert.match(chats!.provideTextDocumentContent({ path: turnEnds[0].sessionId }), /\[permission: allow\]done\n$/);
    assert.ok(statusBar.shown);
    assert.equal(statusBar.text, "goose: idle · 12k/200k", "the status bar tells how full the context is");
  } finally {
    await extension.deactivate();
  }
});

test("the option picker groups options by category; it toggles a boolean and switches the model", { skip }, async () => {
  const record = join(scratch, "agent.jsonl");
  const configOptions = JSON.parse(process.env.GOOSE_OPTIONS ?? "[]");
  writeFileSync(script, JSON.stringify({ turns: [[{ text: "ok" }]], configOptions, record }));
  await extension.activate({ subscriptions: [] } as never);
  try {
    await commands.get("gooseLs.send")!();
    picks.push("Auto-compact", "off");
    await commands.get("gooseLs.setOption")!();
    picks.push("Model", "gpt-5");
    await commands.get("gooseLs.setOption")!();
    const [options, toggle, , models] = quickPicks;
    assert.deepEqual(options, ["-- Other", "Provider", "Auto-compact", "-- Mode", "Mode", "-- Model", "Model", "-- Thinking", "Thinking effort"]);
    assert.deepEqual(toggle, ["on", "off"]);
    assert.deepEqual(models, ["claude-sonnet-4", "claude-opus-4", "gpt-5"]);
    const sent = readFileSync(record, "utf-8")
      .split("\n")
      .filter((line) => line.includes('"session/set_config_option"'))
      .map((line) => JSON.parse(line).params);
    assert.deepEqual(
      sent.map((p: { configId: string; value: unknown; type?: string }) => [p.configId, p.value, p.type]),
      [["auto_compact", false, "boolean"], ["model", "gpt-5", undefined]],
    );
  } finally {
    await extension.deactivate();
  }
});
