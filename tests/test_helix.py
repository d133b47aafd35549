"""Helix 25.01 and 25.07, the real programs in a terminal (tmux), set up as
docs/editors/helix.md says and used as a person does: code actions on a selection, the
transcript, a follow-up typed while the reply streams, a permission with its diff, the
edit undone, a turn cancelled, and the chat read back after quitting without saving."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from goose_ls.scripted.script import (
    edit_call,
    prompt_texts,
    received,
    replace_in_file,
    scripted_agent_command,
    write_script,
)
from support.fake_goosed import FakeGoosed, GoosedThread
from support.harness import SERVER_COMMAND, server_env
from support.terminal import MISSING, TMUX, TmuxTerminal
from support.versions import InTurn

ROOT = Path(__file__).resolve().parent.parent
EDITORS = Path(os.environ.get("GOOSE_LS_EDITORS", Path.home() / ".cache" / "goose-ls" / "editors"))


def _helix(version: str, binary: str, target: str) -> Any:
    path = EDITORS / "bin" / binary
    return pytest.param(
        version,
        path,
        id=f"hx-{version}",
        marks=pytest.mark.skipif(
            not path.exists(),
            reason=f"HELIX {version} IS MISSING: its test did not run; it is not in {EDITORS} "
            f"(scripts/fetch-debian-editors.sh {target})",
        ),
    )


HELIX = InTurn(
    ("version", "hx"),
    [_helix("25.01", "hx", "hx"), _helix("25.07", "hx-25.07", "hx-25.07")],
)
"""Each flow on one Helix, in turn; the chat itself on both."""

APP = (
    "def add(x, y):\n    return x + y\n\n\n"
    "def sub(x, y):\n    return x - y\n\n\n"
    "def mul(x, y):\n    return x * y\n"
)
EDITED = APP.replace("return x * y\n", "return x * y  # the product\n")
REPLY = "`add` returns the sum of its two arguments; `sub` and `mul` do what they say."
FOLLOW_UP = "Please add a short comment to the return line of mul saying what it gives back"
SLOW = "Now look at the whole module, slowly"
HUNK = "@@ -7,4 +7,4 @@"


def _script(tmp_path: Path, app: Path) -> dict[str, Any]:
    edit = edit_call(app, APP, EDITED)
    return {
        "record": str(tmp_path / "agent.jsonl"),
        "turns": [
            # Slow enough that the follow-up is typed while the reply still streams.
            [{"text": REPLY, "chunks": 30, "delay": 0.1}],
            [
                {"text": "Editing mul.", "chunks": 2},
                {"permission": {"toolCall": edit}},
                {"writeFile": {"path": str(app), "content": EDITED}},
                {"text": " Done.", "chunks": 2},
            ],
            [{"text": "Reading every line", "chunks": 2}, {"waitForCancel": True}],
        ],
    }


def _configure(tmp_path: Path, agent: list[str], before_keys: str = "") -> None:
    """Helix's config folder: goose-ls for every language, and the docs' key bindings
    (with ``before_keys`` ahead of them)."""
    config = tmp_path / "config" / "helix"
    config.mkdir(parents=True)
    (config / "languages.toml").write_text(_languages(agent, tmp_path / "data"))
    keys = (ROOT / "editors" / "helix" / "config.toml").read_text(encoding="utf-8")
    (config / "config.toml").write_text(f"{before_keys}{keys}")


def _languages(agent: list[str], data: Path) -> str:
    """editors/helix/languages.toml with goose-ls and the agent of this test."""
    shipped = (ROOT / "editors" / "helix" / "languages.toml").read_text(encoding="utf-8")
    ours = shipped.replace(
        'command = "goose-ls"\n',
        f"command = {json.dumps(SERVER_COMMAND[0])}\nargs = {json.dumps(SERVER_COMMAND[1:])}\n",
    ).replace(
        'config = { agent = { command = "goose acp" } }\n',
        f"config = {{ agent = {{ command = {json.dumps(agent)} }}, "
        f"dataDir = {json.dumps(str(data))} }}\n",
    )
    assert 'goose-ls"\n' not in ours and str(data) in ours, "the shipped file changed"
    return ours


SPINNER = "⣾⣽⣻⢿⡿⣟⣯⣷"
"""Helix's spinner: in the status line, after the mode, while a turn's progress runs."""


def _spinning(screen: str) -> bool:
    status = [row for row in screen.splitlines() if re.search(r"\b(NOR|INS|SEL) ", row)]
    return any(frame in row for row in status for frame in SPINNER)


def _wait(condition: Any, what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _pane(screen: str) -> str:
    """The text of the rightmost window (the transcript, when Helix split the screen),
    without line numbers, its soft-wrapped lines joined."""
    lines: list[str] = []
    for line in screen.splitlines():
        line = line.rsplit("│", 1)[-1]
        if re.match(r"\s*↪ ", line) and lines:
            lines[-1] = f"{lines[-1].rstrip()} {line.split('↪ ', 1)[1]}"
        else:
            lines.append(re.sub(r"^\s*\d+(  |$)", "", line))
    return "\n".join(lines)


MENU_ITEM = re.compile(r"Goose: [^\s”]+(?: [^\s”▐│]+)*(?=  |\s*▐|\s*│|\s*$)", re.MULTILINE)


class Helix:
    """A person at Helix: keys in, the screen read."""

    def __init__(self, terminal: TmuxTerminal) -> None:
        self.t = terminal

    def normal(self) -> None:
        """Escape, and wait for normal mode: a key sent right after Escape would be read
        as Alt+key."""
        self.t.keys("Escape")
        self.t.wait_for(lambda s: " INS " not in s and " SEL " not in s, "not in normal mode")

    def command(self, line: str) -> None:
        self.t.keys(":")
        # The command line, empty or showing the last command run (which Enter would repeat).
        self.t.wait_for(lambda s: s.rstrip().splitlines()[-1].startswith(":"), "no command line")
        self.t.type(line)
        self.t.keys("Enter")

    def run(self, keys: tuple[str, ...] | None, label: str) -> None:
        """The goose key binding ``keys`` where the version has it, else the code action."""
        if keys:
            self.t.keys("Space", "g", *keys)
        else:
            self.code_action(label)

    def code_action(self, label: str) -> None:
        """``space a``, then the item called ``label`` (moving down to it, as the menu
        cannot be typed into)."""
        for _ in range(20):
            self.t.keys("Space", "a")
            try:
                screen = self.t.wait_for(
                    lambda s: _item(MENU_ITEM.findall(s), label) is not None,
                    f"no {label!r}",
                    timeout=1.5,
                )
            except AssertionError:
                self.normal()  # goose-ls not attached yet, or the menu came late: again
                continue
            self.t.keys(*["Down"] * (_item(MENU_ITEM.findall(screen), label) or 0), "Enter")
            return
        raise AssertionError(f"{label!r} never in the code actions; the screen:\n{self.t.screen()}")


def _item(items: list[str], label: str) -> int | None:
    """Where the menu item called ``label`` is (a card's choice goes on to name what it
    answers: ``Goose: Allow once: <action>``)."""
    return next(
        (n for n, item in enumerate(items) if item == label or item.startswith(f"{label}: ")),
        None,
    )


def _started(
    hx: Path,
    workspace: Path,
    tmp_path: Path,
    name: str,
    file: str,
    height: int = 70,
    **more: str,
) -> Helix:
    env = {
        **server_env(tmp_path, **more),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    terminal = TmuxTerminal(name, width=120, height=height)
    terminal.start(f"{hx} {file}", workspace, env)
    return Helix(terminal)


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.each()
def test_a_chat_in_real_helix(version: str, hx: Path, tmp_path: Path) -> None:
    new = version != "25.01"  # 25.07: command arguments, so the shipped key bindings work
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    app = workspace / "app.py"
    app.write_text(APP)
    record = tmp_path / "agent.jsonl"
    agent = scripted_agent_command(write_script(tmp_path / "script.json", _script(tmp_path, app)))
    _configure(tmp_path, agent, "[editor.soft-wrap]\nenable = true\n\n")
    log = tmp_path / "logs" / "goose-ls.log"

    helix = _started(hx, workspace, tmp_path, f"goose-hx-{version}", "app.py")
    t = helix.t
    try:
        t.wait_for(lambda s: "def mul" in s, "Helix did not open app.py")
        _wait(lambda: log.exists() and "lifecycle: workspace" in log.read_text(), "no goose-ls")
        # Select the first two lines, Explain.
        t.keys("x", "x")
        helix.code_action("Goose: Explain selection")
        t.wait_for(lambda s: "`add` returns" in s, "the reply did not start streaming")
        # While it streams: to the prompt section at the end, and a fast typist's message.
        t.keys("g", "e", "i")
        t.wait_for(lambda s: " INS " in s, "no insert mode")
        t.type(FOLLOW_UP)
        helix.normal()
        assert "do what they say." not in t.screen(), "typed after the stream, not during it"
        # The turn's end is its progress's end (the spinner stops), not a message.
        _wait(lambda: "finished (end_turn)" in log.read_text(), "the first turn did not end")
        screen = t.wait_for(
            lambda s: "do what they say." in s and not _spinning(s), "the spinner did not stop"
        )
        assert f"Send”\n{FOLLOW_UP}\n" in _pane(screen), (
            "the draft typed during the stream is intact in the prompt section"
        )
        # Send it: a code action on 25.01, the shipped `space g s` on 25.07.
        helix.run(("s",) if new else None, "Goose: Send")
        _wait(lambda: len(prompt_texts(record)) == 2, "the follow-up did not reach the agent")
        assert prompt_texts(record)[1] == FOLLOW_UP, "the agent got exactly what was typed"

        # The permission: a card with the edit's minimal diff.
        t.wait_for(lambda s: "waiting for your approval" in s, "no permission asked")
        if new:  # 25.07 also shows it as a message with choices: Escape leaves it waiting
            t.wait_for(lambda s: "Allow for this session" in s, "no choices")
            helix.normal()
            t.wait_for(lambda s: "│ The agent is waiting" not in s, "the choices stayed")
        t.keys("/")
        t.type("Permission needed")
        t.keys("Enter")  # the cursor on the card, and the card in view
        card = _pane(t.wait_for(lambda s: "```diff" in _pane(s), "no diff on screen"))
        card = card[card.index("```diff") : card.index("```\n", card.index("```diff") + 7)]
        assert "@@ -0,0" not in card and HUNK in card, card
        assert card.endswith(
            # (the screen drops the context lines' trailing space)
            f"{HUNK}\n\n\n def mul(x, y):\n-    return x * y\n+    return x * y  # the product\n"
        ), f"a minimal diff: one hunk, 3 lines of context:\n{card}"
        assert "app.py" in card.splitlines()[1].replace(" ", ""), "(soft-wrapped)"
        helix.run(("y",) if new else None, "Goose: Allow once")
        t.wait_for(
            lambda s: "Permission answered: Allow once" in s and "Done." in s,
            "the answer did not reach goose",
        )
        answers = [
            m["result"]["outcome"] for m in received(record) if "outcome" in m.get("result", {})
        ]
        assert answers == [{"outcome": "selected", "optionId": "allow_once"}], answers

        # The edit is in the app.py buffer, one undo step. 25.01 opened the transcript in a
        # split beside app.py; 25.07 in app.py's window, so `ga` goes back there.
        def app_view(screen: str) -> str:
            if new:
                return _pane(screen)
            return "\n".join(line.split("│")[0].rstrip() for line in screen.splitlines())

        t.keys(*(["g", "a"] if new else ["C-w", "w"]))
        t.wait_for(lambda s: "return x * y  # the product" in app_view(s), "no edit in app.py")
        t.keys("u")
        screen = app_view(t.wait_for(lambda s: "# the" not in app_view(s), "u did not undo it"))
        assert "return x * y\n" in screen and "return x + y\n" in screen, screen
        assert app.read_text() == APP, "nothing written to disk without :w"
        t.keys(*(["g", "a"] if new else ["C-w", "w"]))
        t.wait_for(lambda s: "NOR   ~/data/transcripts/" in s, "back in the transcript")

        # A turn cancelled: a code action on 25.01, `space g x` on 25.07.
        t.keys("g", "e", "i")
        t.wait_for(lambda s: " INS " in s, "no insert mode")
        t.type(SLOW)
        helix.normal()
        helix.run(("s",) if new else None, "Goose: Send")
        t.wait_for(lambda s: "Reading every line" in s and _spinning(s), "no spinner while it runs")
        helix.run(("x",) if new else None, "Goose: Cancel")
        t.wait_for(
            lambda s: "Turn ended: cancelled" in s and not _spinning(s),
            "the turn did not end when cancelled",
        )
        assert any(m.get("method") == "session/cancel" for m in received(record))
        assert prompt_texts(record)[2] == SLOW

        helix.command("qa!")
        _wait(lambda: not t.alive(), "Helix did not quit")
    finally:
        t.stop()

    # Back again, on the transcript: the whole chat.
    (transcript,) = (tmp_path / "data" / "transcripts").glob("*.md")
    said = [
        "Explain what this code does",
        REPLY,
        FOLLOW_UP,
        "Editing mul.",
        "Permission answered: Allow once",
        "Done.",
        SLOW,
        "Reading every line",
        "Turn ended: cancelled",
    ]
    text = transcript.read_text(encoding="utf-8")
    assert [part for part in said if part not in text] == [], text
    helix = _started(hx, workspace, tmp_path, f"goose-hx-{version}-again", str(transcript))
    try:
        helix.t.wait_for(
            lambda s: all(part in _pane(s) for part in said),
            "the chat is not all on screen",
        )
    finally:
        helix.t.stop()


MENTION = "Look at @app.py please"


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_message_with_an_at_mention_accepted_from_completion_is_sent(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """An ``@`` completion taken with Tab: Helix applies it as a preview first and does
    not tell goose-ls of the preview's versions, so the next change skips numbers. Send
    sends what is on screen all the same, with the file attached."""
    new = version != "25.01"
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    app = workspace / "app.py"
    app.write_text(APP)
    record = tmp_path / "agent.jsonl"
    script = {"record": str(record), "turns": [[{"text": REPLY}], [{"text": "Looked."}]]}
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    _configure(tmp_path, agent)
    log = tmp_path / "logs" / "goose-ls.log"
    helix = _started(hx, workspace, tmp_path, f"goose-hx-{version}-mention", "app.py")
    t = helix.t
    try:
        t.wait_for(lambda s: "def mul" in s, "Helix did not open app.py")
        _wait(lambda: log.exists() and "lifecycle: workspace" in log.read_text(), "no goose-ls")
        t.keys("x", "x")
        helix.code_action("Goose: Explain selection")
        asked = time.monotonic()
        t.wait_for(lambda s: "`add` returns" in s, "the reply did not start streaming")
        print(f"hx {version}: first text {time.monotonic() - asked:.2f} s after Explain")
        t.wait_for(lambda s: "do what they say." in s, "the reply did not end")
        t.keys("g", "e", "i")
        t.wait_for(lambda s: " INS " in s, "no insert mode")
        t.type(MENTION.split("app.py")[0] + "ap")
        t.wait_for(lambda s: re.search(r"@app\.py\s+file", s) is not None, "no completion")
        t.keys("Tab")
        t.wait_for(lambda s: "Look at @app.py" in _pane(s), "the completion was not taken")
        t.type(MENTION.split("app.py")[1])
        helix.normal()
        helix.run(("s",) if new else None, "Goose: Send")
        sent = time.monotonic()
        screen = t.wait_for(
            lambda s: len(prompt_texts(record)) == 2 or "nothing was sent" in s,
            "Send did nothing",
        )
        assert "nothing was sent" not in screen, screen
        print(f"hx {version}: the agent had the message {time.monotonic() - sent:.2f} s after Send")
        (prompt,) = [
            m["params"]["prompt"] for m in received(record) if m.get("method") == "session/prompt"
        ][1:]
        assert prompt[0] == {"type": "text", "text": MENTION}, prompt
        assert [b["uri"] for b in prompt if b["type"] == "resource_link"] == [app.as_uri()]
        t.wait_for(lambda s: "Looked." in s, "the reply is not shown")
    finally:
        t.stop()


# --- where the reply is: the transcript shown, at the place to look -----------------------

LONG = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(1, 61))
"""120 lines: longer than the window."""
STATUS = re.compile(r"\b(?:NOR|INS|SEL)\b.*?(\d+):\d+\s*$")


def _window(screen: str) -> tuple[list[int], int]:
    """The rightmost window's line numbers on screen, and the line its cursor is on (from
    its status line)."""
    shown: list[int] = []
    cursor = None
    for line in screen.splitlines():
        part = line.rsplit("│", 1)[-1]
        if (status := STATUS.search(part)) is not None:
            cursor = int(status.group(1))
        elif (number := re.match(r"\s*(\d+)(?:  |$)", part)) is not None:
            shown.append(int(number.group(1)))
    assert cursor is not None, f"no status line:\n{screen}"
    return shown, cursor


def _in_view(screen: str) -> bool:
    shown, cursor = _window(screen)
    return cursor in shown


def _chat(tmp_path: Path, hx: Path, name: str, turns: list[Any], height: int = 70) -> Helix:
    """Helix on app.py in a workspace of its own, goose-ls attached, the scripted agent
    playing ``turns``."""
    workspace = tmp_path / "workspace"
    if not workspace.exists():
        (workspace / ".git").mkdir(parents=True)
        (workspace / "app.py").write_text(APP)
        script = {"record": str(tmp_path / "agent.jsonl"), "turns": turns}
        agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
        _configure(tmp_path, agent)
    log = tmp_path / "logs" / "goose-ls.log"
    helix = _started(hx, workspace, tmp_path, name, "app.py", height)
    try:
        helix.t.wait_for(lambda s: "def mul" in s, "Helix did not open app.py")
        started = "lifecycle: workspace"
        _wait(lambda: log.exists() and started in log.read_text(), "no goose-ls", 30)
    except AssertionError:
        helix.t.stop()  # no Helix, goose-ls and agent left behind
        raise
    return helix


def _ended(helix: Helix, tmp_path: Path, turns: int) -> str:
    """The screen once ``turns`` turns have ended (goose-ls logs each end) and the
    spinner of the last one has stopped."""
    log = tmp_path / "logs" / "goose-ls.log"
    _wait(lambda: log.read_text().count(" finished (") >= turns, "the turn did not end", 30)
    return helix.t.wait_for(lambda s: not _spinning(s), "the spinner did not stop")


def _explain(helix: Helix) -> None:
    """Lines 1-2 of app.py, **Goose: Explain selection**."""
    helix.t.keys("g", "g", "x", "x")
    helix.code_action("Goose: Explain selection")


def _explain_twice(helix: Helix, version: str, tmp_path: Path) -> None:
    """Explain, wait for the reply, back in the code (25.07: `ga`; 25.01: the chat's
    split closed), and Explain again."""
    _explain(helix)
    _ended(helix, tmp_path, 1)
    helix.t.wait_for(lambda s: "do what they say." in s, "no reply")
    if version == "25.01":
        helix.command("q")  # the transcript's split: app.py alone
    else:
        helix.t.keys("g", "a")
    helix.t.wait_for(lambda s: "def mul" in s and " chat · " not in s, "still in the chat")
    _explain(helix)


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_second_explain_shows_the_transcript_again(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """Back in the code after the first reply (25.07: `ga`; 25.01: the chat's split
    closed), Explain again: the chat comes back into view, with the new reply."""
    turns = [[{"text": REPLY}], [{"text": "The second answer."}]]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-again", turns)
    t = helix.t
    try:
        _explain_twice(helix, version, tmp_path)
        t.wait_for(lambda s: "The second answer." in s, "the chat was not shown again")
    finally:
        t.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_resumed_chat_opens_at_its_end(version: str, hx: Path, tmp_path: Path) -> None:
    """A chat longer than the window, Helix quit and started again: **Goose: Open chat**
    shows its end (the last answer, and the prompt section to write in), not its title."""
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-long", [[{"text": LONG, "chunks": 4}]])
    try:
        _explain(helix)
        _ended(helix, tmp_path, 1)
        helix.command("qa!")
        _wait(lambda: not helix.t.alive(), "Helix did not quit")
    finally:
        helix.t.stop()
    # At once: Helix 25.07 kills its goose-ls right after `exit`, and nothing may reap
    # it for a while; its chats are free all the same.
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-resumed", [], height=30)
    try:
        helix.code_action("Goose: Open chat")
        screen = helix.t.wait_for(lambda s: "## You ✎" in s, "the chat's end is not in view")
        assert "Paragraph 60 of a long answer." in _pane(screen), screen
        shown, cursor = _window(screen)
        assert 1 not in shown, f"the chat's start (its title) is in view:\n{screen}"
        assert cursor in shown, f"the cursor is not in view:\n{screen}"
    finally:
        helix.t.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_long_reply_does_not_push_the_cursor_out_of_view(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """A follow-up written at the end and sent, its reply longer than the window: the
    cursor stays in view, with the question just sent and the reply under it."""
    turns = [[{"text": REPLY}], [{"text": LONG, "chunks": 30, "delay": 0.02}]]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-push", turns, height=30)
    t = helix.t
    try:
        _explain(helix)
        _ended(helix, tmp_path, 1)
        t.wait_for(lambda s: "do what they say." in s, "no reply")
        t.keys("g", "e", "i")
        t.wait_for(lambda s: " INS " in s, "no insert mode")
        t.type("Tell me more")
        helix.normal()
        helix.run(("s",) if version != "25.01" else None, "Goose: Send")
        _wait(lambda: "Paragraph 60 of" in _on_disk(tmp_path), "the reply did not end", 30)
        screen = _ended(helix, tmp_path, 2)
        assert _in_view(screen), f"the cursor went out of view:\n{screen}"
        assert "Tell me more" in _pane(screen) and "Paragraph 1 of" in _pane(screen), screen
    finally:
        t.stop()


def _on_disk(tmp_path: Path) -> str:
    """The transcript's file (saved at each turn's end)."""
    found = list((tmp_path / "data" / "transcripts").glob("*.md"))
    return found[0].read_text(encoding="utf-8") if found else ""


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@pytest.mark.parametrize(
    ("version", "hx"), [_helix("25.07", "hx-25.07", "hx-25.07")]
)  # 25.01 asks no question with choices: the card and the status line
def test_the_card_is_in_view_before_the_approval_popup(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """A permission asked after a reply longer than the window: when Helix 25.07 pops up
    the question, the card's diff is on screen beside it; once answered there, the
    reply goes on in view."""
    app = tmp_path / "workspace" / "app.py"
    turns = [
        [
            {"text": LONG, "chunks": 10},
            {"permission": {"toolCall": edit_call(app, APP, EDITED)}},
            {"writeFile": {"path": str(app), "content": EDITED}},
            {"text": "\n\nThe edit is done.", "chunks": 2},
        ]
    ]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-popup", turns, height=40)
    t = helix.t
    try:
        _explain(helix)
        screen = t.wait_for(lambda s: "Allow for this session" in s, "no question popped up")
        assert "-    return x * y" in screen and "+    return x * y  # the product" in screen, (
            f"the diff is not in view with the question:\n{screen}"
        )
        choices = re.findall(r" {10,}((?:Allow|Reject)[\w ]*?)\s*$", screen, re.MULTILINE)
        assert choices[0] == "Reject", f"Enter alone, on the choice selected, allows:\n{screen}"
        t.keys(*["Down"] * choices.index("Allow once"), "Enter")
        screen = _ended(helix, tmp_path, 1)
        assert "The edit is done." in _pane(screen), f"the reply's end is not in view:\n{screen}"
        assert _in_view(screen), screen
    finally:
        t.stop()


# --- the agent edits a file open in Helix, with its own tools ------------------------------

MINE = "def add(x, y):  # mine\n"
CONFLICT_ACTIONS = (
    "Take the agent's version",
    "Keep my version",
    "Compare with the agent's version",
)


def _to_app(helix: Helix, version: str) -> None:
    """From the transcript to app.py: 25.01 shows them side by side, 25.07 one at a time."""
    helix.t.keys(*(["C-w", "w"] if version == "25.01" else ["g", "a"]))
    helix.t.wait_for(lambda s: re.search(r"NOR\s+app\.py", s) is not None, "not in app.py")


def _app_view(screen: str, version: str) -> str:
    """app.py's window: the left one in 25.01, the whole screen in 25.07."""
    if version == "25.01":
        screen = "\n".join(line.split("│")[0].rstrip() for line in screen.splitlines())
    return _pane(screen)


