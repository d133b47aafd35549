"""A window's claim on a chat ends with its process, even one killed and never reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from goose_ls.process_identity import process_alive, process_named, this_process


def test_a_running_process_is_alive_and_a_killed_one_is_not_even_unreaped() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        name = process_named(child.pid)
        assert process_alive(name)
        os.kill(child.pid, signal.SIGKILL)
        # Not waited for: a zombie until reaped, as goose-ls is after Helix 25.07 kills
        # it and exits itself.
        deadline = time.monotonic() + 10
        while process_alive(name):
            assert time.monotonic() < deadline, "a killed, unreaped process counts as running"
            time.sleep(0.01)
        with open(f"/proc/{child.pid}/stat") as stat:
            assert stat.read().rsplit(")", 1)[1].split()[0] == "Z", "the child was reaped"
    finally:
        child.kill()
        child.wait()
    assert not process_alive(name)


def test_a_pid_given_to_another_process_is_not_the_one_named() -> None:
    host, pid, started = this_process().split(":")
    assert process_alive(f"{host}:{pid}:{started}")
    assert not process_alive(f"{host}:{pid}:{int(started) + 1}")
    assert process_alive(f"elsewhere.example:{pid}:1"), "another host's cannot be told"
