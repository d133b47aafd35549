"""Code actions: the menu through which editors without a plugin reach goose.

Every action carries its command directly (Helix runs the unresolved command, eglot
resolves only in narrow cases), so nothing here needs ``codeAction/resolve``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.inert import inert_line
from goose_ls.lsp import capabilities
from goose_ls.lsp.chat.permission_prompts import rejecting_first
from goose_ls.lsp.chat.sessions_view import entry_at, index_path
from goose_ls.lsp.commands import COMMANDS
from goose_ls.lsp.option_choices import CATEGORY_LABELS, choices
from goose_ls.lsp.services import Services, ServicesSlot
from goose_ls.lsp.transcript.render import CHOICES, permission_marker, question_marker
from goose_ls.sessions import path_of
from goose_ls.wire import converter
from goose_ls.workspace.pages import origin


def _action(command: str, kind: str, *arguments: Any, title: str | None = None) -> types.CodeAction:
    title = title or COMMANDS[command].title
    return types.CodeAction(
        title=title,
        kind=kind,
        command=types.Command(title=title, command=command, arguments=list(arguments)),
    )


def source_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    selection = types.Range(start=params.range.start, end=params.range.end)
    where = converter.unstructure(selection)
    refactor = types.CodeActionKind.Refactor
    actions = [
        _action("goose.ask", refactor, uri, where),
        _action("goose.explain", refactor, uri, where),
    ]
    if params.context.diagnostics:
        fix = _action(
            "goose.fixDiagnostics",
            types.CodeActionKind.QuickFix,
            uri,
            where,
            [_diagnostic(d) for d in params.context.diagnostics],
        )
        fix.diagnostics = list(params.context.diagnostics)
        actions.insert(0, fix)
    actions += [
        _action("goose.addSelection", refactor, uri, where),
        _action("goose.addFile", refactor, uri),
        _action("goose.newChat", refactor, uri, where),
        _action("goose.openChat", refactor),
    ]
    return actions


def _diagnostic(diagnostic: types.Diagnostic) -> dict[str, Any]:
    return {
        "line": diagnostic.range.start.line + 1,
        "message": diagnostic.message,
        "source": diagnostic.source,
        "code": diagnostic.code,
    }


def transcript_actions(
    s: Services, uri: str, params: types.CodeActionParams
) -> list[types.CodeAction]:
    transcript = s.transcripts.by_uri(uri)
    assert transcript is not None
    refactor = types.CodeActionKind.Refactor
    actions = [_action("goose.send", refactor, uri)]
    session = s.sessions.find(transcript.session_id)
    if session is not None and session.active is not None:
        if s.sessions.can_steer(session.session_id):
            actions.append(_action("goose.sendNow", refactor, uri))
        actions.append(_action("goose.cancel", refactor, uri))
    if session is not None:  # a turn of before a restart may be reviewed too
        actions += [
            _action("goose.reviewTurn", refactor, uri),
            _action("goose.revertTurn", refactor, uri),
        ]
    line, lines = params.range.start.line, s.editor.document(uri).lines
    heading = lines[line] if line < len(lines) else ""
    if (turn := s.transcripts.turn_at(transcript, line, heading)) is not None:
        title = None
        if s.sessions.forks() is False:
            title = "Goose: New chat from here (the agent cannot fork: starts with a summary)"
        actions.append(
            _action("goose.forkChat", refactor, transcript.session_id, turn, title=title)
        )
    # Switching modes (one may stop all asking) and restarting come last, far from Send.
    actions += [
        _action("goose.exportChat", refactor, transcript.session_id),
        _action("goose.sessions", refactor),
        *option_actions(s, transcript.session_id),
        _action("goose.restart", refactor),
    ]
    session_id = transcript.session_id
    permissions = s.sessions.permissions
    for request_id in _cards_near(s, uri, params.range, session_id, permissions, permission_marker):
        action = _short(permissions.action_of(request_id))
        answers = [
            _action(
                "goose.permission",
                types.CodeActionKind.QuickFix,
                request_id,
                option.option_id,
                title=f"Goose: {option.label}: {action}",
            )
            for option in rejecting_first(permissions.offered(request_id))
        ]
        actions[:0] = answers
    questions = s.sessions.questions
    for request_id in _cards_near(s, uri, params.range, session_id, questions, question_marker):
        answers = [
            _action(
                "goose.question",
                types.CodeActionKind.QuickFix,
                request_id,
                action,
                title=f"Goose: {action.capitalize()} the question",
            )
            for action in ("decline", "cancel")
        ]
        if (page := questions.page_of(request_id)) is not None:
            title = f"Goose: Open the page on {origin(page)}: {_short(page)}"
            answers.append(
                _action(
                    "goose.question", types.CodeActionKind.QuickFix, request_id, "open", title=title
                )
            )
        actions[:0] = answers
    return actions


def _short(action: str, length: int = 60) -> str:
    """An action as a code action's title names it (a menu line)."""
    action = inert_line(action)
    return action if len(action) <= length else action[: length - 1] + "…"


