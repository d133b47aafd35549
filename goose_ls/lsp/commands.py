"""``workspace/executeCommand`` handlers: they answer at once and work in the background.

eglot blocks the editor until a command answers and Helix gives up after about 20 s, so
no handler here waits for the agent. Each also accepts the arguments Helix can type:
``:lsp-workspace-command goose.ask "%{buffer_name}" %{selection_line_start} %{selection_line_end}``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from lsprotocol import types

from goose_ls.agent.discovery import AgentUnavailable
from goose_ls.agent.interface import AgentError
from goose_ls.lsp.chat import NothingToSend
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.sessions_view import show_index
from goose_ls.sessions.context import ContextItem
from goose_ls.sessions.manager import UnknownSession

log = logging.getLogger(__name__)

TITLES = {
    "goose.ask": "Goose: Ask about selection",
    "goose.explain": "Goose: Explain selection",
    "goose.fixDiagnostics": "Goose: Fix these diagnostics",
    "goose.addSelection": "Goose: Add selection to context",
    "goose.addFile": "Goose: Add file to context",
    "goose.newChat": "Goose: New chat from selection",
    "goose.openChat": "Goose: Open chat",
    "goose.send": "Goose: Send",
    "goose.cancel": "Goose: Cancel",
    "goose.permission": "Goose: Answer a permission request",
    "goose.sessions": "Goose: Sessions",
    "goose.openSession": "Goose: Open session",
    "goose.renameSession": "Goose: Rename session",
    "goose.deleteSession": "Goose: Delete session",
    "goose.setMode": "Goose: Set mode",
    "goose.setConfigOption": "Goose: Set option",
    "goose.restart": "Goose: Restart agent",
    "goose.reviewTurn": "Goose: Review turn changes",
    "goose.revertTurn": "Goose: Revert turn",
    "goose.revertFile": "Goose: Revert file",
    "goose.authenticate": "Goose: Sign in to the agent",
}

EXPLAIN = "Explain what this code does and anything surprising in it."


class BadArguments(ValueError):
    pass


def _uri(value: Any, root: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadArguments("expected a file URI or path as the first argument")
    if "://" in value:
        return value
    value = os.path.expanduser(value)  # Helix shows files outside the cwd as ~/...
    path = Path(value) if os.path.isabs(value) else Path(root) / value
    return path.resolve().as_uri()


def _lines(args: list[Any]) -> tuple[int, int]:
    """1-based lines from an LSP range ``{start, end}`` or from Helix's two line numbers."""
    if args and isinstance(args[0], dict):
        start, end = args[0].get("start", {}), args[0].get("end", {})
        first, last = int(start.get("line", 0)) + 1, int(end.get("line", 0)) + 1
        if end.get("character", 0) == 0 and last > first:
            last -= 1  # a selection ending at column 0 does not include that line
        return first, max(first, last)
    if len(args) >= 2 and all(isinstance(a, int) for a in args[:2]):
        return max(1, args[0]), max(args[0], args[1])
    if len(args) == 1 and isinstance(args[0], int):
        return max(1, args[0]), max(1, args[0])
    raise BadArguments("expected a range, or a start line and an end line")


def selection(ls: GooseLanguageServer, args: list[Any]) -> ContextItem:
    uri = _uri(args[0] if args else None, ls.root)
    first, last = _lines(list(args[1:]))
    try:
        lines = ls.workspace.get_text_document(uri).lines
    except OSError as exc:
        raise BadArguments(f"cannot read {uri}: {exc.strerror}") from None
    text = "".join(lines[first - 1 : last])
    return ContextItem(type="selection", uri=uri, text=text, start_line=first, end_line=last)


def _fix_prompt(diagnostics: list[Any]) -> str:
    lines = ["Fix these problems in the selected code:"]
    for d in diagnostics if isinstance(diagnostics, list) else []:
        if isinstance(d, dict):
            source = f" [{d['source']}]" if d.get("source") else ""
            lines.append(f"- line {d.get('line', '?')}: {d.get('message', '')}{source}")
    return "\n".join(lines)


