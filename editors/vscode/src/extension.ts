// The VS Code face of goose-ls: starts the server, renders chats, asks permissions.
import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { Chat, type PermissionOption, slashCandidates, type TurnEnd, type Update } from "./chat";
import { type ConfigOption, grouped, valueName, valuesOf } from "./options";
import { ask as askQuestion, type Prompts, type Question } from "./questions";
import { type AgentStatus, signIn } from "./signIn";
import { statusText } from "./status";

let client: LanguageClient | undefined;
const chats = new Map<string, Chat>();
let current: string | undefined;
let statusBar: vscode.StatusBarItem | undefined;
let agent: AgentStatus = { state: "stopped" };
/** The questions waiting for the user: closing one drops its prompts. */
const questions = new Map<string, vscode.CancellationTokenSource>();
/** Sessions whose goose/replay, asked for after a gap, has not answered yet. */
const catchingUp = new Set<string>();

/** The chat of a session, made when its first event comes. */
function chatOf(sessionId: string): Chat {
  const chat = chats.get(sessionId) ?? new Chat(sessionId);
  chats.set(sessionId, chat);
  return chat;
}

/** Ask goose-ls again for the events after the last one the chat shows: after a gap (one
 * request at a time: the events after a gap meanwhile are in it), or when it is reopened. */
async function catchUp(chat: Chat, always = false): Promise<void> {
  if (!always && (!chat.missed || catchingUp.has(chat.sessionId))) return;
  chat.missed = false;
  catchingUp.add(chat.sessionId);
  try {
    await client!.sendRequest("goose/replay", { sessionId: chat.sessionId, afterIndex: chat.seen });
  } catch {
    // the session is gone: nothing more to show
  } finally {
    catchingUp.delete(chat.sessionId);
  }
}

/** The status bar tells the current chat's state and how full its context is; when the
 * agent waits for a sign-in, it says so and signs in when clicked. */
function showStatus(): void {
  if (!statusBar) return;
  const signInNeeded = agent.reason === "auth_required";
  statusBar.text = signInNeeded ? "goose: needs sign-in" : statusText(current ? chats.get(current) : undefined);
  statusBar.command = signInNeeded ? "gooseLs.signIn" : undefined;
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
  // Its first updates (the agent's commands) may have come before this answer.
  chats.set(current, chats.get(current) ?? new Chat(current));
  showStatus();
  return current;
}

async function ask(question: string, context: object[]): Promise<void> {
  const sessionId = await session();
  const messageId = randomUUID();
  const result = await client!.sendRequest<{ queued: boolean }>("goose/prompt", { sessionId, messageId, prompt: question, context });
  if (result.queued) chats.get(sessionId)?.enqueue(messageId, question); // shown until its turn starts
  documents.changed.fire(chatUri(sessionId));
  showStatus();
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

function prompts(token: vscode.CancellationToken): Prompts {
  return {
    pick: (items, title) => Promise.resolve(vscode.window.showQuickPick(items, { title, placeHolder: title, ignoreFocusOut: true }, token)),
    pickMany: (items, title) =>
      Promise.resolve(vscode.window.showQuickPick(items, { title, placeHolder: title, canPickMany: true, ignoreFocusOut: true }, token)),
    input: (title, value, validateInput) =>
      Promise.resolve(vscode.window.showInputBox({ title, prompt: title, value, validateInput, ignoreFocusOut: true }, token)),
    open: (url) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(url))),
  };
}

/** Ask the agent's question and send the answer, unless it was closed meanwhile (its
 * prompts are then dropped). A refused form is shown and asked again. */
async function answerQuestion(sessionId: string, question: Question): Promise<void> {
  const closing = new vscode.CancellationTokenSource();
  questions.set(question.requestId, closing);
  for (;;) {
    const answer = await askQuestion(prompts(closing.token), question);
    if (questions.get(question.requestId) !== closing) return;
    try {
      await client!.sendRequest("goose/elicitation", { sessionId, requestId: question.requestId, ...answer });
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`goose: ${message}`);
      if (answer.action !== "accept" || message.includes("requestId:")) return void questions.delete(question.requestId);
    }
  }
}

