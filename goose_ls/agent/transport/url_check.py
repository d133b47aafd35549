"""What ``agent.url`` points at, checked before anything is sent: the address, the token,
the TLS to use. Everything here fails closed.

- ``ws://`` and ``wss://`` (goose serve's WebSocket at ``/acp``), or ``http://`` and
  ``https://`` (ACP over streamable HTTP at the same place, see :mod:`.streamable_http`).
- ``ws://`` and ``http://`` carry the token in clear text: only to this machine (a loopback address, or
  a name all of whose addresses are loopback, connected to by that address), unless
  ``agent.allowInsecure`` says the network is the user's.
- No token in the URL (``?token=``, ``user:pass@``): URLs end up in logs and statuses.
- The token comes from ``GOOSE_LS_AGENT_TOKEN``, else ``agent.tokenFile`` (refused when
  others than its owner may read it), else ``agent.token``.
- ``wss://`` trusts the system's authorities, or exactly the certificate whose SHA-256
  fingerprint is ``agent.tlsFingerprint`` (checked before the token is sent).
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import os
import socket
import ssl
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from goose_ls import logs
from goose_ls.errors import AgentUnavailable
from goose_ls.settings import AgentSettings

TOKEN_VARIABLE = "GOOSE_LS_AGENT_TOKEN"
_FIX_URL = "Set agent.url to goose serve's WebSocket, e.g. ws://127.0.0.1:3284/acp."


@attrs.frozen
class Target:
    """A checked ``agent.url``."""

    url: str
    host: str
    port: int
    secure: bool
    """``wss://`` or ``https://``: TLS."""
    address: str | None = None
    """For ``ws://`` or ``http://`` to this machine: the loopback address to connect to (the name is
    not resolved again, so it cannot change in between)."""
    insecure: bool = False
    """``ws://`` or ``http://`` to another machine, allowed by ``agent.allowInsecure``."""
    http: bool = False
    """``http://`` or ``https://``: ACP over streamable HTTP, not a WebSocket."""


def unusable(problem: str, fix: str) -> AgentUnavailable:
    return AgentUnavailable("unusable", problem, fix)


async def check_url(
    settings: AgentSettings,
    url: str | None = None,
    name: str = "agent.url",
    schemes: tuple[str, ...] = ("ws", "wss", "http", "https"),
    fix: str = _FIX_URL,
) -> Target:
    """``agent.url`` (or ``url``, the setting ``name``: ``agent.goosed`` takes
    ``schemes`` http and https only) as a :class:`Target`, or :class:`AgentUnavailable`
    saying why not."""
    url = (settings.url if url is None else url).strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise unusable(f"{name} is not a URL ({exc})", fix) from None
    scheme = parts.scheme.lower()
    if scheme not in schemes or not parts.hostname:
        kinds = [f"{s}://" for s in schemes]
        shown = " or ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)
        raise unusable(f"{name} must be a {shown} URL, not {url!r}", fix)
    if parts.username is not None or parts.password is not None or "token" in parts.query:
        raise unusable(
            f"{name} carries a credential; goose-ls shows and logs URLs",
            f"Take it out of the URL and put the token in {TOKEN_VARIABLE} or agent.tokenFile.",
        )
    secure = scheme in ("wss", "https")
    if settings.tls_fingerprint and not secure:
        raise unusable(
            f"agent.tlsFingerprint is set but {name} is not wss:// nor https://",
            "Use wss:// or https:// (goose serve --tls), or remove the fingerprint.",
        )
    target = Target(
        url, parts.hostname, port or (443 if secure else 80), secure, http=scheme.startswith("http")
    )
    if secure:
        return target
    address = await _loopback_address(target.host, target.port)
    if address is not None:
        return attrs.evolve(target, address=address)
    if not settings.allow_insecure:
        raise AgentUnavailable(
            "insecure",
            f"goose-ls will not send the token to {target.host} over {scheme}://: the "
            "connection is not encrypted and the server is not on this machine",
            "Use wss:// or https:// (goose serve --tls) or an SSH tunnel to 127.0.0.1 (see the "
            "configuration docs); or, on a network that is yours alone, set "
            "agent.allowInsecure.",
        )
    return attrs.evolve(target, insecure=True)


