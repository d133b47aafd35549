"""The goose.* commands, one table: name, title, typed arguments, handler.

Code actions take their titles from this table, ``workspace/executeCommand`` is served
from it, and the docs list it. A command checks its arguments at once (InvalidParams
names the wrong one) and answers; its work runs in the background, because eglot
blocks the editor until a command answers and Helix gives up after about 20 s. What
goes wrong in that work is shown as a message.

The table is the one list of commands, read by code actions, ``executeCommand`` and the
docs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.atomic_files import atomic_write
from goose_ls.errors import GooseLsError, Refused, UnknownSession
from goose_ls.lsp import command_args as args
from goose_ls.lsp.chat.elicitation_prompts import open_page
from goose_ls.lsp.chat.export import export
from goose_ls.lsp.chat.sessions_view import show_index
from goose_ls.lsp.positions import Range
from goose_ls.lsp.prompt_context import selection
from goose_ls.lsp.services import Services, ServicesSlot
from goose_ls.sessions import Conflict, ContextItem, named_image, path_of, unified_diff
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)

EXPLAIN = "Explain what this code does and anything surprising in it."

Handler = Callable[[Services, Any], Awaitable[None]]


@attrs.frozen
class Command:
    name: str
    title: str
    arguments: type
    """The arguments class (:mod:`goose_ls.lsp.command_args`), fields in argument order."""
    run: Handler
    helix_lines: bool = False
    """Also takes Helix's ``path first last`` in place of ``uri range``."""


# --- what the arguments mean -----------------------------------------------------------
def _uri(s: Services, value: str) -> str:
    """A URI as it is; a path (``~`` expanded, relative to the workspace) as a file URI."""
    if "://" in value:
        return value
    value = os.path.expanduser(value)  # Helix shows files outside the cwd as ~/...
    path = Path(value) if os.path.isabs(value) else Path(s.root) / value
    return path.resolve().as_uri()


def _selection(s: Services, file: str, line_range: Range) -> ContextItem:
    return selection(s.editor, _uri(s, file), *line_range.lines())


def _transcript(s: Services, a: args.ChatArguments) -> str | None:
    return _uri(s, a.transcript) if a.transcript else None


def _fix_prompt(diagnostics: list[dict[str, Any]]) -> str:
    lines = ["Fix these problems in the selected code:"]
    for d in diagnostics:
        source = f" [{d['source']}]" if d.get("source") else ""
        lines.append(f"- line {d.get('line', '?')}: {d.get('message', '')}{source}")
    return "\n".join(lines)


def _info(s: Services, message: str) -> None:
    s.editor.show(types.MessageType.Info, f"goose: {message}")


# --- the handlers ----------------------------------------------------------------------
async def ask(s: Services, a: args.SelectionArguments) -> None:
    await s.chat.attach([_selection(s, a.file, a.range)])


async def new_chat(s: Services, a: args.SelectionArguments) -> None:
    await s.chat.attach([_selection(s, a.file, a.range)], new=True)


async def explain(s: Services, a: args.SelectionArguments) -> None:
    await s.chat.ask_now(EXPLAIN, [_selection(s, a.file, a.range)], "explain")


async def fix_diagnostics(s: Services, a: args.FixArguments) -> None:
    await s.chat.ask_now(_fix_prompt(a.diagnostics), [_selection(s, a.file, a.range)], "fix")


async def _added(s: Services, item: ContextItem) -> None:
    transcript = await s.chat.attach([item], show=False)
    _info(s, f"added to the chat's context ({len(transcript.context)} item(s))")


async def add_selection(s: Services, a: args.SelectionArguments) -> None:
    await _added(s, _selection(s, a.file, a.range))


async def add_file(s: Services, a: args.FileArguments) -> None:
    uri = _uri(s, a.file)
    await _added(s, ContextItem(type="image" if named_image(path_of(uri)) else "file", uri=uri))


async def open_chat(s: Services, _: args.NoArguments) -> None:
    await s.transcripts.show(await s.chat.transcript())


async def send(s: Services, a: args.ChatArguments) -> None:
    await s.chat.send(_transcript(s, a))


