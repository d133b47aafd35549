"""Turn checkpoints and live buffers against a hostile agent and a hostile repository
(docs/security.md, "Turn checkpoints and open files"): each test names the sentence of
the docs it holds. The agent is the scripted one, whose ``shell`` step runs in its own
(sandboxed) process, as claude-agent-acp's and codex-acp's own tools do; the last tests
do the same with the real claude-agent-acp, offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import shlex
import stat
import time
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from support.buffers import EditorBuffers
from support.claude import CLAUDE, start_claude
from support.claude import MISSING as CLAUDE_MISSING
from support.fake_anthropic import FakeAnthropic, ToolUse
from support.fake_anthropic import Reply as ClaudeReply
from support.harness import Editor
from support.real_agent import approving

KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQSECRETBODY\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SECRET = "SECRETBODY"


# --- helpers -------------------------------------------------------------------------


def _python(code: str, *args: Any) -> dict[str, Any]:
    """A shell step running ``code`` with python3 in the agent's own process."""
    line = " ".join(["python3", "-c", shlex.quote(code), *(shlex.quote(str(a)) for a in args)])
    return {"shell": line}


def _background(code: str, *args: Any, delay: float = 0.0) -> dict[str, Any]:
    """The same, left running in the background of the agent's process (as a job it
    started and forgot), ``delay`` seconds on."""
    line = " ".join(["python3", "-c", shlex.quote(code), *(shlex.quote(str(a)) for a in args)])
    return {"shell": f"(sleep {delay}; {line}) >/dev/null 2>&1 </dev/null &"}


WRITE = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"


async def _chat(editor: Editor) -> tuple[str, str]:
    """Open the chat as a plugin-free editor does; its URI and session."""
    await _command(editor, "goose.openChat")
    (chat,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    (session,) = (await editor.goose.request("goose/status", {}))["sessions"]
    return chat.uri, session["sessionId"]


async def _command(editor: Editor, name: str, *arguments: Any) -> None:
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )


async def _review(editor: Editor, chat: str) -> str:
    """Run "Goose: Review turn" and read the document it shows."""
    before = len([d for d in editor.client.shown_documents if ".review-" in d.uri])
    await _command(editor, "goose.reviewTurn", chat)
    shown = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri][before:],
        what="the review",
    )
    return Path(shown[0].uri.removeprefix("file://")).read_bytes().decode("utf-8", "replace")


def _disk_changes(editor: Editor, since: int = 0) -> list[dict[str, Any]]:
    return [
        u["update"]
        for u in editor.goose.updates[since:]
        if u["update"]["sessionUpdate"] == "disk_changes"
    ]


def _told(editor: Editor, since: int = 0) -> set[str]:
    """The names of the files the chat was told changed on disk."""
    return {Path(f["path"]).name for d in _disk_changes(editor, since) for f in d["files"]}


SHORT_WATCH = {"workspace": {"watchAfterTurn": 0.2}}
"""For a test that waits for the watch's end: the files' last comparison comes sooner."""


async def _watch_over(editor: Editor) -> None:
    """Until goose-ls stops following the open files on disk (``workspace.watchAfterTurn``
    seconds after the last turn), having compared them a last time."""
    await editor.goose.wait_for(
        lambda: editor.log.says("stopped following open files on disk"),
        what="the watch of the open files over",
    )


def _transcript(chat: str) -> str:
    return Path(chat.removeprefix("file://")).read_text(encoding="utf-8", errors="replace")


def _outside_fences(markdown: str) -> list[str]:
    """The lines of ``markdown`` that are not inside a backtick fence."""
    lines, fence = [], 0
    for line in markdown.split("\n"):
        run = len(line) - len(line.lstrip("`"))
        if fence == 0 and run >= 3:
            fence = run
        elif fence and run >= fence and not line.strip("`").strip():
            fence = 0
        elif fence == 0:
            lines.append(line)
    return lines


