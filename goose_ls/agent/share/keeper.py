"""The keeper of a shared ``goose serve``: it runs the server, and stops it once no
goose-ls has used it for the grace period.

The goose-ls that starts a shared server (:mod:`.goose_serve`) runs this module as a
process of its own session, which goose-ls's exit leaves running (the server outlives
the window that started it while others use it), with goose serve as its child in the
same process group. Every moment it looks at the share's leases (see
:mod:`.folder`): once none has been held for the whole grace, it takes the share's
lock, looks once more, forgets the state and stops the server: SIGTERM to the group,
then SIGKILL after the stop timeout. Waiting in a process of its own, rather than in the
last goose-ls to leave, means an editor closing its last window is not kept waiting,
and a window killed with SIGKILL still lets the server go. A server that ends by itself
is forgotten too, and the keeper ends with it; one told to stop (SIGTERM) ends with it
as well, leaving the state to the goose-ls that told it, which holds the lock meanwhile.

``python -m goose_ls.agent.share.keeper FOLDER GRACE STOP_TIMEOUT -- GOOSE serve ARGS...``
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from goose_ls.agent.share.folder import SharePlace
from goose_ls.workspace import reaper

LOOK_EVERY = 1.0
"""Seconds between two looks at the leases (at most; less for a short grace)."""


def look_every(grace: float) -> float:
    """Seconds between two looks at the leases for ``grace``: a quarter of it, at most
    :data:`LOOK_EVERY`."""
    return min(LOOK_EVERY, max(grace / 4, 0.05))


class Keeper:
    def __init__(self, place: SharePlace, grace: float, stop_timeout: float) -> None:
        self.place = place
        self.grace = grace
        self.stop_timeout = stop_timeout
        self.told_to_stop = False
        self.idle_since: float | None = None

    def _told(self, signum: int, frame: FrameType | None) -> None:
        self.told_to_stop = True

    def keep(self, command: list[str]) -> int:
        """Run the server until it ends, is told to, or is no longer used."""
        signal.signal(signal.SIGTERM, self._told)  # the group's SIGTERM: stop in order
        # The server goes with the keeper, even one killed with SIGKILL: no goose serve
        # is left that no state names.
        server = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, preexec_fn=reaper.dying_with_parent()
        )
        look = look_every(self.grace)
        while True:
            try:
                code = server.wait(timeout=look)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                print(f"goose serve ended with code {code}", flush=True)
                if not self.told_to_stop:
                    with self.place.locked():
                        self.place.forget(os.getpid())
                # Told to (the group's SIGTERM ends the server too): the goose-ls that
                # told it holds the lock, waits for this keeper to end, and forgets the
                # state itself. Waiting for the lock here, the keeper never ended, and
                # that goose-ls killed it after its whole stop timeout.
                return code
            if self.told_to_stop or self._idle():
                return self._stop(server)

    def _idle(self) -> bool:
        """No goose-ls used the server for the whole grace (the state forgotten if so)."""
        if self.place.in_use():
            self.idle_since = None
            return False
        now = time.monotonic()
        self.idle_since = self.idle_since or now
        if now - self.idle_since < self.grace:
            return False
        with self.place.locked():  # no goose-ls attaches while we look the last time
            if self.place.in_use():
                self.idle_since = None
                return False
            self.place.forget(os.getpid())
        print(f"no goose-ls used goose serve for {self.grace:g} s: stopping it", flush=True)
        return True

    def _stop(self, server: subprocess.Popen[bytes]) -> int:
        """Stop the server's group (told to, the state is the teller's to forget)."""
        os.killpg(os.getpid(), signal.SIGTERM)  # the keeper itself only notes it
        try:
            server.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            print("goose serve ignored SIGTERM: killing it", flush=True)
            os.killpg(os.getpid(), signal.SIGKILL)
        return 0


def main(argv: list[str]) -> int:
    folder, grace, stop_timeout, separator, *command = argv
    if separator != "--" or not command:
        sys.exit(
            "usage: python -m goose_ls.agent.share.keeper FOLDER GRACE STOP_TIMEOUT -- COMMAND"
        )
    keeper = Keeper(SharePlace(Path(folder)), float(grace), float(stop_timeout))
    return keeper.keep(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