def register(server: GooseLanguageServer) -> None:
    def background(ls: GooseLanguageServer, name: str, work: Awaitable[Any]) -> None:
        async def run() -> None:
            try:
                await work
            except UnknownSession as exc:
                _show(ls, types.MessageType.Warning, f"goose: unknown session {exc}")
            except (BadArguments, NothingToSend) as exc:
                _show(ls, types.MessageType.Warning, f"goose: {exc}")
            except AgentUnavailable as exc:
                _show(ls, types.MessageType.Error, f"goose: {exc.message}. {exc.fix}")
            except AgentError as exc:
                _show(ls, types.MessageType.Error, f"goose: {exc}")
            except Exception:
                log.exception("%s failed", name)
                _show(ls, types.MessageType.Error, f"goose: {name} failed; see the goose-ls log")

        task = asyncio.create_task(run())
        ls.background_tasks.add(task)
        task.add_done_callback(ls.background_tasks.discard)

    def command(name: str, work: Any) -> None:
        @server.command(name)
        def handler(ls: GooseLanguageServer, *args: Any) -> None:
            try:
                coroutine = work(ls, list(args))
            except BadArguments as exc:
                _show(ls, types.MessageType.Warning, f"goose: {name}: {exc}")
                return None
            background(ls, name, coroutine)
            return None

    command("goose.ask", lambda ls, a: ls.chat.attach([selection(ls, a)]))
    command("goose.newChat", lambda ls, a: ls.chat.attach([selection(ls, a)], new=True))
    command("goose.explain", lambda ls, a: ls.chat.ask_now(EXPLAIN, [selection(ls, a)], "explain"))
    command(
        "goose.fixDiagnostics",
        lambda ls, a: ls.chat.ask_now(
            _fix_prompt(a[2] if len(a) > 2 else []), [selection(ls, a[:2])], "fix"
        ),
    )
    command("goose.addSelection", lambda ls, a: _added(ls, selection(ls, a)))
    command(
        "goose.addFile",
        lambda ls, a: _added(ls, ContextItem(type="file", uri=_uri(a[0] if a else None, ls.root))),
    )
    command("goose.openChat", lambda ls, a: _open(ls))
    command("goose.send", lambda ls, a: ls.chat.send(_optional_uri(ls, a)))
    command("goose.cancel", lambda ls, a: _cancel(ls, _optional_uri(ls, a)))
    command("goose.permission", _permission)
    command("goose.sessions", lambda ls, a: show_index(ls))
    command("goose.openSession", lambda ls, a: ls.chat.open_session(_text(a, 0, "a session id")))
    command(
        "goose.renameSession",
        lambda ls, a: _renamed(ls, _text(a, 0, "a session id"), _text(a, 1, "a title")),
    )
    command("goose.deleteSession", lambda ls, a: _deleted(ls, _text(a, 0, "a session id")))
    command(
        "goose.setMode",
        lambda ls, a: ls.sessions.set_mode(_text(a, 0, "a session id"), _text(a, 1, "a mode id")),
    )
    command(
        "goose.setConfigOption",
        lambda ls, a: ls.sessions.set_config_option(
            _text(a, 0, "a session id"), _text(a, 1, "an option id"), _value(a)
        ),
    )
    command("goose.restart", lambda ls, a: _restarted(ls))
    command("goose.authenticate", lambda ls, a: _authenticated(ls))
    command("goose.reviewTurn", lambda ls, a: ls.chat.review(_optional_uri(ls, a)))
    command("goose.revertTurn", lambda ls, a: ls.chat.revert_turn(_optional_uri(ls, a)))
    command(
        "goose.revertFile", lambda ls, a: ls.chat.revert_file(_uri(a[0] if a else None, ls.root))
    )


def _text(args: list[Any], i: int, what: str) -> str:
    if len(args) <= i or not isinstance(args[i], str) or not args[i]:
        raise BadArguments(f"expected {what} as argument {i + 1}")
    return str(args[i])


def _value(args: list[Any]) -> str | bool:
    if len(args) < 3 or not isinstance(args[2], (str, bool)):
        raise BadArguments("expected the option's value as argument 3")
    value: str | bool = args[2]
    return value


async def _renamed(ls: GooseLanguageServer, session_id: str, title: str) -> None:
    ls.sessions.rename(session_id, title)
    await show_index(ls)


async def _deleted(ls: GooseLanguageServer, session_id: str) -> None:
    await ls.sessions.delete_session(session_id)
    ls.transcripts.delete(session_id)
    if ls.chat.current_session == session_id:
        ls.chat.current_session = None
    await show_index(ls)


async def _authenticated(ls: GooseLanguageServer) -> None:
    if await ls.sessions.authenticate():
        _show(ls, types.MessageType.Info, "goose: signed in to the agent")


async def _restarted(ls: GooseLanguageServer) -> None:
    await ls.sessions.restart()
    _show(ls, types.MessageType.Info, "goose: the agent was restarted")


def _optional_uri(ls: GooseLanguageServer, args: list[Any]) -> str | None:
    return _uri(args[0], ls.root) if args and isinstance(args[0], str) else None


async def _added(ls: GooseLanguageServer, item: ContextItem) -> None:
    transcript = await ls.chat.attach([item], show=False)
    count = len(transcript.context)
    _show(ls, types.MessageType.Info, f"goose: added to the chat's context ({count} item(s))")


async def _open(ls: GooseLanguageServer) -> None:
    await ls.transcripts.show(await ls.chat.transcript())


async def _cancel(ls: GooseLanguageServer, uri: str | None) -> None:
    if not await ls.chat.cancel(uri):
        _show(ls, types.MessageType.Info, "goose: nothing to cancel")


async def _permission(ls: GooseLanguageServer, args: list[Any]) -> None:
    """``[requestId, optionId]``, or just an option kind (``allow_once``...) for the oldest."""
    sessions = ls.sessions
    pending = sessions.pending_requests()
    if len(args) >= 2:
        request_id, choice = str(args[0]), str(args[1])
    elif len(args) == 1 and pending:
        request_id, choice = pending[0], str(args[0])
    else:
        raise BadArguments(
            "no permission request is waiting" if not pending else "say which option"
        )
    option_id = sessions.option_for_kind(request_id, choice)
    if option_id is None:
        raise BadArguments(f"{choice!r} is not an option of request {request_id}")
    sessions.answer_permission(request_id, option_id)


def _show(ls: GooseLanguageServer, kind: types.MessageType, message: str) -> None:
    ls.publisher.show(kind, message)
