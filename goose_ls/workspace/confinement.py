"""Keeping the agent inside the project: roots, resolved paths, and secrets.

Every path is resolved (symlinks followed, ``..`` collapsed) and compared with the
roots component by component, never as strings: ``/work/app-old`` is not inside
``/work/app``. Secrets are refused wherever they are.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path, PurePath

DEFAULT_SECRETS = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh/*",
    ".git/config",
    ".netrc",
    ".npmrc",
    ".pypirc",
)


class Denied(Exception):
    """The agent may not touch this path; the message says why."""

    def __init__(self, message: str, outside: Path | None = None) -> None:
        super().__init__(message)
        self.outside = outside
        """The resolved path, when the only problem is that it is outside the roots."""


class Confinement:
    def __init__(self, roots: Iterable[str], secrets: Iterable[str] = DEFAULT_SECRETS) -> None:
        self.roots = [Path(os.path.realpath(root)) for root in roots]
        self.secrets = list(secrets)

    def check(self, path: str, what: str = "path") -> Path:
        """The resolved path, or :class:`Denied` when it is outside every root or secret."""
        if not os.path.isabs(path):
            raise Denied(f"{what} must be absolute: {path}")
        resolved = Path(os.path.realpath(path))
        if not any(resolved == root or root in resolved.parents for root in self.roots):
            shown = ", ".join(str(r) for r in self.roots)
            if secret := self._secret(resolved):
                raise Denied(f"{path} looks like a secret ({secret})")
            raise Denied(f"{path} is outside the workspace ({shown})", outside=resolved)
        if secret := self._secret(resolved):
            raise Denied(f"{path} looks like a secret ({secret}); goose-ls does not hand those out")
        return resolved

    def _secret(self, path: Path) -> str | None:
        relative = next((path.relative_to(r) for r in self.roots if r in path.parents), path)
        parts = PurePath(relative).parts
        for pattern in self.secrets:
            if "/" in pattern:
                depth = pattern.count("/") + 1
                tails = ["/".join(parts[i : i + depth]) for i in range(len(parts) - depth + 1)]
                if any(fnmatch.fnmatchcase(tail, pattern) for tail in tails):
                    return pattern
            elif fnmatch.fnmatchcase(path.name, pattern):
                return pattern
        return None
