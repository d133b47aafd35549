// The VS Code face of goose-ls: starts the server, renders chats, asks permissions.
import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { Chat, type PermissionOption, type TurnEnd, type Update } from "./chat";
import { type ConfigOption, grouped, valueName, valuesOf } from "./options";
import { statusText } from "./status";

let client: LanguageClient | undefined;
const chats = new Map<string, Chat>();
let current: string | undefined;
let statusBar: vscode.StatusBarItem | undefined;

/** The status bar tells the current chat's state and how full its context is. */
function showStatus(): void {
  if (!statusBar) return;
  statusBar.text = statusText(current ? chats.get(current) : undefined);
  statusBar.show();
}

class ChatDocuments implements vscode.TextDocumentContentProvider {
  readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  provideTextDocumentContent(uri: vscode.Uri): string {
    return chats.get(uri.path)?.text ?? "";
  }
}
const documents = new ChatDocuments();

function chatUri(sessionId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: "goose-chat", path: sessionId });
}

async function session(): Promise<string> {
  if (current) return current;
  const result = await client!.sendRequest<{ sessionId: string }>("goose/newSession", { tabId: randomUUID() });
  current = result.sessionId;
  chats.set(current, new Chat(current));
  showStatus();
  return current;
}

async function ask(question: string, context: object[]): Promise<void> {
  const sessionId = await session();
  await client!.sendRequest("goose/prompt", { sessionId, messageId: randomUUID(), prompt: question, context });
  const doc = await vscode.workspace.openTextDocument(chatUri(sessionId));
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
}

async function askPermission(update: Update): Promise<void> {
  const u = update.update as unknown as { requestId: string; toolCall: { title?: string }; options: PermissionOption[] };
  const labels = u.options.map((option) => option.label);
  const choice = await vscode.window.showWarningMessage(`goose wants to run: ${u.toolCall.title ?? "a tool"}`, ...labels);
  const option = choice === undefined ? undefined : u.options[labels.indexOf(choice)];
  await client!.sendRequest("goose/permission", option ? { requestId: u.requestId, optionId: option.optionId } : { requestId: u.requestId });
}

/** Pick one of the chat's config options (grouped by category), then its new value. */
async function setOption(): Promise<void> {
  if (!current) return void vscode.window.showInformationMessage("goose: no chat yet");
  const status = await client!.sendRequest<{ sessions: { sessionId: string; configOptions?: ConfigOption[] }[] }>("goose/status", {});
  const options = status.sessions.find((s) => s.sessionId === current)?.configOptions ?? [];
  if (options.length === 0) return void vscode.window.showInformationMessage("goose: the agent offers no options");
  const items = grouped(options).flatMap(({ group, options }): (vscode.QuickPickItem & { option?: ConfigOption })[] => [
    { label: group, kind: vscode.QuickPickItemKind.Separator },
    ...options.map((option) => ({ label: option.name ?? option.id, description: valueName(option, option.currentValue), option })),
  ]);
  const option = (await vscode.window.showQuickPick(items, { placeHolder: "goose option" }))?.option;
  if (!option) return;
  const values = valuesOf(option).map((v) => ({
    label: v.name ?? String(v.value),
    description: v.value === option.currentValue ? "current" : undefined,
    value: v.value,
  }));
  const chosen = await vscode.window.showQuickPick(values, { placeHolder: option.name ?? option.id });
  if (chosen) await client!.sendRequest("goose/setConfigOption", { sessionId: current, configId: option.id, value: chosen.value });
}

/** The agent settings that are set (an empty command means "the preset's"). */
function settingsOf(agent: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(agent).filter(([, value]) => value !== "" && value !== null));
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("goose");
  const serverOptions: ServerOptions = { command: config.get<string>("serverPath", "goose-ls") };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    synchronize: { configurationSection: "goose" },
    initializationOptions: {
      gooseUpdates: true, // goose/update from the start (docs/protocol.md)
      agent: settingsOf(config.get<Record<string, unknown>>("agent") ?? {}),
    },
  };
  client = new LanguageClient("goose-ls", "goose-ls", serverOptions, clientOptions);
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider("goose-chat", documents));
  client.onNotification("goose/update", (params: Update) => {
    const chat = chats.get(params.sessionId) ?? new Chat(params.sessionId);
    chats.set(params.sessionId, chat);
    if (chat.apply(params)) documents.changed.fire(chatUri(params.sessionId));
    if (params.update.sessionUpdate === "permission_request") void askPermission(params);
    showStatus();
  });
  client.onNotification("goose/turnEnd", (params: TurnEnd) => {
    if (chats.get(params.sessionId)?.end(params)) documents.changed.fire(chatUri(params.sessionId));
    showStatus();
  });
  statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left);
  context.subscriptions.push(statusBar);
  showStatus();
  context.subscriptions.push(
    vscode.commands.registerCommand("gooseLs.ask", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return;
      const question = await vscode.window.showInputBox({ prompt: "Ask goose" });
      if (!question) return;
      const { start, end } = editor.selection;
      await ask(question, [{ type: "selection", uri: editor.document.uri.toString(), startLine: start.line + 1, endLine: end.line + 1 }]);
    }),
    vscode.commands.registerCommand("gooseLs.send", async () => {
      const message = await vscode.window.showInputBox({ prompt: "goose" });
      if (message) await ask(message, []);
    }),
    vscode.commands.registerCommand("gooseLs.cancel", async () => {
      if (current) await client!.sendRequest("goose/cancel", { sessionId: current });
    }),
    vscode.commands.registerCommand("gooseLs.sessions", async () => {
      const result = await client!.sendRequest<{ sessions: { sessionId: string; title: string }[] }>("goose/listSessions", {});
      const pick = await vscode.window.showQuickPick(result.sessions.map((s) => ({ label: s.title, description: s.sessionId })));
      if (!pick?.description) return;
      current = pick.description;
      chats.set(current, chats.get(current) ?? new Chat(current));
      showStatus();
      await client!.sendRequest("goose/loadSession", { sessionId: current });
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(chatUri(current)), { preview: false });
    }),
    vscode.commands.registerCommand("gooseLs.setOption", setOption),
    vscode.commands.registerCommand("gooseLs.restart", async () => {
      await client!.sendRequest("goose/restart", {});
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  // Activated again, the extension talks to a new goose-ls: these chats were the old one's.
  client = undefined;
  current = undefined;
  chats.clear();
}