class _Waiting(Protocol):
    def pending_requests(self, session_id: str | None = None) -> list[str]: ...


def _cards_near(
    s: Services,
    uri: str,
    selection: types.Range,
    session_id: str,
    waiting: _Waiting,
    marker_of: Callable[[str], str],
) -> list[str]:
    """Pending requests whose card the selection touches: from its marker line (which
    agent text cannot write: it is escaped, and the id is goose-ls's own random one) to
    its line of choices. Never another request: a code action answers the card it is on."""
    pending = waiting.pending_requests(session_id)
    transcript = s.transcripts.by_uri(uri)
    if not pending or transcript is None:
        return []
    lines = s.transcripts.sections.document_text(transcript).split("\n")
    return cards_at(lines, pending, marker_of, selection.start.line, selection.end.line)


def cards_at(
    lines: list[str], pending: list[str], marker_of: Callable[[str], str], first: int, last: int
) -> list[str]:
    """The ``pending`` requests whose card, in ``lines``, lies across lines ``first`` to
    ``last``: from its marker line to its line of choices."""
    near = []
    for request_id in pending:
        marker = marker_of(request_id)
        for start, line in enumerate(lines):
            if line != marker:
                continue
            end = next(
                (n for n in range(start + 1, len(lines)) if lines[n].startswith(CHOICES)),
                start,
            )
            if start <= last and first <= end:
                near.append(request_id)
    return near


def index_actions(s: Services, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Actions on the lines of the sessions index."""
    document = s.editor.document(params.text_document.uri)
    actions: list[types.CodeAction] = []
    deletes: list[types.CodeAction] = []  # last, away from Open: a slip costs a chat
    first, last = params.range.start.line, params.range.end.line
    for line in document.lines[first : last + 1]:
        entry = entry_at(line)
        if entry is None:
            continue
        session_id, title = entry
        refactor = types.CodeActionKind.Refactor
        actions += [
            _action("goose.openSession", refactor, session_id, title=f"Goose: Open “{title}”"),
            _action(
                "goose.renameSession",
                refactor,
                session_id,
                title,
                title=f"Goose: Rename {session_id} to “{title}”",
            ),
        ]
        deletes.append(
            _action("goose.deleteSession", refactor, session_id, title=f"Goose: Delete “{title}”")
        )
    return actions + deletes


def option_actions(s: Services, session_id: str) -> list[types.CodeAction]:
    """Switch mode or another config option of the transcript's session."""
    session = s.sessions.find(session_id)
    if session is None:
        return []
    refactor = types.CodeActionKind.Refactor
    options = session.options.config_options or []
    actions = [
        _action(
            "goose.setConfigOption",
            refactor,
            session_id,
            choice.config_id,
            choice.value,
            title=f"Goose: {choice.title}",
        )
        for choice in choices(options)
    ]
    modes = session.options.modes or {}
    if any(o.get("category") == "mode" for o in options):
        return actions
    return [
        _action(
            "goose.setMode",
            refactor,
            session_id,
            mode["id"],
            title=f"Goose: {CATEGORY_LABELS['mode']} → {mode.get('name', mode['id'])}",
        )
        for mode in modes.get("availableModes", [])
        if mode.get("id") != modes.get("currentModeId")
    ] + actions


def trust_actions(s: Services) -> list[types.CodeAction]:
    """Offered while the workspace policy has allow rules the user has not trusted."""
    untrusted = s.sessions.untrusted_policy()
    if untrusted is None:
        return []
    return [_action("goose.trustWorkspacePolicy", types.CodeActionKind.QuickFix, untrusted.digest)]


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, capabilities.CODE_ACTIONS)
    async def code_actions(
        _: LanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        s = services()
        uri = params.text_document.uri
        if s.transcripts.by_uri(uri) is not None:
            # The editor numbers its batches with gaps: the changes held for them may
            # hold the card under the cursor.
            await s.editor.settled(uri)
            return [*transcript_actions(s, uri, params), *trust_actions(s)]
        return file_actions(s, params)


def file_actions(s: Services, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Actions on any other file: the sessions index's lines, or a code file's."""
    uri = params.text_document.uri
    if uri == index_path(s.settings.data_dir).as_uri():
        return index_actions(s, params)
    actions = [
        *trust_actions(s),
        *source_actions(params),
        _action("goose.sessions", types.CodeActionKind.Refactor),
    ]
    try:
        path = Path(path_of(uri)).resolve()
    except (ValueError, OSError):  # no file there (a NUL byte in it): nothing to revert
        return actions
    if path in s.sessions.open_files.conflicts:
        actions += [
            _action(name, types.CodeActionKind.QuickFix, uri)
            for name in (
                "goose.takeAgentVersion",
                "goose.keepMyVersion",
                "goose.compareAgentVersion",
            )
        ]
    written = any(session.own_writes.last_change(path) for session in s.sessions.open_sessions())
    if written or path in s.sessions.open_files.changed:
        actions.append(_action("goose.revertFile", types.CodeActionKind.Refactor, uri))
    return actions
