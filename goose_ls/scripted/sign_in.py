"""The scripted agent's terminal sign-in, run as ACP's ``terminal`` auth methods run an
agent: its own command with the method's arguments, in a terminal the user types in.

It asks for a code; a code typed keeps the sign-in in the script's ``terminalSignIn``
file (as a real agent keeps its credentials), with the arguments and the methods'
environment it was run with, and exits 0; an empty one exits 1, signed in to nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def _terminal_methods(script: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in script.get("authMethods", []) if m.get("type") == "terminal"]


def asked(script: dict[str, Any], args: list[str]) -> bool:
    """Whether the agent was run with one of its terminal methods' arguments, and keeps
    sign-ins (any other arguments are the agent's own)."""
    methods = _terminal_methods(script)
    return bool(script.get("terminalSignIn")) and any(m.get("args", []) == args for m in methods)


def run(script: dict[str, Any], args: list[str]) -> int:
    """Ask the user for a code on the terminal; keep the sign-in when one is typed."""
    sys.stdout.write("Sign in to the scripted agent.\nCode: ")
    sys.stdout.flush()
    code = sys.stdin.readline().strip()
    if not code:
        print("No code: not signed in.", flush=True)
        return 1
    names = [str(name) for method in _terminal_methods(script) for name in method.get("env") or {}]
    kept = {"args": args, "code": code, "env": {name: os.environ.get(name) for name in names}}
    Path(script["terminalSignIn"]).write_text(json.dumps(kept), encoding="utf-8")
    print("Signed in.", flush=True)
    return 0


def signed_in(script: dict[str, Any]) -> bool:
    """Whether a terminal sign-in was kept (by this agent or an earlier one)."""
    path = script.get("terminalSignIn")
    return path is not None and Path(path).exists()
