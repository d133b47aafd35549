"""Goose: Export chat: a chat as clean markdown, written into the workspace.

The file is rendered from the journal's events, as the transcript is, but holds the
conversation only: no prompt section, no marker comments, no "answer with a code
action" lines. It goes only inside the workspace folder: the path is resolved (``..``
and symlinks followed) and refused when it lands outside, and the file is then written
atomically through the workspace folder opened without following any symlink, so a
folder swapped for a link meanwhile cannot lead the write out either.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

from goose_ls.errors import Refused, UnknownSession
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import EventRow, SessionManager, events_of
from goose_ls.tool_calls import ToolCalls
from goose_ls.workspace.agent_files import FileProblem, write_disk
from goose_ls.workspace.confinement import Denied, too_broad

SLUG_LENGTH = 40


def slug(title: str) -> str:
    """A title as a file name's part: lower-case words joined by ``-``."""
    words = re.sub(r"[^\w]+", "-", title.lower(), flags=re.ASCII).strip("-")
    return words[:SLUG_LENGTH].strip("-") or "chat"


def target(root: Path, given: str | None, title: str, day: datetime.date) -> Path:
    """Where the export goes: ``given`` (relative to the workspace, ``~`` expanded) or
    ``goose-chat-<slug>-<day>.md`` in the workspace; refused outside it."""
    root = root.resolve()
    if too_broad(root):
        raise Refused(
            f"goose-ls has no workspace folder to export into ({root})",
            "Open a project folder, or export from an editor that has one",
        )
    name = given or f"goose-chat-{slug(title)}-{day.isoformat()}.md"
    path = (root / os.path.expanduser(name)).resolve()
    if root not in path.parents:
        leads = "" if path == root / name else f" (it leads to {path})"
        raise Refused(
            f"{name} is outside the workspace folder {root}{leads}",
            "Export to a path inside the workspace",
        )
    return path


def render(
    rows: list[EventRow],
    title: str,
    session_id: str,
    day: datetime.date,
    root: str | None = None,
    agent: str = "agent",
) -> str:
    """The conversation as markdown, under a heading with the chat's title (paths named
    from ``root``, the chat's workspace folder; the agent's messages headed ``agent``)."""
    text = TranscriptText(head="")
    tool_calls = ToolCalls()
    renderer = Renderer(
        text, lambda: tool_calls, interactive=False, root=lambda: root, agent=lambda: agent
    )
    with renderer.replaying():  # the chat's tool calls merged as the session merged them
        for _, event, subagent in events_of(rows):
            renderer.render(event, subagent=subagent)
    heading = f"# {title}\n\n_{agent} chat `{session_id}`, exported {day.isoformat()}._\n\n"
    return heading + text.body.strip("\n") + "\n"


def export(sessions: SessionManager, root: Path, session_id: str, given: str | None) -> Path:
    """Write the chat's markdown into the workspace; the path it was written to."""
    record = sessions.record(session_id)
    if record is None:
        raise UnknownSession(session_id)
    rows = sessions.history(session_id)
    if not rows:
        raise Refused(f"the journal holds nothing of chat {session_id} to export")
    day = datetime.date.today()
    path = target(root, given, record.title, day)
    try:
        write_disk(
            path,
            root.resolve(),
            render(rows, record.title, session_id, day, record.cwd, record.agent or "agent"),
        )
    except (FileProblem, Denied) as exc:
        raise Refused(str(exc)) from None
    return path
