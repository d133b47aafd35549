// The VS Code face of goose-ls: starts the server, renders chats, asks permissions.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { agentName, Chat, type ChatContext, oneLine, type PermissionOption, slashCandidates, type TurnEnd, type Update } from "./chat";
import { type ConfigOption, grouped, valueName, valuesOf } from "./options";
import { pasteImages } from "./paste";
import { ask as askQuestion, type Prompts, type Question } from "./questions";
import { type AgentStatus, signIn } from "./signIn";
import { statusText } from "./status";

let client: LanguageClient | undefined;
const chats = new Map<string, Chat>();
let current: string | undefined;
let statusBar: vscode.StatusBarItem | undefined;
let agent: AgentStatus = { state: "stopped" };
/** The agent's name for people, as goose-ls last gave it (goose/agentStatus `name`, only
 * while it runs: kept through a crash or a restart). */
let agentCalled = "agent";
/** What every chat takes from the window: the agent's name, the workspace folders. */
const chatContext: ChatContext = {
  agent: () => agentCalled,
  folders: () => (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
};
/** Why goose-ls could not be started, when it could not. */
let notStarted: string | undefined;
/** The questions waiting for the user: closing one drops its prompts. */
const questions = new Map<string, vscode.CancellationTokenSource>();
/** The permission requests waiting for an answer, oldest first; resolving one closes its
 * prompt. */
const permissions = new Map<string, Permission>();
/** Sessions whose goose/replay, asked for after a gap, has not answered yet. */
const catchingUp = new Set<string>();
/** The images attached to the next message, as URIs: files (Goose: Attach an image) and
 * pasted images' `data:` URIs (Goose: Paste an image); kept when goose-ls refuses the
 * message. */
const attached: string[] = [];

/** The chat of a session, made when its first event comes. */
function chatOf(sessionId: string): Chat {
  const chat = chats.get(sessionId) ?? new Chat(sessionId, chatContext);
  chats.set(sessionId, chat);
  return chat;
}

/** Ask goose-ls again for the events after the last one the chat shows: after a gap (one
 * request at a time: the events after a gap meanwhile are in it), or when it is reopened. */
async function catchUp(chat: Chat, always = false): Promise<void> {
  if (!always && (!chat.missed || catchingUp.has(chat.sessionId))) return;
  chat.missed = false;
  catchingUp.add(chat.sessionId);
  let answered = false;
  try {
    await client!.sendRequest("goose/replay", { sessionId: chat.sessionId, afterIndex: chat.seen });
    answered = true;
  } catch {
    // the session is gone: nothing more to show
  } finally {
    catchingUp.delete(chat.sessionId);
  }
  // What came after the gap is applied now, across indices the journal never had.
  if (chat.settle(answered)) documents.changed.fire(chatUri(chat.sessionId));
  showStatus();
  // The gaps seen while the replay ran were filled by it, unless an event came beyond
  // what it brought.
  chat.missed = answered && chat.behind;
  if (chat.missed) void catchUp(chat);
}

interface Permission {
  requestId: string;
  question: string;
  options: PermissionOption[];
  /** The changes of an edit, as goose-ls worked them out (docs/protocol.md). */
  diffs: Diff[];
  closing: vscode.CancellationTokenSource;
}

interface Diff {
  path: string;
  oldText: string;
  newText: string;
}

/** The two sides of each change a permission request shows:
 * goose-diff:/<requestId>/<n>/old/<name>. */
const sides = new Map<string, string>();

function diffsOf(content: unknown): Diff[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((item) => item?.type === "diff" && typeof item.path === "string" && typeof item.newText === "string")
    .map((item) => ({ path: item.path, oldText: typeof item.oldText === "string" ? item.oldText : "", newText: item.newText }));
}

/** Show a change in VS Code's diff editor (a tab of its own, the file's left as it is). */
async function showDiff(diff: Diff, key: string): Promise<void> {
  const name = diff.path.split("/").pop() ?? diff.path;
  const old = vscode.Uri.from({ scheme: "goose-diff", path: `/${key}/old/${name}` });
  const changed = vscode.Uri.from({ scheme: "goose-diff", path: `/${key}/new/${name}` });
  sides.set(old.path, diff.oldText);
  sides.set(changed.path, diff.newText);
  const title = `${agentCalled}: the change to ${oneLine(vscode.workspace.asRelativePath(diff.path))}`;
  await vscode.commands.executeCommand("vscode.diff", old, changed, title, { preview: false, preserveFocus: true });
}

const CHOOSE = "Choose…";

/** The status bar tells the current chat's state and how full its context is. Before
 * that, and acting on a click: goose-ls could not start (its setting), a permission
 * request waits (its choices), the agent waits for a sign-in (signing in). */
function showStatus(): void {
  if (!statusBar) return;
  const signInNeeded = agent.reason === "auth_required";
  const waiting = permissions.size > 0;
  statusBar.text = notStarted
    ? "goose: goose-ls not started"
    : waiting
      ? `${agentCalled}: waits for your approval`
      : signInNeeded
        ? `${agentCalled}: needs sign-in`
        : statusText(current ? chats.get(current) : undefined, agentCalled);
  statusBar.command = notStarted
    ? { title: "Settings", command: "workbench.action.openSettings", arguments: ["goose.serverPath"] }
    : waiting
      ? "gooseLs.permission"
      : signInNeeded
        ? "gooseLs.signIn"
        : undefined;
  // A notification hides itself after a few seconds; the request stays in sight here.
  statusBar.backgroundColor = waiting ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
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

/** The line count of each chat document when last seen, to know whose view was at its end. */
const lineCounts = new Map<string, number>();

/** A chat's editors that showed its end follow what is added there; one scrolled up to
 * read stays where it is. */
function follow(event: vscode.TextDocumentChangeEvent): void {
  const chat = event.document;
  if (chat.uri.scheme !== "goose-chat") return;
  const before = lineCounts.get(chat.uri.toString()) ?? 0;
  lineCounts.set(chat.uri.toString(), chat.lineCount);
  const end = new vscode.Range(chat.lineCount - 1, 0, chat.lineCount - 1, 0);
  for (const editor of vscode.window.visibleTextEditors) {
    const seen = editor.visibleRanges[editor.visibleRanges.length - 1]?.end.line ?? 0;
    if (editor.document === chat && seen >= before - 2) editor.revealRange(end);
  }
}

function chatUri(sessionId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: "goose-chat", path: sessionId });
}

