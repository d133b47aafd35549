"""A real editor in a real terminal, for tests: tmux on a server of the test's own, keys
in, the screen out, as a person types and reads."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from goose_ls.scripted.script import elicitation_answers

TMUX = shutil.which("tmux")
_started = itertools.count()
MISSING = "TMUX IS MISSING: the real-editor tests did not run (apt-get install tmux)"


class TmuxTerminal:
    """One tmux server (its own socket: other tmux servers untouched) running one command
    in a window of ``width`` x ``height``."""

    def __init__(self, name: str, width: int = 120, height: int = 40) -> None:
        # Its own socket each time: the next test's server never meets one still going away.
        self.socket = f"{name}-{os.getpid()}-{next(_started)}"
        self.width, self.height = width, height

    def start(self, command: str, cwd: Path, env: Mapping[str, str]) -> None:
        """Run ``command`` (a shell line) in ``cwd`` with exactly ``env``."""
        environment = {key: value for key, value in env.items() if key != "TMUX"}
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-x", str(self.width), "-y",
            str(self.height), command, cwd=cwd, env=environment,
        )  # fmt: skip

    def keys(self, *keys: str) -> None:
        """Keys by tmux's names (``Enter``, ``C-s``, ``Escape``)."""
        self._tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        """``text`` as typed, all at once (a fast typist, or a paste without brackets)."""
        self._tmux("send-keys", "-l", text)

    def enter(self, text: str = "") -> None:
        """``text`` typed, then Enter: an answer given at a prompt."""
        if text:
            self.type(text)
        self.keys("Enter")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def wait_for(self, seen: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """The screen once ``seen`` holds for it; else fail, showing the screen."""
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while not seen(screen):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}; the screen:\n{screen}")
            time.sleep(0.05)
            screen = self.screen()
        return screen

    def alive(self) -> bool:
        """Whether the command still runs (tmux ends the session when it exits)."""
        done = subprocess.run(
            ["tmux", "-L", self.socket, "has-session"], capture_output=True, check=False
        )
        return done.returncode == 0

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)

    def _tmux(
        self, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True, text=True, check=True, cwd=cwd, env=env,
        )  # fmt: skip
        return done.stdout


def answers_once_idle(terminal: TmuxTerminal, record: Path, idle: str) -> list[dict[str, Any]]:
    """The answers the scripted agent (recording to ``record``) got to its questions, once
    it has one and the editor's status line says ``idle``."""
    terminal.wait_for(
        lambda s: bool(elicitation_answers(record)) and idle in s,
        "the agent got no answer, or the turn did not end",
    )
    return elicitation_answers(record)
