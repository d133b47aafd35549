// Signing in to the agent: its terminal sign-in (named in goose/agentStatus `signIn`, its
// command given by goose/signInCommand) run in a VS Code terminal, where the user answers
// it; once it exits 0, goose-ls connects to the agent again (goose/authenticate with its
// methodId). An agent without one is asked to sign in with the methods that work on their
// own (goose/authenticate alone).
import * as vscode from "vscode";

export interface SignIn {
  methodId: string;
  label: string;
}

interface TerminalCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface AgentStatus {
  state: string;
  reason?: string;
  message?: string;
  /** The agent's name for people (while it runs). */
  name?: string;
  signIn?: SignIn[];
}

interface Authenticated {
  signedIn: boolean;
  agent: AgentStatus;
}

type Request = <R>(method: string, params: object) => Promise<R>;

function report(result: Authenticated): void {
  if (result.signedIn) void vscode.window.showInformationMessage("goose: signed in");
  else void vscode.window.showWarningMessage(`goose: not signed in: ${result.agent.message ?? "?"}`);
}

/** Run one sign-in's command (goose/signInCommand) in a terminal; take it up when its
 * process exits 0. */
async function run(signIn: SignIn, request: Request): Promise<void> {
  const command = await request<TerminalCommand>("goose/signInCommand", { methodId: signIn.methodId });
  const terminal = vscode.window.createTerminal({
    name: `goose: ${signIn.label}`,
    shellPath: command.command,
    shellArgs: command.args,
    env: command.env,
  });
  const closed = vscode.window.onDidCloseTerminal(async (ended) => {
    if (ended !== terminal) return;
    closed.dispose();
    const code = ended.exitStatus?.code;
    if (code !== 0) {
      void vscode.window.showWarningMessage(`goose: the sign-in exited with code ${code ?? "?"}; not signed in`);
      return;
    }
    report(await request<Authenticated>("goose/authenticate", { methodId: signIn.methodId }));
  });
  terminal.show();
}

/** "Goose: Sign in": the terminal sign-in goose-ls gave (the user picks among several);
 * else goose-ls tries the methods that work on their own, and gives one when none did. */
export async function signIn(known: SignIn[], request: Request): Promise<void> {
  let signIns = known;
  if (signIns.length === 0) {
    const result = await request<Authenticated>("goose/authenticate", {});
    signIns = result.agent.signIn ?? [];
    if (result.signedIn || signIns.length === 0) return report(result);
  }
  const items = signIns.map((s) => ({ label: s.label, signIn: s }));
  const chosen = items.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { placeHolder: "goose: sign in with" });
  if (chosen) await run(chosen.signIn, request);
}