async function session(): Promise<string> {
  if (current) return current;
  const result = await client!.sendRequest<{ sessionId: string }>("goose/newSession", { tabId: randomUUID() });
  current = result.sessionId;
  // Its first updates (the agent's commands) may have come before this answer.
  chats.set(current, chats.get(current) ?? new Chat(current, chatContext));
  showStatus();
  return current;
}

/** A chat's document, in markdown (its headings, fences and links drawn as such). */
async function chatDocument(sessionId: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(chatUri(sessionId));
  return doc.languageId === "markdown" ? doc : vscode.languages.setTextDocumentLanguage(doc, "markdown");
}

async function ask(question: string, context: object[]): Promise<void> {
  const sessionId = await session();
  const messageId = randomUUID();
  const result = await client!.sendRequest<{ queued: boolean }>("goose/prompt", { sessionId, messageId, prompt: question, context });
  if (result.queued) chats.get(sessionId)?.enqueue(messageId, question); // shown until its turn starts
  documents.changed.fire(chatUri(sessionId));
  showStatus();
  await vscode.window.showTextDocument(await chatDocument(sessionId), { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
}

/** A permission request waits until answered: a notification says so (it hides itself
 * after a few seconds, and its buttons are cut to fit it, so the choices are offered in a
 * quick pick, in full), and the status bar until it is resolved. */
function askPermission(update: Update): void {
  const u = update.update as unknown as {
    requestId: string;
    toolCall: { toolCallId?: string; title?: string; content?: unknown };
    options: PermissionOption[];
    action?: string;
    warning?: string;
  };
  if (permissions.has(u.requestId)) return;
  // What allowing lets happen, as goose-ls read it from the request, before the agent's title.
  const title = oneLine(u.toolCall.title || u.toolCall.toolCallId || "a tool");
  const warning = u.warning ? `⚠️ ${oneLine(u.warning)} ` : "";
  const question = `${warning}The agent is waiting for your approval: ${oneLine(u.action || title)} (it calls this “${title}”)`;
  const diffs = diffsOf(u.toolCall.content);
  permissions.set(u.requestId, { requestId: u.requestId, question, options: u.options, diffs, closing: new vscode.CancellationTokenSource() });
  showStatus();
  if (update.replay) return; // waiting still, after a reload: the status bar tells
  void Promise.resolve(vscode.window.showWarningMessage(question, CHOOSE)).then((choice) => {
    if (choice === CHOOSE) void answerPermission(u.requestId);
  });
}

/** Offer the choices of a waiting permission request (the oldest unless one is named),
 * after its changes, each shown in the diff editor when picked; Escape leaves it waiting. */
async function answerPermission(requestId?: string): Promise<void> {
  const waiting = requestId === undefined ? permissions.values().next().value : permissions.get(requestId);
  if (!waiting) return void vscode.window.showInformationMessage("goose: no permission request waits");
  const shows = waiting.diffs.map((diff, n) => ({
    label: `Show the change to ${oneLine(vscode.workspace.asRelativePath(diff.path))}`,
    diff,
    key: `${waiting.requestId}/${n}`,
  }));
  const choices = waiting.options.map((option) => ({ label: oneLine(option.label), option }));
  const items: ((typeof shows)[number] | (typeof choices)[number])[] = [...shows, ...choices];
  const options = { title: waiting.question, placeHolder: "your answer (Escape: it waits)", ignoreFocusOut: true };
  let pick: (typeof items)[number] | undefined;
  for (;;) {
    pick = await vscode.window.showQuickPick(items, options, waiting.closing.token);
    if (!pick || !("diff" in pick)) break;
    await showDiff(pick.diff, pick.key);
  }
  if (!pick || !permissions.has(waiting.requestId)) return;
  try {
    await client!.sendRequest("goose/permission", { requestId: waiting.requestId, optionId: pick.option.optionId });
  } catch (error) {
    void vscode.window.showErrorMessage(`goose: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function permissionResolved(requestId: string): void {
  permissions.get(requestId)?.closing.cancel();
  permissions.delete(requestId);
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
    const answer = await askQuestion(prompts(closing.token), question, agentCalled);
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

/** Pick image files for the next message; goose-ls reads them when it is sent. */
async function attachImage(): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: true,
    openLabel: "Attach",
    title: "Images for the next message",
    filters: { Images: ["png", "jpg", "jpeg", "gif", "webp"] },
  });
  for (const uri of picked ?? []) attached.push(uri.toString());
  if (picked?.length) void vscode.window.showInformationMessage(`goose: ${attached.length} image(s) attached to the next message`);
}

/** Paste an image for the next message, in a panel that takes the paste. One over
 * `images.maxBytes` is refused at once, not when the message is sent. */
async function pasteImage(): Promise<void> {
  const pasted = await pasteImages("Paste an image for the next message");
  const cap = Number(vscode.workspace.getConfiguration("goose").inspect("images.maxBytes")?.globalValue ?? DEFAULT_IMAGE_CAP);
  const big = pasted.map(pastedBytes).find((size) => size > cap);
  if (big !== undefined) {
    const why = `the pasted image (${big.toLocaleString("en")} bytes) is over images.maxBytes, ${cap.toLocaleString("en")} bytes: not attached. Make it smaller, or raise images.maxBytes`;
    return void vscode.window.showErrorMessage(`goose: ${why}`);
  }
  attached.push(...pasted);
  if (pasted.length) void vscode.window.showInformationMessage(`goose: ${attached.length} image(s) attached to the next message`);
}

/** goose-ls's default `images.maxBytes`. */
const DEFAULT_IMAGE_CAP = 10_000_000;

/** The size of a pasted image's bytes, from its `data:...;base64,` URI. */
function pastedBytes(uri: string): number {
  const data = uri.slice(uri.indexOf(",") + 1);
  return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
}

/** Drop the images attached to the next message (one refused would refuse every message). */
function dropImages(): void {
  const dropped = attached.splice(0).length;
  void vscode.window.showInformationMessage(dropped ? `goose: ${dropped} image(s) dropped; the next message goes without them` : "goose: no image is attached");
}

/** Send a message with the images attached to it. When goose-ls refuses it (an image it
 * may not send, an agent that takes none), the images stay attached and the message is
 * offered back to edit and send again: nothing typed is lost. */
async function sendMessage(message: string): Promise<void> {
  const images = attached.splice(0);
  try {
    await ask(message, images.map((uri) => ({ type: "image", uri })));
  } catch (error) {
    attached.unshift(...images);
    const why = error instanceof Error ? error.message : String(error);
    const drop = images.length ? ["Drop the images, then edit"] : [];
    const again = await vscode.window.showErrorMessage(`goose: ${why}`, "Edit the message", ...drop);
    if (again === drop[0]) attached.length = 0;
    const edited = again ? await compose(message) : undefined;
    if (edited) await sendMessage(edited);
  }
}

/** A message from an input box (holding `draft`); one that starts an agent's `/` command
 * picks it (with its description), then asks for the rest of the message. */
async function compose(draft?: string): Promise<string | undefined> {
  const sessionId = await session();
  const images = attached.length ? ` · 📎 ${attached.length} image(s)` : "";
  const message = await vscode.window.showInputBox({ prompt: agentCalled + images, placeHolder: "a message; / for the agent's commands", value: draft });
  const candidates = message === undefined ? undefined : slashCandidates(message, chats.get(sessionId)?.commands ?? []);
  if (!candidates) return message;
  const items = candidates.map((c) => ({ label: `/${c.name}`, description: c.description }));
  const command = await vscode.window.showQuickPick(items, { placeHolder: "the agent's commands" });
  if (!command) return undefined;
  const start = `${command.label} `;
  return vscode.window.showInputBox({ prompt: agentCalled, value: start, valueSelection: [start.length, start.length] });
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

interface Forked {
  sessionId: string;
  seed?: string;
  notForked?: string;
}

/** The turn a fork starts from: the one named (a CodeLens), else the one the cursor of the
 * chat's editor is in; undefined, said why, when there is none to fork from. */
function turnToFork(sessionId?: string, messageId?: string): { sessionId: string; messageId: string } | undefined {
  // From the editor's context menu the first argument is the document's address.
  if (typeof sessionId === "string" && typeof messageId === "string") return { sessionId, messageId };
  const editor = vscode.window.activeTextEditor;
  const chat = editor?.document.uri.scheme === "goose-chat" ? chats.get(editor.document.uri.path) : undefined;
  if (!editor || !chat) return void vscode.window.showErrorMessage("goose: Fork chat here works in a chat: put the cursor on a turn");
  const line = editor.selection.active.line;
  const turn = chat.turnAt(line);
  if (!turn) return void vscode.window.showErrorMessage(`goose: line ${line + 1} is in no turn: put the cursor on a turn (its heading or below it)`);
  if (turn.end === undefined) return void vscode.window.showErrorMessage("goose: that turn is still running; fork it once it has ended");
  return { sessionId: chat.sessionId, messageId: turn.messageId };
}

/** Fork chat here: a new chat that goes on from the end of a turn (goose/forkSession),
 * shown as a chat picked from Sessions is. Where the agent could not fork, the summary
 * goose-ls answers is offered in the message input box, to edit and send (nothing is sent
 * unless the user does); the input box holds one line, so the summary's lines are joined. */
async function fork(sessionId?: string, messageId?: string): Promise<void> {
  const turn = turnToFork(sessionId, messageId);
  if (!turn) return;
  let forked: Forked;
  try {
    forked = await client!.sendRequest<Forked>("goose/forkSession", { ...turn, tabId: randomUUID() });
  } catch (error) {
    return void vscode.window.showErrorMessage(`goose: ${error instanceof Error ? error.message : String(error)}`);
  }
  current = forked.sessionId;
  chatOf(current); // its history came before the answer
  showStatus();
  await vscode.window.showTextDocument(await chatDocument(current), { preview: false });
  if (typeof forked.seed !== "string") return;
  void vscode.window.showWarningMessage(`goose: not a fork (${oneLine(forked.notForked ?? "the agent cannot fork")}); edit the summary, then send it`);
  const summary = forked.seed.split(/\n+/).map((line) => line.trim()).filter(Boolean).join(" · ");
  const message = await vscode.window.showInputBox({ prompt: agentCalled, value: summary, ignoreFocusOut: true });
  if (message) await ask(message, []);
}

/** "Fork chat here" over each ended turn of a chat document. */
const forkLenses: vscode.CodeLensProvider = {
  provideCodeLenses(document) {
    const chat = chats.get(document.uri.path);
    return (chat?.turns ?? [])
      .filter((turn) => turn.end !== undefined)
      .map((turn) => new vscode.CodeLens(new vscode.Range(turn.start, 0, turn.start, 0), { title: "Fork chat here", command: "gooseLs.fork", arguments: [chat!.sessionId, turn.messageId] }));
  },
};

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

/** A declared setting: its key under `goose`, and whether the user alone may set it
 * (`"scope": "machine"` in package.json; docs/configuration.md, "Who may set what"). */
interface Declared {
  key: string;
  userOnly: boolean;
}

/** The settings package.json declares, less `serverPath` (this extension's own: how to
 * start goose-ls). Only these are ever sent: a key a workspace invents is not. */
function declaredSettings(): Declared[] {
  const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf-8"));
  const properties: Record<string, { scope?: string }> = manifest.contributes.configuration.properties;
  return Object.entries(properties)
    .filter(([name]) => name.startsWith("goose.") && name !== "goose.serverPath")
    .map(([name, property]) => ({ key: name.slice("goose.".length), userOnly: property.scope === "machine" || property.scope === "application" }));
}

/** The user's own value of a setting (their settings.json), never a workspace's: VS Code
 * already ignores a workspace's value of a `machine` setting; this holds even where it
 * would not. */
function userValue(config: vscode.WorkspaceConfiguration, key: string): unknown {
  return config.inspect(key)?.globalValue;
}

/** The goose-ls settings that are set, as one object. Without `scope`: the user's alone
 * (what goose-ls takes as theirs). With it: the folder's view, each user-only setting
 * still the user's own (goose-ls also ignores one a folder's answer sets). */
function settingsFor(scope?: vscode.Uri): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("goose", scope);
  const settings: Record<string, unknown> = {};
  for (const { key, userOnly } of declaredSettings()) {
    const seen = config.inspect(key);
    const value = scope === undefined || userOnly ? seen?.globalValue : (seen?.workspaceFolderValue ?? seen?.workspaceValue ?? seen?.globalValue);
    if (value === undefined || value === null) continue;
    const path = key.split(".");
    let node = settings;
    for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]] = value;
  }
  return settings;
}

/** Of the user's settings, those goose-ls reads only from initializationOptions. */
function startOnly(settings: Record<string, unknown>): Record<string, unknown> {
  return settings.dataDir === undefined ? {} : { dataDir: settings.dataDir };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const serverPath = userValue(vscode.workspace.getConfiguration("goose"), "serverPath");
  const serverOptions: ServerOptions = { command: typeof serverPath === "string" && serverPath ? serverPath : "goose-ls" };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    synchronize: { configurationSection: "goose" },
    middleware: {
      workspace: {
        // The settings go to goose-ls as it asks for them (below), not pushed whole.
        didChangeConfiguration: (_sections, next) => next(undefined),
        // Each item of section `goose` answered from the declared settings alone: the
        // user's without a scopeUri, the folder's view with one (user-only ones the user's).
        configuration: async (params, token, next) => {
          const values = await next(params, token);
          if (!Array.isArray(values)) return values;
          return values.map((value, i) => {
            const item = params.items[i];
            if (item?.section !== "goose") return value;
            return settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined);
          });
        },
      },
    },
    initializationOptions: {
      // Only what goose-ls reads at initialize alone (where its store is): every other
      // setting comes in the answers to workspace/configuration, which follow each change.
      // Sent here too, a setting later taken out of settings.json would stay, beneath them.
      ...startOnly(settingsFor()), // the user's own, as goose-ls takes initializationOptions
      gooseUpdates: true, // goose/update from the start (docs/protocol.md)
    },
  };
  client = new LanguageClient("goose-ls", "goose-ls", serverOptions, clientOptions);
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider("goose-chat", documents));
  context.subscriptions.push(vscode.workspace.onDidChangeTextDocument(follow));
  // Each subagent's block in a chat folds (its heading's fold control, or Fold, Ctrl+Shift+[).
  context.subscriptions.push(
    vscode.languages.registerFoldingRangeProvider(
      { scheme: "goose-chat" },
      {
        provideFoldingRanges: (doc) =>
          (chats.get(doc.uri.path)?.folds ?? []).map(({ start, end }) => new vscode.FoldingRange(start, end, vscode.FoldingRangeKind.Region)),
      },
    ),
  );
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider("goose-diff", { provideTextDocumentContent: (uri) => sides.get(uri.path) ?? "" }),
  );
  client.onNotification("goose/update", (params: Update) => {
    const chat = chatOf(params.sessionId);
    if (chat.apply(params)) documents.changed.fire(chatUri(params.sessionId));
    void catchUp(chat);
    const u = params.update;
    if (u.sessionUpdate === "permission_request") askPermission(params);
    if (u.sessionUpdate === "permission_resolved") permissionResolved(u.requestId as string);
    if (u.sessionUpdate === "elicitation_request" && !params.replay) void answerQuestion(params.sessionId, u as unknown as Question);
    if (u.sessionUpdate === "elicitation_resolved") {
      questions.get(u.requestId as string)?.cancel();
      questions.delete(u.requestId as string);
    }
    showStatus();
  });
  client.onNotification("goose/agentStatus", (status: AgentStatus) => {
    agent = status;
    if (status.name !== undefined) agentCalled = agentName(status.name);
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
      const question = await vscode.window.showInputBox({ prompt: `Ask ${agentCalled === "agent" ? "the agent" : agentCalled}` });
      if (!question) return;
      const { start, end } = editor.selection;
      // Whole lines picked (Shift+Down, the line numbers) end at the start of the next
      // line, which holds nothing of the selection.
      const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
      await ask(question, [{ type: "selection", uri: editor.document.uri.toString(), startLine: start.line + 1, endLine: last + 1 }]);
    }),
    vscode.commands.registerCommand("gooseLs.send", async () => {
      const message = await compose();
      if (message) await sendMessage(message);
    }),
    vscode.commands.registerCommand("gooseLs.attachImage", attachImage),
    vscode.commands.registerCommand("gooseLs.pasteImage", pasteImage),
    vscode.commands.registerCommand("gooseLs.dropImages", dropImages),
    vscode.commands.registerCommand("gooseLs.sendNow", sendNow),
    vscode.commands.registerCommand("gooseLs.permission", () => answerPermission()),
    vscode.commands.registerCommand("gooseLs.cancel", async () => {
      if (current) await client!.sendRequest("goose/cancel", { sessionId: current });
    }),
    vscode.commands.registerCommand("gooseLs.sessions", async () => {
      const result = await client!.sendRequest<{ sessions: { sessionId: string; title: string }[] }>("goose/listSessions", {});
      const pick = await vscode.window.showQuickPick(result.sessions.map((s) => ({ label: oneLine(s.title), description: s.sessionId })));
      if (!pick?.description) return;
      current = pick.description;
      const chat = chatOf(current);
      showStatus();
      await client!.sendRequest("goose/loadSession", { sessionId: current });
      await catchUp(chat, true); // the history the journal holds, from where the chat is
      await vscode.window.showTextDocument(await chatDocument(current), { preview: false });
    }),
    vscode.commands.registerCommand("gooseLs.setOption", setOption),
    vscode.commands.registerCommand("gooseLs.fork", fork),
    vscode.languages.registerCodeLensProvider({ scheme: "goose-chat" }, forkLenses),
    vscode.commands.registerCommand("gooseLs.restart", async () => {
      await client!.sendRequest("goose/restart", {});
    }),
    // agent.share: a new goose serve for every window (after `goose configure`, say).
    vscode.commands.registerCommand("gooseLs.restartServer", async () => {
      await client!.sendRequest("goose/restart", { server: true });
    }),
    vscode.commands.registerCommand("gooseLs.signIn", () => signIn(agent.signIn ?? [], (method, params) => client!.sendRequest(method, params))),
  );
  try {
    await client.start();
  } catch (error) {
    // Not found, most often: VS Code starts it with the PATH of a login shell.
    const why = error instanceof Error ? error.message : String(error);
    notStarted = `goose: could not start goose-ls (${why}). Install it, or set goose.serverPath to its full path (\`command -v goose-ls\` in a terminal), then reload the window.`;
    showStatus();
    void Promise.resolve(vscode.window.showErrorMessage(notStarted, "Open Settings")).then((choice) => {
      if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "goose.serverPath");
    });
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  // Activated again, the extension talks to a new goose-ls: these chats were the old one's.
  client = undefined;
  current = undefined;
  notStarted = undefined;
  agent = { state: "stopped" };
  agentCalled = "agent";
  chats.clear();
  questions.clear();
  permissions.clear();
  sides.clear();
  lineCounts.clear();
  catchingUp.clear();
  attached.length = 0;
}