async def send_now(s: Services, a: args.ChatArguments) -> None:
    transcript = await s.chat.transcript(uri=_transcript(s, a))
    if await s.sessions.steer_now(transcript.session_id):
        _info(s, "sent into the running turn")
    else:
        _info(s, "the turn ended first: your message is sent next")


async def cancel(s: Services, a: args.ChatArguments) -> None:
    if not await s.chat.cancel(_transcript(s, a)):
        _info(s, "nothing to cancel")


async def permission(s: Services, a: args.PermissionArguments) -> None:
    permissions = s.sessions.permissions
    if a.option_id is not None:
        request_id, choice = a.request_or_kind, a.option_id
    elif pending := permissions.pending_requests():
        # An answer without a request id is only ever for the one chat asking: never a
        # card of another chat, which the user may not have read.
        if len(chats := {permissions.session_of(request_id) for request_id in pending}) > 1:
            raise Refused(
                f"permission requests wait in {len(chats)} chats: answer one on its card "
                "(its code actions), or name its request id"
            )
        request_id, choice = pending[0], a.request_or_kind
        session_id = permissions.session_of(request_id)
        if len(pending) > 1:
            raise Refused(
                f"{len(pending)} permission requests wait in this chat: answer one on its "
                "card (its code actions), or name its request id"
            )
        if session_id is not None and permissions.replaced(session_id):
            # The card the user read may be the one withdrawn: this one is new to them.
            raise Refused(
                "the agent withdrew a permission request and asks another: read its card "
                f"({permissions.action_of(request_id)}), then answer again"
            )
    else:
        raise Refused("no permission request is waiting")
    option_id = permissions.option_for(request_id, choice, by_kind=a.option_id is None)
    if option_id is None:
        raise Refused(f"{choice!r} is not an option of request {request_id}")
    permissions.answer(request_id, option_id)


async def question(s: Services, a: args.QuestionArguments) -> None:
    questions = s.sessions.questions
    if not questions.waiting(a.request_id):
        raise Refused(f"no question {a.request_id!r} is waiting")
    if a.action != "open":
        questions.answer(a.request_id, a.action)
    elif (url := questions.page_of(a.request_id)) is None:
        raise Refused(f"question {a.request_id!r} asks to open no page")
    else:
        await open_page(s.editor, questions, a.request_id, url)


async def sessions_index(s: Services, _: args.NoArguments) -> None:
    await show_index(s.editor, s.sessions)


async def open_session(s: Services, a: args.SessionArguments) -> None:
    await s.chat.open_session(a.session_id)


async def fork_chat(s: Services, a: args.ForkArguments) -> None:
    forked = await s.chat.fork(a.session_id, a.message_id)
    if forked.seed is not None:
        _info(s, f"not a fork ({forked.why}): a new chat starts with a summary to edit and send")


async def rename_session(s: Services, a: args.RenameArguments) -> None:
    s.sessions.rename(a.session_id, a.title)
    await show_index(s.editor, s.sessions)


async def delete_session(s: Services, a: args.SessionArguments) -> None:
    await s.sessions.delete_session(a.session_id)
    await show_index(s.editor, s.sessions)


async def export_chat(s: Services, a: args.ExportArguments) -> None:
    session_id = a.session_id or s.chat.current_session or s.sessions.last_used()
    if session_id is None:
        raise Refused("there is no chat to export yet", "Open one first (Goose: Open chat)")
    path = export(s.sessions, Path(s.root), session_id, a.path)
    if not await s.editor.show_document(path):
        _info(s, f"the chat was exported to {path}")


async def set_mode(s: Services, a: args.ModeArguments) -> None:
    await s.sessions.set_mode(a.session_id, a.mode_id)


async def set_config_option(s: Services, a: args.OptionArguments) -> None:
    await s.sessions.set_config_option(a.session_id, a.config_id, a.value)


async def restart(s: Services, _: args.NoArguments) -> None:
    await s.sessions.restart()
    _info(s, "the agent was restarted")


async def restart_server(s: Services, _: args.NoArguments) -> None:
    await s.sessions.restart(server=True)
    _info(s, "the agent and its shared goose serve were restarted")


