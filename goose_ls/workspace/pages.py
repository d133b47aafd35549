"""Which web pages the agent may ask the user to open (a URL-mode question).

Opening a page is the user's act, asked first with its origin shown; before that, goose-ls
refuses what no one should open from an agent's word: any scheme but ``https`` (``http``
only to this machine), a URL carrying a user name or password (``http://admin:hunter2@…``
hands a credential to whatever answers), a host that does not read as itself, and
characters that would make the shown URL differ from the opened one.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from urllib.parse import urlsplit

MAX_URL = 4096
"""Longer URLs are refused (a page link the user can read is far shorter)."""
LOOPBACK_NAMES = ("localhost",)


def page_problem(url: str) -> str | None:
    """Why ``url`` is never opened, or None when it may be (once the user says yes)."""
    if len(url) > MAX_URL:
        return f"the address is over {MAX_URL} characters"
    if any(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in url):
        return "the address holds spaces or invisible characters"
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises here
    except ValueError as exc:
        return f"the address cannot be read ({exc})"
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme not in ("http", "https"):
        return f"a {scheme or 'missing'} scheme: only https pages are opened"
    if not host:
        return "the address names no host"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "the address carries a user name or password"
    if scheme == "http" and not _loopback(host):
        return "only https pages are opened (http only on this machine)"
    if _shown_host(host) is None:
        return "the host name cannot be shown as it is"
    return None


def origin(url: str) -> str:
    """The page's origin as the user is asked about it: scheme, host (an international
    name in its ASCII form, so a look-alike shows as such) and port."""
    parts = urlsplit(url)
    host = _shown_host(parts.hostname or "") or "?"
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme.lower()}://{host}{port}"


def _shown_host(host: str) -> str | None:
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host.lower()
    except UnicodeError:
        return None


def _loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def without_credentials(url: str) -> str:
    """``url`` as it may be written down (the audit log): any user name and password cut
    out; an address that cannot be read, as such."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return "(an address that cannot be read)"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return parts._replace(netloc=netloc).geturl()
