"""Whose program holds the other end of a loopback connection: the shared server's
secret goes only to a server of the user's own.

goose-ls picks a free loopback port and closes it; ``goose serve`` binds it a moment
later. In that moment, or after the server died, another user's program may bind the
port, answer ``/status`` as a server would, and be sent the secret and then the chats.
So before the upgrade request (which carries the secret), the connection is checked:

- on Linux, ``/proc/net/tcp`` names the owners of the server's end of this very
  connection (whoever accepted it; until then, the listener's user) and of the socket
  listening on the port;
- elsewhere (macOS), ``lsof`` names the owner of the server's end of this connection
  (it lists a user's own processes only: another user's end is not found).

Anything else (the end not found, lsof missing or failing, another owner) refuses:
fail closed. A program of the same user is not guarded against: it can read the
secret's file anyway.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import sys
from pathlib import Path

from goose_ls.errors import AgentUnavailable
from goose_ls.tasks import within

PROC_TCP = Path("/proc/net/tcp")
LISTEN = "0A"
"""A listening socket's state in /proc/net/tcp."""
LSOF_TIMEOUT = 5.0


def _hex_address(address: tuple[str, int]) -> str:
    """An IPv4 address as /proc/net/tcp spells it: the 32-bit number in the machine's
    byte order, then the port, both in hex."""
    host, port = address
    (number,) = struct.unpack("=I", socket.inet_aton(host))
    return f"{number:08X}:{port:04X}"


def linux_owners(ours: tuple[str, int], theirs: tuple[str, int], table: str) -> set[int]:
    """The users owning the socket at ``theirs`` connected to ``ours`` and the sockets
    listening where it was accepted, read from ``table`` (/proc/net/tcp's text); empty
    when that socket is not in it (the server's end elsewhere: refused)."""
    local, remote = _hex_address(theirs), _hex_address(ours)
    listening = (local, _hex_address(("0.0.0.0", theirs[1])))
    connection: set[int] = set()
    listeners: set[int] = set()
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) <= 7:
            continue
        if fields[1] == local and fields[2] == remote:
            connection.add(int(fields[7]))
        elif fields[1] in listening and fields[3] == LISTEN:
            listeners.add(int(fields[7]))
    return connection | listeners if connection else set()


def lsof_owners(output: str, end: str) -> set[int]:
    """The users owning the socket named ``end`` (``A:P->B:Q``) in ``lsof -F pun``
    output: a process's lines ``p<pid>``, ``u<uid>``, then its files' ``f``, ``n``."""
    uid: int | None = None
    found: set[int] = set()
    for line in output.splitlines():
        tag, value = line[:1], line[1:]
        if tag == "p":
            uid = None
        elif tag == "u" and value.isdigit():
            uid = int(value)
        elif tag == "n" and value == end and uid is not None:
            found.add(uid)
    return found


async def owners(sock: socket.socket) -> set[int]:
    """The users owning the other end of ``sock`` (a connected loopback TCP socket)."""
    ours, theirs = sock.getsockname()[:2], sock.getpeername()[:2]
    if sys.platform.startswith("linux"):
        table = await asyncio.to_thread(PROC_TCP.read_text, encoding="ascii", errors="replace")
        return linux_owners(ours, theirs, table)
    # lsof shows a user only their own processes' sockets: another user's end is not
    # found, which refuses it as surely.
    process = await asyncio.create_subprocess_exec(
        "lsof", "-nP", "-a", f"-iTCP@{theirs[0]}:{theirs[1]}", "-sTCP:ESTABLISHED", "-Fpun",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        output, _ = await within(LSOF_TIMEOUT, process.communicate())
    except asyncio.TimeoutError:
        return set()
    finally:
        if process.returncode is None:
            process.kill()
    end = f"{theirs[0]}:{theirs[1]}->{ours[0]}:{ours[1]}"
    return lsof_owners(output.decode(errors="replace"), end)


async def check_own(sock: socket.socket, url: str) -> None:
    """``sock``'s other end is the user's own program, or :class:`AgentUnavailable`."""
    try:
        found = await owners(sock)
    except OSError as exc:  # no /proc, no lsof
        found, why = set(), f"goose-ls cannot tell whose it is ({exc})"
    else:
        others = sorted(found - {os.geteuid()})
        why = f"user {', '.join(map(str, others))} holds it" if others else "its end is not found"
    if found == {os.geteuid()}:
        return
    raise AgentUnavailable(
        "insecure",
        f"the port of the shared goose serve at {url} is not a program of yours: {why}; "
        "goose-ls sent it nothing",
        "Restart the agent (goose.restart): goose-ls starts goose serve on another port. "
        "If it happens again, another user's program is taking the ports goose-ls picks.",
    )