async def authenticate(s: Services, _: args.NoArguments) -> None:
    if await s.sessions.authenticate():
        _info(s, "signed in to the agent")


async def logout(s: Services, _: args.NoArguments) -> None:
    await s.sessions.logout()
    _info(s, "signed out of the agent")


async def trust_policy(s: Services, a: args.TrustArguments) -> None:
    path = s.sessions.trust_policy(a.digest)
    _info(s, f"{path} is trusted: its allow rules apply until it changes")


async def prune_journal(s: Services, _: args.NoArguments) -> None:
    pruned = await s.sessions.prune()
    if pruned is None:
        raise Refused("the journal could not be opened (chats are kept in memory); nothing pruned")
    _info(s, str(pruned))


async def review_turn(s: Services, a: args.ChatArguments) -> None:
    await s.chat.review(_transcript(s, a))


async def revert_turn(s: Services, a: args.ChatArguments) -> None:
    await s.chat.revert_turn(_transcript(s, a))


async def revert_file(s: Services, a: args.FileArguments) -> None:
    await s.chat.revert_file(_uri(s, a.file))


def _conflict(s: Services, file: str) -> tuple[Path, Conflict]:
    path = Path(path_of(_uri(s, file)))
    conflict = s.sessions.open_files.conflicts.get(path)
    if conflict is None:
        raise Refused(f"{path.name} has no conflict with the agent's version")
    return path, conflict


async def take_agent_version(s: Services, a: args.FileArguments) -> None:
    path, _ = _conflict(s, a.file)
    try:
        await s.sessions.open_files.take_agents(path)
    except OSError as exc:
        raise Refused(
            f"{path.name} keeps your version: the editor did not apply it ({exc})"
        ) from None
    hint = s.sessions.open_files.reload_hint()
    _info(s, f"{path.name} now holds the agent's version (one undo brings yours back).{hint}")


async def keep_my_version(s: Services, a: args.FileArguments) -> None:
    path, conflict = _conflict(s, a.file)
    s.sessions.open_files.keep_mine(path)
    _info(
        s, f"{path.name} keeps your version; save it to write it. The agent's is in {conflict.copy}"
    )


async def compare_agent_version(s: Services, a: args.FileArguments) -> None:
    path, conflict = _conflict(s, a.file)
    mine = s.editor.buffer_text(path.as_uri()) or ""
    body = unified_diff(mine, conflict.agent_text, path.name)
    fence = "`" * max(3, max((len(r) for r in re.findall("`+", body)), default=0) + 1)
    text = (
        f"# {path.name}: your buffer (-) and the agent's version (+)\n\n"
        f"The agent's version is kept in `{conflict.copy}`.\n\n{fence}diff\n{body}{fence}\n"
    )
    shown = conflict.copy.with_name(f"{conflict.copy.name}.diff.md")
    atomic_write(shown, text)
    if not await s.editor.show_document(shown):  # eglot 1.9 opens nothing
        _info(s, f"the difference is in {shown}")