/** A message from an input box; one that starts an agent's `/` command picks it (with its
 * description), then asks for the rest of the message. */
async function compose(): Promise<string | undefined> {
  const sessionId = await session();
  const message = await vscode.window.showInputBox({ prompt: "goose", placeHolder: "a message; / for the agent's commands" });
  const candidates = message === undefined ? undefined : slashCandidates(message, chats.get(sessionId)?.commands ?? []);
  if (!candidates) return message;
  const items = candidates.map((c) => ({ label: `/${c.name}`, description: c.description }));
  const command = await vscode.window.showQuickPick(items, { placeHolder: "the agent's commands" });
  if (!command) return undefined;
  const start = `${command.label} `;
  return vscode.window.showInputBox({ prompt: "goose", value: start, valueSelection: [start.length, start.length] });
}

/** Send now: the oldest message waiting in the current chat joins the running turn, where
 * the agent can take it; else the error says why, and the message stays queued. */
async function sendNow(): Promise<void> {
  const waiting = current ? chats.get(current)?.queue[0] : undefined;
  if (!waiting) return void vscode.window.showInformationMessage("goose: no message waits to be sent now");
  try {
    const result = await client!.sendRequest<{ steered: boolean }>("goose/steer", { sessionId: current, messageId: waiting.id });
    if (!result.steered) void vscode.window.showInformationMessage("goose: the turn had ended; your message runs next");
  } catch (error) {
    void vscode.window.showErrorMessage(`goose: ${error instanceof Error ? error.message : String(error)}`);
  }
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
    const chat = chatOf(params.sessionId);
    if (chat.apply(params)) documents.changed.fire(chatUri(params.sessionId));
    void catchUp(chat);
    const u = params.update;
    if (u.sessionUpdate === "permission_request") void askPermission(params);
    if (u.sessionUpdate === "elicitation_request" && !params.replay) void answerQuestion(params.sessionId, u as unknown as Question);
    if (u.sessionUpdate === "elicitation_resolved") {
      questions.get(u.requestId as string)?.cancel();
      questions.delete(u.requestId as string);
    }
    showStatus();
  });
  client.onNotification("goose/agentStatus", (status: AgentStatus) => {
    agent = status;
    showStatus();
  });
  client.onNotification("goose/turnEnd", (params: TurnEnd) => {
    const chat = chatOf(params.sessionId);
    if (chat.end(params)) documents.changed.fire(chatUri(params.sessionId));
    void catchUp(chat);
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
      const message = await compose();
      if (message) await ask(message, []);
    }),
    vscode.commands.registerCommand("gooseLs.sendNow", sendNow),
    vscode.commands.registerCommand("gooseLs.cancel", async () => {
      if (current) await client!.sendRequest("goose/cancel", { sessionId: current });
    }),
    vscode.commands.registerCommand("gooseLs.sessions", async () => {
      const result = await client!.sendRequest<{ sessions: { sessionId: string; title: string }[] }>("goose/listSessions", {});
      const pick = await vscode.window.showQuickPick(result.sessions.map((s) => ({ label: s.title, description: s.sessionId })));
      if (!pick?.description) return;
      current = pick.description;
      const chat = chatOf(current);
      showStatus();
      await client!.sendRequest("goose/loadSession", { sessionId: current });
      await catchUp(chat, true); // the history the journal holds, from where the chat is
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(chatUri(current)), { preview: false });
    }),
    vscode.commands.registerCommand("gooseLs.setOption", setOption),
    vscode.commands.registerCommand("gooseLs.restart", async () => {
      await client!.sendRequest("goose/restart", {});
    }),
    // agent.share: a new goose serve for every window (after `goose configure`, say).
    vscode.commands.registerCommand("gooseLs.restartServer", async () => {
      await client!.sendRequest("goose/restart", { server: true });
    }),
    vscode.commands.registerCommand("gooseLs.signIn", () => signIn(agent.signIn ?? [], (method, params) => client!.sendRequest(method, params))),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  // Activated again, the extension talks to a new goose-ls: these chats were the old one's.
  client = undefined;
  current = undefined;
  agent = { state: "stopped" };
  chats.clear();
  questions.clear();
  catchingUp.clear();
}