def _app_saved(screen: str) -> bool | None:
    """Whether app.py's status line says it is saved (no ``[+]``), None when not shown."""
    found = re.search(r"(?m)^\s*(?:NOR|INS|SEL)?\s+app\.py( \[\+\])?\s+\d+ sel", screen)
    return None if found is None else found.group(1) is None


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_file_the_agent_edits_itself_follows_and_the_chat_says_what_to_answer_at_w(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """The agent changes app.py on disk itself while it is open and saved: the buffer
    shows the change (modified), and the chat says what Helix will answer at :w and how to
    go on. :w is refused, as it says; :reload (25.01) or :w! (25.07) keeps the agent's
    text, marked saved; one u takes the change back, and :w writes what the buffer shows."""
    app = tmp_path / "workspace" / "app.py"
    turns = [[replace_in_file(app, "return x * y\n", "return x * y  # the product\n")]]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-disk", turns)
    t = helix.t
    try:
        _explain(helix)
        if version == "25.01":  # app.py is on screen beside the chat
            t.wait_for(lambda s: "# the product" in _app_view(s, version), "did not follow")
            shown = time.time() - app.stat().st_mtime
            print(f"hx {version}: the agent's change on screen {shown:.2f} s after its write")
        _ended(helix, tmp_path, 1)
        _to_app(helix, version)
        screen = t.wait_for(
            lambda s: "# the product" in _app_view(s, version) and _app_saved(s) is False,
            "the buffer did not follow",
        )
        assert app.read_text() == EDITED, "the agent wrote the file"
        hint = "Helix refuses your next :w of it (“file modified by an external process”)"
        _wait(lambda: hint in " ".join(_on_disk(tmp_path).split()), "the chat does not say")
        helix.command("w")
        t.wait_for(lambda s: "modified by an external process" in s, ":w was not refused")
        helix.command("reload" if version == "25.01" else "w!")
        screen = t.wait_for(lambda s: _app_saved(s) is True, "app.py is not marked saved")
        assert "# the product" in _app_view(screen, version) and app.read_text() == EDITED
        t.keys("u")
        screen = t.wait_for(lambda s: "# the" not in _app_view(s, version), "u did not undo")
        assert _app_saved(screen) is False, screen
        helix.command("w")
        t.wait_for(lambda s: "'app.py' written" in s, "not written")
        assert app.read_text() == APP, "what the buffer shows"
    finally:
        t.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_unsaved_changes_meet_the_agents_edit_and_nothing_is_lost(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """The user typed in app.py without saving; the agent changes the file on disk: the
    buffer keeps what was typed, the chat says so, and app.py's code actions offer the
    three ways out. Taking the agent's version shows it, and says what :w will answer; one u
    brings back what was typed."""
    app = tmp_path / "workspace" / "app.py"
    turns = [[replace_in_file(app, "return x * y\n", "return x * y  # the product\n")]]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-conflict", turns)
    t = helix.t
    try:
        t.keys("g", "g", "A")
        t.wait_for(lambda s: " INS " in s, "no insert mode")
        t.type("  # mine")
        helix.normal()
        _explain(helix)
        _ended(helix, tmp_path, 1)
        _wait(lambda: "unsaved changes" in _on_disk(tmp_path), "the chat does not say")
        _to_app(helix, version)
        screen = t.wait_for(lambda s: "# mine" in _app_view(s, version), "what was typed")
        assert "# the product" not in _app_view(screen, version) and app.read_text() == EDITED
        labels = [f"Goose: {label}" for label in CONFLICT_ACTIONS]
        t.keys("Space", "a")
        t.wait_for(lambda s: set(labels) <= set(MENU_ITEM.findall(s)), "not all three offered")
        helix.normal()
        helix.code_action(labels[0])
        screen = t.wait_for(
            lambda s: "# the product" in _app_view(s, version) and "# mine" not in s,
            "the agent's version was not taken",
        )
        said = "app.py now holds the agent's version (one undo brings yours back). Helix refuses"
        assert said in screen, f"what :w will answer, and how to go on, is not said:\n{screen}"
        t.keys("u")
        screen = t.wait_for(lambda s: "# mine" in _app_view(s, version), "u did not undo it")
        assert "# the product" not in _app_view(screen, version)
        (mine,) = (tmp_path / "data" / "conflicts").rglob("yours-app.py")
        assert mine.read_text() == MINE + APP.split("\n", 1)[1], "kept in the data dir too"
    finally:
        t.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_chat_is_forked_at_its_first_turn_from_the_heading(
    version: str, hx: Path, tmp_path: Path
) -> None:
    """Two turns, then **Goose: Fork chat here** on the first turn's heading: a new chat
    opens with the first turn only, and goose's session/fork was cut before the second."""
    turns = [[{"text": REPLY}], [{"text": "The second answer."}]]
    helix = _chat(tmp_path, hx, f"goose-hx-{version}-fork", turns)
    t = helix.t
    try:
        _explain_twice(helix, version, tmp_path)
        _ended(helix, tmp_path, 2)
        t.wait_for(lambda s: "The second answer." in s, "no second answer")
        t.keys("g", "g", "/")
        t.type("## You")
        t.keys("Enter")  # the first turn's heading, from the top
        helix.code_action("Goose: Fork chat here")
        screen = t.wait_for(lambda s: "Forked from" in s, "the fork was not shown")
        assert "do what they say." in _pane(screen) and "The second answer." not in _pane(screen)
        messages = received(tmp_path / "agent.jsonl")
        (fork,) = [m for m in messages if m.get("method") == "session/fork"]
        assert isinstance(fork["params"]["_meta"]["conversationBefore"], int)
    finally:
        t.stop()


GOOSED_SECRET = "desktop-secret-7d2e"
GOOSED_REPLY = "Desktop's goose says: add, sub and mul are arithmetic."


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@HELIX.one()
def test_a_goosed_turn_streams_into_helix(version: str, hx: Path, tmp_path: Path) -> None:
    """Goose Desktop's goosed as the agent (``agent.goosed`` in languages.toml, its secret
    in the environment): Explain streams goosed's reply into the transcript, and its tool
    confirmation is allowed from the card."""
    new = version != "25.01"
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "app.py").write_text(APP)
    confirm = {"id": "call_1", "name": "developer__shell", "arguments": {"command": "make test"}}
    steps: list[dict[str, Any]] = [
        {"text": GOOSED_REPLY, "pieces": [GOOSED_REPLY[:20], GOOSED_REPLY[20:]]},
        {"confirm": confirm},
        {"text": " Tests ran."},
    ]
    with GoosedThread(FakeGoosed(GOOSED_SECRET, turns=[steps])) as goosed:
        config = tmp_path / "config" / "helix"
        config.mkdir(parents=True)
        shipped = (ROOT / "editors" / "helix" / "languages.toml").read_text(encoding="utf-8")
        ours = shipped.replace(
            'command = "goose-ls"\n',
            f"command = {json.dumps(SERVER_COMMAND[0])}\nargs = {json.dumps(SERVER_COMMAND[1:])}\n",
        ).replace(
            'config = { agent = { command = "goose acp" } }\n',
            f"config = {{ agent = {{ goosed = {json.dumps(goosed.url)} }}, "
            f"dataDir = {json.dumps(str(tmp_path / 'data'))} }}\n",
        )
        assert goosed.url in ours, "the shipped file changed"
        (config / "languages.toml").write_text(ours)
        keys = (ROOT / "editors" / "helix" / "config.toml").read_text(encoding="utf-8")
        (config / "config.toml").write_text(keys)
        log = tmp_path / "logs" / "goose-ls.log"
        helix = _started(
            hx, workspace, tmp_path, f"goose-hx-{version}-goosed", "app.py",
            GOOSE_LS_AGENT_TOKEN=GOOSED_SECRET,
        )  # fmt: skip
        t = helix.t
        try:
            t.wait_for(lambda s: "def mul" in s, "Helix did not open app.py")
            _wait(lambda: log.exists() and "lifecycle: workspace" in log.read_text(), "no goose-ls")
            _explain(helix)
            t.wait_for(lambda s: "are arithmetic." in _pane(s), "goosed's reply is not shown")
            t.wait_for(lambda s: "waiting for your approval" in s, "no permission asked")
            if new:  # 25.07 also shows it as a message with choices: Escape leaves it waiting
                t.wait_for(lambda s: "Allow for this session" in s, "no choices")
                helix.normal()
                t.wait_for(lambda s: "│ The agent is waiting" not in s, "the choices stayed")
            t.keys("/")
            t.type("Permission needed")
            t.keys("Enter")  # the cursor on the card
            t.wait_for(lambda s: "make test" in _pane(s), "the card does not show the command")
            assert goosed.answers == [], "goosed waits for the answer"
            helix.run(("y",) if new else None, "Goose: Allow once")
            t.wait_for(
                lambda s: "Permission answered: Allow once" in s and "Tests ran." in s,
                "the answer did not reach goosed",
            )
            (answer,) = goosed.answers
            assert answer["id"] == "call_1" and answer["action"] == "allow_once"
            _ended(helix, tmp_path, 1)
            helix.command("qa!")
            _wait(lambda: not t.alive(), "Helix did not quit")
        finally:
            t.stop()
    (transcript,) = (tmp_path / "data" / "transcripts").glob("*.md")
    text = transcript.read_text(encoding="utf-8")
    assert GOOSED_REPLY in text and "Tests ran." in text, text