COMMANDS = {
    command.name: command
    for command in [
        Command("goose.ask", "Goose: Ask about selection", args.SelectionArguments, ask, True),
        Command(
            "goose.explain", "Goose: Explain selection", args.SelectionArguments, explain, True
        ),
        Command(
            "goose.fixDiagnostics",
            "Goose: Fix these diagnostics",
            args.FixArguments,
            fix_diagnostics,
            True,
        ),
        Command(
            "goose.addSelection",
            "Goose: Add selection to context",
            args.SelectionArguments,
            add_selection,
            True,
        ),
        Command("goose.addFile", "Goose: Add file to context", args.FileArguments, add_file),
        Command(
            "goose.newChat",
            "Goose: New chat from selection",
            args.SelectionArguments,
            new_chat,
            True,
        ),
        Command("goose.openChat", "Goose: Open chat", args.NoArguments, open_chat),
        Command("goose.send", "Goose: Send", args.ChatArguments, send),
        Command(
            "goose.sendNow", "Goose: Send now, into the running turn", args.ChatArguments, send_now
        ),
        Command("goose.cancel", "Goose: Cancel", args.ChatArguments, cancel),
        Command(
            "goose.permission",
            "Goose: Answer a permission request",
            args.PermissionArguments,
            permission,
        ),
        Command(
            "goose.question",
            "Goose: Decline or cancel a question",
            args.QuestionArguments,
            question,
        ),
        Command("goose.sessions", "Goose: Sessions", args.NoArguments, sessions_index),
        Command("goose.openSession", "Goose: Open session", args.SessionArguments, open_session),
        Command(
            "goose.renameSession", "Goose: Rename session", args.RenameArguments, rename_session
        ),
        Command(
            "goose.deleteSession", "Goose: Delete session", args.SessionArguments, delete_session
        ),
        Command("goose.exportChat", "Goose: Export chat", args.ExportArguments, export_chat),
        Command("goose.setMode", "Goose: Set mode", args.ModeArguments, set_mode),
        Command(
            "goose.setConfigOption", "Goose: Set option", args.OptionArguments, set_config_option
        ),
        Command("goose.restart", "Goose: Restart agent", args.NoArguments, restart),
        Command(
            "goose.restartServer",
            "Goose: Restart the shared goose serve",
            args.NoArguments,
            restart_server,
        ),
        Command("goose.pruneJournal", "Goose: Prune old chats", args.NoArguments, prune_journal),
        Command("goose.forkChat", "Goose: Fork chat here", args.ForkArguments, fork_chat),
        Command("goose.reviewTurn", "Goose: Review turn changes", args.ChatArguments, review_turn),
        Command("goose.revertTurn", "Goose: Revert turn", args.ChatArguments, revert_turn),
        Command("goose.revertFile", "Goose: Revert file", args.FileArguments, revert_file),
        Command(
            "goose.takeAgentVersion",
            "Goose: Take the agent's version",
            args.FileArguments,
            take_agent_version,
        ),
        Command(
            "goose.keepMyVersion", "Goose: Keep my version", args.FileArguments, keep_my_version
        ),
        Command(
            "goose.compareAgentVersion",
            "Goose: Compare with the agent's version",
            args.FileArguments,
            compare_agent_version,
        ),
        Command(
            "goose.authenticate", "Goose: Sign in to the agent", args.NoArguments, authenticate
        ),
        Command("goose.logout", "Goose: Sign out of the agent", args.NoArguments, logout),
        Command(
            "goose.trustWorkspacePolicy",
            "Goose: Trust this workspace policy",
            args.TrustArguments,
            trust_policy,
        ),
    ]
}


async def _run(s: Services, command: Command, arguments: Any) -> None:
    """A command's work, with what goes wrong told to the user."""
    try:
        await command.run(s, arguments)
    except GooseLsError as exc:
        expected = isinstance(exc, (Refused, UnknownSession))
        kind = types.MessageType.Warning if expected else types.MessageType.Error
        s.editor.show(kind, f"goose: {command.name}: {exc}")
    except Exception:  # a bug of ours: the user is told where to look, the log has it all
        log.exception("%s failed", command.name)
        s.editor.show(
            types.MessageType.Error, f"goose: {command.name} failed; see the goose-ls log"
        )


# How long the answer to workspace/executeCommand waits for the command's work. A quick
# command's message then goes out before its answer: eglot 1.9 (Emacs 28) reads the
# messages behind the answer to its own request only when the server next writes, so a
# message sent just after the answer sat unseen. A long command (a turn) is answered
# then and goes on in the background, so an editor that waits for the answer (eglot
# does) is not held.
ANSWER_WITHIN = 0.5


def _handler(
    command: Command, services: ServicesSlot, tasks: Tasks
) -> Callable[..., Awaitable[None]]:
    async def handle(_: LanguageServer, *arguments: Any) -> None:
        given = list(arguments)
        if command.helix_lines:
            given = args.lsp_range(given)
        parsed: Any = args.parse_arguments(command.name, given, command.arguments)
        work = tasks.run(_run(services(), command, parsed), command.name)
        await asyncio.wait({work}, timeout=ANSWER_WITHIN)

    return handle


def register(server: LanguageServer, services: ServicesSlot, tasks: Tasks) -> None:
    for command in COMMANDS.values():
        server.command(command.name)(_handler(command, services, tasks))
