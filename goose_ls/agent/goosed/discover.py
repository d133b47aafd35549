"""A running Goose Desktop's goosed, found among the user's own processes (Linux).

Desktop (1.16 to 1.40) starts ``goosed agent`` with a free port and a secret it makes
anew at each start, handed to goosed in its environment (``GOOSE_PORT``,
``GOOSE_SERVER__SECRET_KEY``) and kept nowhere on disk; from 1.26 goosed serves TLS with
a self-signed certificate it keeps under goose's configuration folder (``tls/``) and
whose fingerprint it prints to Desktop alone. So the port and the secret can be read
from the process's environment (``/proc/<pid>/environ``, which only its own user may
read), and the fingerprint from the certificate file: nothing else of the user's is
looked at, and another user's processes are skipped. Elsewhere than Linux nothing is
found (docs/configuration.md says what to set instead).
"""

from __future__ import annotations

import hashlib
import os
import ssl
from pathlib import Path

import attrs

PROC = Path("/proc")


@attrs.frozen
class RunningGoosed:
    pid: int
    started: int
    """Its start time (clock ticks after boot): the newest is the last found."""
    port: int
    secret: str
    tls: bool | None
    """``GOOSE_TLS`` as the process has it (None: unset, goosed's default: on from 1.26)."""

    def url(self, tls: bool = True) -> str:
        return f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"


def running(proc: Path = PROC) -> list[RunningGoosed]:
    """The user's ``goosed agent`` processes with a secret in their environment."""
    uid = os.getuid() if hasattr(os, "getuid") else -1
    found: list[RunningGoosed] = []
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
            if Path(os.fsdecode(argv[0])).name != "goosed" or b"agent" not in argv[1:2]:
                continue
            environ = dict(
                item.split("=", 1)
                for item in (entry / "environ").read_bytes().decode("utf-8", "replace").split("\0")
                if "=" in item
            )
        except (OSError, IndexError):
            continue
        secret = environ.get("GOOSE_SERVER__SECRET_KEY", "").strip()
        port = environ.get("GOOSE_PORT", "3000").strip()
        if not secret or not port.isdigit():
            continue
        tls = environ.get("GOOSE_TLS", "").strip().lower()
        started = stat.rsplit(")", 1)[-1].split()
        found.append(
            RunningGoosed(
                int(entry.name),
                int(started[19]) if len(started) > 19 and started[19].isdigit() else 0,
                int(port),
                secret,
                None if not tls else tls not in ("false", "0", "no", "off"),
            )
        )
    return sorted(found, key=lambda g: (g.started, g.pid))


def goose_config_dir() -> Path:
    """goose's configuration folder (``$XDG_CONFIG_HOME/goose``, or ``$GOOSE_PATH_ROOT/config``)."""
    if root := os.environ.get("GOOSE_PATH_ROOT"):
        return Path(root) / "config"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "goose"


def served_fingerprint(port: int, timeout: float = 5.0) -> str | None:
    """The SHA-256 fingerprint of the certificate served on the loopback ``port``, when
    it is one goose keeps in its ``tls/`` folder (so made by the user's goose); else None."""
    try:
        pem = ssl.get_server_certificate(("127.0.0.1", port), timeout=timeout)
    except (OSError, ValueError):
        return None
    served = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).digest()
    folder = goose_config_dir() / "tls"
    for file in sorted(folder.iterdir()) if folder.is_dir() else []:
        try:
            text = file.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        for block in text.split("-----END CERTIFICATE-----")[:-1]:
            start = block.find("-----BEGIN CERTIFICATE-----")
            if start < 0:
                continue
            try:
                der = ssl.PEM_cert_to_DER_cert(block[start:] + "-----END CERTIFICATE-----\n")
            except ValueError:
                continue
            if hashlib.sha256(der).digest() == served:
                return ":".join(f"{b:02X}" for b in served)
    return None