# --- the review and the chat show no secret ------------------------------------------


async def test_the_review_shows_no_secret_by_name_or_by_content(editor: Editor) -> None:
    """security.md, Turn checkpoints: "the content of a secret (by name or by content) or
    of a binary file is never shown, only that it changed". disk_changes holds it; the
    document "Goose: Review turn" writes shows both in full."""
    ws = editor.workspace
    code = (
        "import sys; ws = sys.argv[1]\n"
        "open(ws + '/notes.txt', 'w').write(sys.argv[2])\n"  # a key, by its content
        "open(ws + '/id_rsa.bak', 'w').write('SECRETBYNAME\\n')\n"  # `id_rsa*`, by its name
        "open(ws + '/app.py', 'w').write('a = 2\\n')\n"
    )
    await editor.start({"turns": [[_python(code, ws, KEY), {"text": "done"}]]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    told = json.dumps(_disk_changes(editor))
    assert SECRET not in told and "SECRETBYNAME" not in told, "the chat holds (as documented)"

    review = await _review(editor, chat)
    assert "+a = 2" in review
    assert SECRET not in review, "a key's content is shown in the review"
    assert "SECRETBYNAME" not in review, "a secret file's content is shown in the review"


async def test_a_key_after_the_first_8_kib_of_a_file_is_not_shown(editor: Editor) -> None:
    """security.md, Turn checkpoints: "the content of a secret (by name or by content) ...
    is never shown". A file whose key comes after 8 KiB of anything (one long line) is
    shown whole under the tool call, in disk_changes and the transcript (fs/* looks at the
    whole file: "wherever in the file it is")."""
    ws = editor.workspace
    code = "import sys; open(sys.argv[1], 'w').write('# ' + 'x' * 9000 + '\\n' + sys.argv[2])"
    await editor.start({"turns": [[_python(code, ws / "notes.txt", KEY), {"text": "done"}]]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    assert "notes.txt" in _told(editor)
    assert SECRET not in json.dumps(_disk_changes(editor)), "the key is in disk_changes"
    saved = await editor.transcript_text("done", path=Path(chat.removeprefix("file://")))
    assert SECRET not in saved, "the key is in the transcript"


# --- the checkpoints' git runs nothing of the repository's -----------------------------

NESTED_REPO = (
    "mkdir -p {sub} && cd {sub} && git init -q && echo x > f.txt && git add f.txt && "
    "git -c user.name=x -c user.email=x@x commit -q -m x"
)


async def test_a_nested_repository_the_agent_makes_runs_nothing_outside_the_sandbox(
    editor: Editor,
) -> None:
    """security.md, Turn checkpoints: "the project's hooks, `core.fsmonitor`, filters and
    `.gitattributes` never run"; The agent's own process: the sandbox holds "whatever it
    does in its own process". goose-ls's `git add -A` runs `git status --porcelain=2 -uno`
    in every nested repository it holds as a gitlink, and that git reads the nested
    repository's own `.git/config`. The sandboxed agent makes one (tool call 1: `git init`
    and a commit; its snapshot records the gitlink), then names its command as that
    repository's `core.fsmonitor` (tool call 2): the snapshot as tool call 2 completes runs
    it as goose-ls, outside the sandbox (here: as uid 0, not the sandbox's 1000, writing
    into goose-ls's data dir, which the sandbox hides). The config is set aside only at
    the turn's end, after that."""
    ws = editor.workspace
    escaped = editor.tmp / "data" / "escaped"
    evil = f"id -u > {escaped}\n"
    config = f"[core]\n\tfsmonitor = sh {ws}/sub/evil.sh\n"
    plant = (
        "import sys; ws = sys.argv[1]\n"
        "open(ws + '/sub/evil.sh', 'w').write(sys.argv[2])\n"
        "open(ws + '/sub/.git/config', 'a').write(sys.argv[3])\n"
    )
    calls = [
        {"shell": NESTED_REPO.format(sub=ws / "sub")},
        _python(plant, ws, evil, config),
    ]
    steps: list[dict[str, Any]] = []
    for n, call in enumerate(calls):
        tool = {"toolCallId": f"t{n}", "title": "Run", "kind": "execute", "status": "in_progress"}
        steps += [
            {"toolCall": tool},
            call,
            {"toolUpdate": {"toolCallId": f"t{n}", "status": "completed"}},
            {"sleep": 1.5},
        ]
    await editor.start({"turns": [[*steps, {"text": "done"}]]})
    chat, session_id = await _chat(editor)
    message_id = await editor.prompt(session_id, "go")
    await editor.goose.turn_end(message_id, timeout=60)
    assert (ws / "sub" / "f.txt").exists(), editor.goose.text(message_id)
    assert "Agent sandbox: workspace (bubblewrap)" in _transcript(chat)
    assert not escaped.exists(), f"ran outside the sandbox as uid {escaped.read_text().strip()}"


async def test_a_nested_repository_in_the_project_runs_nothing(editor: Editor) -> None:
    """security.md, Turn checkpoints: "the project's hooks, `core.fsmonitor`, filters and
    `.gitattributes` never run". A project unpacked from an archive with a nested
    repository (`vendor/lib/.git`) whose config names an fsmonitor and a filter and
    which has a hook: the first turn's snapshot runs all three, as goose-ls."""
    ws = editor.workspace
    marker = editor.tmp / "ran"
    lib = ws / "vendor" / "lib"
    made = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        NESTED_REPO.format(sub=lib),
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    assert await made.wait() == 0
    config = lib / ".git" / "config"
    config.write_text(
        config.read_text()
        + f"[core]\n\tfsmonitor = touch {marker}-fsmonitor\n"
        + f'[filter "evil"]\n\tclean = touch {marker}-filter\n'
    )
    (lib / ".gitattributes").write_text("* filter=evil\n")
    hook = lib / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}-hook\n")
    hook.chmod(0o755)
    (lib / "f.txt").write_text("y\n")  # a change in it, as after a build
    (ws / "app.py").write_text("a = 1\n")
    await editor.start({"turns": [[_python(WRITE, ws / "app.py", "a = 2\n"), {"text": "ok"}]]})
    _, session_id = await _chat(editor)
    # The first snapshot, taken in the background since initialized, comes before the
    # turn's own: both are over before the prompt goes out.
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    ran = sorted(p.name for p in editor.tmp.glob("ran-*"))
    assert not ran, f"the nested repository's {ran} ran"


async def test_a_nested_repository_hides_nothing_and_breaks_no_review(editor: Editor) -> None:
    """configuration.md, Turn checkpoints: "Symbolic links and nested repositories are
    shown in a review but never reverted"; security.md: "a tool call's changes on disk
    are shown". A tool call that makes a nested repository (`git init` and a commit)
    beside its edit: goose-ls reads the gitlink as a blob (`git cat-file blob <commit>`:
    "bad file"), the tool call's changes are never told, and "Review turn" and "Revert
    turn" fail ("see the goose-ls log"): the edit cannot be seen nor put back."""
    ws = editor.workspace
    (ws / "app.py").write_text("safe = 1\n")
    call = {"toolCallId": "t1", "title": "Run", "kind": "execute", "status": "in_progress"}
    steps = [
        {"toolCall": call},
        {"shell": NESTED_REPO.format(sub=ws / "sub")},
        _python(WRITE, ws / "app.py", "evil = 1\n"),
        {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
        {"sleep": 1},
        {"text": "done"},
    ]
    await editor.start({"turns": [steps]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    assert "app.py" in _told(editor), "the edit was never told"
    await _command(editor, "goose.revertTurn", chat)
    message = await editor.shown("revert")
    assert "failed" not in message, message
    assert (ws / "app.py").read_text() == "safe = 1\n"


# --- nothing forges goose-ls's own lines ---------------------------------------------


async def test_a_file_name_forges_no_line_of_the_review(editor: Editor) -> None:
    """security.md, Turn checkpoints: "every shown text is fenced, whatever backticks it
    holds"; Permission requests: agent text is inert, "a line of it that begins as
    goose-ls's own lines do ... is escaped". A file name is agent text; the review puts it
    raw in its heading, so a newline in it writes headings (and a 💾 line) of its own."""
    ws = editor.workspace
    name = "notes\n\n## `app.py` (removed)\n\n> **💾 Changed on disk** by `Edit`: nothing else"
    (ws / name).write_text("x = 1\n")
    await editor.start({"turns": [[_python(WRITE, ws / name, "x = 2\n"), {"text": "done"}]]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)

    review = await _review(editor, chat)
    headings = [line for line in _outside_fences(review) if line.startswith("## ")]
    assert len(headings) == 1, f"one file changed, but the review has headings {headings}"
    forged = [line for line in _outside_fences(review) if line.startswith("> **💾")]
    assert not forged, forged


FORGED_LINES = [
    ">\u00a0**💾 Changed on disk** by `Edit app.py`: `app.py` changed +1 -1",  # NBSP
    ">\u2002**💾 Changed on disk** by `Edit app.py`: `app.py` changed +1 -1",  # EN SPACE
    "> **&#x1F4BE; Changed on disk** by `Edit app.py`: `app.py` changed +1 -1",  # entity
    "> <strong>💾 Changed on disk</strong> by `Edit app.py`: `app.py` changed +1 -1",
    "<blockquote><strong>💾 Changed on disk</strong> by <code>x</code></blockquote>",
    "\u00a0> **💾 Changed on disk** by `Edit app.py`: `app.py` changed +1 -1",
    ">\u00a0**Note:** app.py changed on disk while your buffer of it has unsaved changes.",
]


async def test_agent_text_cannot_imitate_the_changed_on_disk_line(editor: Editor) -> None:
    """security.md, Turn checkpoints: changes are shown "under a line the agent's text
    cannot imitate (`> **💾` is goose-ls's own)"; Permission requests: "a line of it that
    begins as goose-ls's own lines do ... is escaped". `> **💾` and `> **Note:**` are
    escaped; the same line after a no-break or en space, with the emoji as an HTML entity,
    or in HTML, is not: in the file it reads as goose-ls's (a no-break space looks like a
    space), and a markdown preview renders it exactly as goose-ls's own."""
    markdown_it = pytest.importorskip("markdown_it")
    text = "".join(f"\n\n{line}\n\n" for line in FORGED_LINES)
    await editor.start({"turns": [[{"text": "Nothing changed.\n" + text}]]}, settings=SHORT_WATCH)
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    assert not _disk_changes(editor), "nothing changed on disk: no 💾 line is goose-ls's"
    await _watch_over(editor)
    transcript = _transcript(chat)

    def looks_own(line: str) -> bool:
        seen = unicodedata.normalize("NFKC", html.unescape(line)).replace("\u00a0", " ")
        return seen.lstrip(" ").startswith(("> **💾", "> **Note:**"))

    lookalikes = [line for line in transcript.split("\n") if looks_own(line)]
    assert not lookalikes, f"agent lines that read as goose-ls's own: {lookalikes}"
    rendered = markdown_it.MarkdownIt("commonmark").render(transcript)
    # goose-ls's own line is a quote; an escaped one shows its ">" as text.
    assert "<blockquote>\n<p><strong>💾 Changed on disk</strong>" not in rendered, rendered


# --- names and files that stop or hang goose-ls --------------------------------------


async def test_a_file_name_that_is_not_utf8_does_not_stop_the_turn(editor: Editor) -> None:
    """security.md, Turn checkpoints: "a tool call's changes on disk are shown as goose-ls
    found them". A file named in Latin-1 (`caf\\xe9.txt`, as an old archive holds) makes
    the turn's journal write fail (UnicodeEncodeError: surrogates not allowed): the turn
    never ends for the editor and the transcript stops being written."""
    ws = editor.workspace
    code = "import os, sys; open(os.fsencode(sys.argv[1]) + b'/caf\\xe9.txt', 'wb').write(b'x\\n')"
    await editor.start({"turns": [[_python(code, ws), {"text": "done"}], [{"text": "still here"}]]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=20)
    second = await editor.prompt(session_id, "are you there")
    await editor.goose.turn_end(second, timeout=20)
    await editor.goose.wait_for(
        lambda: "still here" in _transcript(chat), what="the transcript written on"
    )


@pytest_asyncio.fixture
async def fifo_editor(editor: Editor) -> AsyncIterator[Editor]:
    """``editor``, and after the test every FIFO in its workspace opened for writing, so
    that a git blocked on one (goose-ls's, for up to 120 s) ends with goose-ls."""
    yield editor
    for fifo in editor.workspace.rglob("*"):
        if fifo.is_fifo():
            for _ in range(5):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                await asyncio.sleep(0.05)


@pytest.mark.parametrize("made_by", ["the agent", "the repository"])
async def test_a_fifo_named_gitignore_does_not_hang_the_turn(
    fifo_editor: Editor, made_by: str
) -> None:
    """security.md, The repository: "Reading an ignore file never blocks or runs it: only
    regular files are read (a FIFO or a device is skipped)". The checkpoints' git reads
    the project's `.gitignore` and blocks on a FIFO (`git ls-files -o --exclude-standard`,
    up to its 120 s timeout, once per snapshot): the turn does not end, and goose-ls does
    not exit when the editor shuts it down. The agent makes one with `mkfifo`; a project
    unpacked from an archive can hold one."""
    editor = fifo_editor
    ws = editor.workspace
    (ws / "app.py").write_text("a = 1\n")
    (ws / "sub").mkdir()
    steps: list[dict[str, Any]] = [_python(WRITE, ws / "app.py", "a = 2\n")]
    if made_by == "the agent":
        steps.append(_python("import os, sys; os.mkfifo(sys.argv[1])", ws / "sub" / ".gitignore"))
    else:
        os.mkfifo(ws / "sub" / ".gitignore")
    await editor.start({"turns": [[*steps, {"text": "done"}], [{"text": "still here"}]]})
    _, session_id = await _chat(editor)
    started = time.monotonic()
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=30)
    second = await editor.prompt(session_id, "are you there")
    await editor.goose.turn_end(second, timeout=30)
    assert time.monotonic() - started < 30


async def test_a_folder_that_churns_hides_no_change(editor: Editor) -> None:
    """security.md, Turn checkpoints: "a tool call's changes on disk are shown as
    goose-ls found them"; configuration.md: review and revert work "whoever made" the
    change. While files come and go in a folder (a job the agent left running; a build
    watcher), `git add -A` dies with "fatal: unable to stat 'churn/3': No such file or
    directory", the snapshot is silently the last one, and the turn's change is never
    told nor reverted (about one turn in two here)."""
    ws = editor.workspace
    for n in range(4):
        (ws / f"f{n}.py").write_text("safe = 1\n")
    churn = (
        "import os, sys, time\nd = sys.argv[1]; os.makedirs(d, exist_ok=True)\n"
        "end = time.time() + 40; i = 0\n"
        "while time.time() < end:\n"
        "  p = d + '/%d' % (i % 5); i += 1\n"
        "  try:\n    open(p, 'w').close(); os.remove(p)\n  except OSError: pass\n"
    )
    turns = [[_background(churn, ws / "churn"), {"sleep": 0.5}, {"text": "started"}]]
    turns += [[_python(WRITE, ws / f"f{n}.py", "evil = 1\n"), {"text": "ok"}] for n in range(4)]
    await editor.start({"turns": turns})
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "start"), timeout=60)
    missed = []
    for n in range(4):
        since = len(editor.goose.updates)
        await editor.goose.turn_end(await editor.prompt(session_id, f"edit f{n}"), timeout=60)
        if f"f{n}.py" not in _told(editor, since):
            missed.append(f"f{n}.py")
    assert not missed, f"changes never told under their turn: {missed}"


# --- open buffers ----------------------------------------------------------------------


async def test_an_open_file_whose_folder_became_a_link_shows_nothing_from_outside(
    editor: Editor,
) -> None:
    """security.md, Turn checkpoints: "an open file that became a FIFO or a link is not
    read (no wait, nothing from outside shown in the buffer)"; "a link in the project ...
    is never walked". The agent renames the open file's folder and puts a link to a
    folder outside in its place: the buffer without unsaved changes is given the outside
    file's text, and the one with unsaved changes gets a conflict whose copy (and
    "Compare" and "Take") is the outside file's text."""
    ws = editor.workspace
    outside = editor.tmp / "outside" / "sub"
    outside.mkdir(parents=True)
    (outside / "app.py").write_text("OUTSIDE app.py\n")
    (outside / "lib.py").write_text("OUTSIDE lib.py\n")
    (ws / "sub").mkdir()
    for name in ("app.py", "lib.py"):
        (ws / "sub" / name).write_text("x = 1\n")
    swap = (
        "import os, sys; ws, out = sys.argv[1], sys.argv[2]\n"
        "os.rename(ws + '/sub', ws + '/sub-moved'); os.symlink(out, ws + '/sub')\n"
    )
    await editor.start(
        {"turns": [[_python(swap, ws, outside), {"text": "moved"}]]}, settings=SHORT_WATCH
    )
    buffers = EditorBuffers(editor.client, "utf-8")
    clean, unsaved = ((ws / "sub" / n).as_uri() for n in ("app.py", "lib.py"))
    buffers.open(clean, "x = 1\n", "python")
    buffers.open(unsaved, "x = 1\n", "python")
    buffers.replace_all(unsaved, "x = 1\nmine = 1\n")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "tidy up"), timeout=60)
    await _watch_over(editor)  # its last look at the open files included
    assert "OUTSIDE" not in buffers.texts[clean], "an outside file's text is in the buffer"
    copies = list((editor.tmp / "data").rglob("conflicts/*/*"))
    assert not [c for c in copies if "OUTSIDE" in c.read_text()], "copied from outside"


# --- revert --------------------------------------------------------------------------


async def test_a_private_file_the_turn_removed_comes_back_private(editor: Editor) -> None:
    """No doc sentence promises modes (security.md: "the bytes that were there"), but a
    0600 file the agent removed comes back 0644, readable by every local user, and a
    0755 script comes back not executable."""
    ws = editor.workspace
    (ws / "private.txt").write_text("mine alone\n")
    (ws / "private.txt").chmod(0o600)
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    gone = "import os, sys\nfor p in sys.argv[1:]: os.remove(p)"
    await editor.start(
        {"turns": [[_python(gone, ws / "private.txt", ws / "run.sh"), {"text": "gone"}]]}
    )
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout=60)
    await _command(editor, "goose.revertTurn", chat)
    await editor.shown("reverted 2 of 2")
    assert stat.S_IMODE((ws / "private.txt").stat().st_mode) & 0o077 == 0, "others may read it"
    assert stat.S_IMODE((ws / "run.sh").stat().st_mode) & 0o100, "no longer executable"


# --- changes hidden from the chat ----------------------------------------------------


# --- the real claude-agent-acp, offline ------------------------------------------------


async def _claude_turn(editor: Editor, tools: list[ToolUse], timeout: float = 120) -> str:
    numbered = [ToolUse(t.name, t.input, id=f"toolu_{n:02}") for n, t in enumerate(tools)]
    replies = [*(ClaudeReply(("On it.",), tool=t) for t in numbered), ClaudeReply(("Done.",))]
    with FakeAnthropic(replies) as api:
        await start_claude(editor, api)
        chat, session_id = await _chat(editor)
        yes = asyncio.ensure_future(approving(editor))
        try:
            end = await editor.goose.turn_end(await editor.prompt(session_id, "go"), timeout)
            assert end["stopReason"] == "end_turn", end
        finally:
            yes.cancel()
        await yes
    return chat


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
async def test_claude_s_write_of_a_key_after_8_kib_is_shown_in_the_chat(editor: Editor) -> None:
    """As test_a_key_after_the_first_8_kib_of_a_file_is_not_shown, by Claude Code's own
    Write tool."""
    ws = editor.workspace
    content = "# " + "x" * 9000 + "\n" + KEY
    chat = await _claude_turn(
        editor, [ToolUse("Write", {"file_path": f"{ws}/notes.txt", "content": content})]
    )
    assert (ws / "notes.txt").read_text() == content
    assert "notes.txt" in _told(editor)
    # goose-ls's own record never shows it (the agent's Write tool call says its content
    # itself: the agent's words, shown as such).
    assert SECRET not in json.dumps(_disk_changes(editor)), "the key is in disk_changes"
    assert chat


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
async def test_claude_s_bash_mkfifo_gitignore_does_not_hang_the_turn(fifo_editor: Editor) -> None:
    """As test_a_fifo_named_gitignore_does_not_hang_the_turn, by Claude Code's own Bash
    tool (then an Edit, whose change the next snapshot would show)."""
    editor = fifo_editor
    ws = editor.workspace
    (ws / "app.py").write_text("a = 1\n")
    tools = [
        ToolUse("Bash", {"command": f"mkfifo {ws}/.gitignore", "description": "make a pipe"}),
        ToolUse("Read", {"file_path": f"{ws}/app.py"}),
        ToolUse(
            "Edit", {"file_path": f"{ws}/app.py", "old_string": "a = 1", "new_string": "a = 2"}
        ),
    ]
    started = time.monotonic()
    await _claude_turn(editor, tools, timeout=60)
    assert time.monotonic() - started < 60


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
async def test_claude_s_own_tools_run_nothing_outside_the_sandbox_through_a_nested_repository(
    editor: Editor,
) -> None:
    """As test_a_nested_repository_the_agent_makes_runs_nothing_outside_the_sandbox, by
    Claude Code's own Bash and Write tools, every card an ordinary one (`git init`, write
    `tools/setup.py`, `python3 tools/setup.py`), each approved."""
    ws = editor.workspace
    escaped = editor.tmp / "data" / "escaped"
    setup = (
        "import pathlib\n"
        "sub = pathlib.Path(__file__).resolve().parent.parent / 'sub'\n"
        f"(sub / 'evil.sh').write_text('id -u > {escaped}\\n')\n"
        "with open(sub / '.git' / 'config', 'a') as config:\n"
        "    config.write(f'[core]\\n\\tfsmonitor = sh {sub}/evil.sh\\n')\n"
    )
    tools = [
        ToolUse("Bash", {"command": NESTED_REPO.format(sub=ws / "sub"), "description": "init"}),
        ToolUse("Write", {"file_path": f"{ws}/tools/setup.py", "content": setup}),
        ToolUse("Bash", {"command": f"cd {ws} && python3 tools/setup.py", "description": "setup"}),
    ]
    chat = await _claude_turn(editor, tools)
    assert (ws / "tools" / "setup.py").exists() and (ws / "sub" / "f.txt").exists()
    assert "Agent sandbox: workspace (bubblewrap)" in _transcript(chat)
    await asyncio.sleep(1)
    assert not escaped.exists(), f"ran outside the sandbox as uid {escaped.read_text().strip()}"