async def _loopback_address(host: str, port: int) -> str | None:
    """A loopback address ``host`` stands for, if every address it has is one."""
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        pass
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return None
    addresses = [str(info[4][0]) for info in found]
    if addresses and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        return addresses[0]
    return None


def read_token(settings: AgentSettings, environ: Mapping[str, str]) -> tuple[str, str]:
    """The server's token from the first place that has one ("" when none does), and
    that place; from then on the log never shows it."""
    if token := environ.get(TOKEN_VARIABLE, "").strip():
        found = token, TOKEN_VARIABLE
    elif settings.token_file:
        path = Path(os.path.expanduser(settings.token_file))
        found = _token_from_file(path), f"agent.tokenFile ({path})"
    elif token := settings.token.strip():
        found = token, "agent.token"
    else:
        found = "", "none"
    logs.hide(found[0])
    return found


_NO_WAIT = sum(getattr(os, flag, 0) for flag in ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC"))
"""Open without waiting (a FIFO), without taking a terminal as ours, nor passing it on
(POSIX flags; Windows has none of them)."""

TOKEN_FILE_LIMIT = 64 * 1024
"""The most a token file may hold: a larger one is not a token."""


def _token_from_file(path: Path) -> str:
    """The token in ``path``, checked on the file opened (a link followed, as a secrets
    mount may be one): a plain file others cannot read. Opened without waiting, so a
    FIFO or a device in its place is refused instead of hanging the start."""
    try:
        fd = os.open(path, os.O_RDONLY | _NO_WAIT)
        with os.fdopen(fd, "rb") as source:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise unusable(
                    f"the token file {path} is not a plain file", "Check agent.tokenFile."
                )
            if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise AgentUnavailable(
                    "insecure",
                    f"the token file {path} may be read by others "
                    f"(mode {stat.filemode(info.st_mode)})",
                    f"Run `chmod 600 {path}`.",
                )
            data = source.read(TOKEN_FILE_LIMIT + 1)
    except OSError as exc:
        raise unusable(
            f"cannot read the token file {path}: {exc.strerror or exc}",
            "Check agent.tokenFile.",
        ) from None
    if len(data) > TOKEN_FILE_LIMIT:
        raise unusable(f"the token file {path} is over 64 KiB: not a token", "Check it.")
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise unusable(f"the token file {path} is not UTF-8 text", "Check it.") from None
    if not token:
        raise unusable(f"the token file {path} is empty", "Write goose serve's token in it.")
    return token


def fingerprint(pin: str) -> bytes:
    """``AB:CD:...`` (as goose prints it) or plain hex, as the 32 bytes of a SHA-256."""
    text = pin.strip().replace(":", "").lower()
    text = text.removeprefix("sha256")
    try:
        digest = bytes.fromhex(text)
    except ValueError:
        digest = b""
    if len(digest) != hashlib.sha256().digest_size:
        raise unusable(
            "agent.tlsFingerprint is not a SHA-256 fingerprint",
            "Copy the GOOSED_CERT_FINGERPRINT=... value goose prints (64 hex digits).",
        )
    return digest


def tls_context(settings: AgentSettings) -> ssl.SSLContext:
    """The system's authorities, or none when a fingerprint is pinned (checked instead,
    by :func:`check_pin`, before anything is sent)."""
    context = ssl.create_default_context()
    if settings.tls_fingerprint:
        fingerprint(settings.tls_fingerprint)  # a bad one is refused before connecting
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def check_pin(ssl_object: ssl.SSLObject | ssl.SSLSocket | None, pin: bytes, host: str) -> None:
    """The connection's certificate is the pinned one, or :class:`AgentUnavailable`."""
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    seen = hashlib.sha256(der).digest() if der else b""
    if seen != pin:
        shown = ":".join(f"{b:02X}" for b in seen) or "none"
        raise AgentUnavailable(
            "tls",
            f"the certificate of {host} is not the pinned one (its fingerprint is {shown})",
            "If goose serve made a new certificate, set agent.tlsFingerprint to "
            "the GOOSED_CERT_FINGERPRINT it printed; otherwise something else answers "
            "at that address.",
        )
