"""Keeping the agent inside the project: roots, resolved paths, and secrets.

Every path is resolved (symlinks followed, ``..`` collapsed) and compared with the
roots component by component, never as strings: ``/work/app-old`` is not inside
``/work/app``. Secrets are refused wherever they are, and by inode too (a hard link to
one is one). Without a workspace folder there are no roots, and nothing is allowed:
``/``, your home folder or a folder holding it are never roots.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat as stats
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath

import attrs

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
    ".git-credentials",
    ".aws/credentials",
    ".kube/config",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    ".gnupg/*",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    ".terraformrc",
    "credentials.json",
    "*-credentials.json",
    "service-account*.json",
    "client_secret*.json",
    ".pgpass",
    ".my.cnf",
    ".config/git/credentials",
    ".cargo/credentials*",
    ".config/gcloud/*",
    ".azure/*",
)

CREDENTIAL_MARKS = (
    ("a private key", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("a PuTTY private key", re.compile(rb"\APuTTY-User-Key-File-\d+:")),
    ("a service-account key", re.compile(rb'"private_key"\s*:\s*"-----BEGIN')),
    ("cloud credentials", re.compile(rb"(?im)^\s*aws_secret_access_key\s*=\s*\S")),
)
"""What makes a file a credential whatever its name: marks with no false friend in
ordinary source (no guess from randomness, which would hide real files)."""
SNIFF_BYTES = 65_536
"""How much of a file is looked at for those marks."""
SNIFF_LIMIT = 1 << 20
"""Files larger than this are not looked into (no key file is)."""


def credential_in(head: bytes) -> str | None:
    """What kind of credential ``head`` (a file's first bytes) holds, if any."""
    return next((what for what, mark in CREDENTIAL_MARKS if mark.search(head)), None)


SCAN_CHUNK = 1 << 18
OVERLAP = 4096
"""How far a mark may straddle two chunks of a scanned file (a key's first line is short)."""


def credential_anywhere(read: Callable[[int, int], bytes], size: int) -> str | None:
    """What kind of credential a file of ``size`` bytes holds anywhere in it (``read``:
    ``(offset, length) -> bytes``), its text as written or, for JSON, as decoded
    (``"\\u0070rivate_key"`` is ``private_key``)."""
    at = 0
    while at < size:
        chunk = read(max(at - OVERLAP, 0), SCAN_CHUNK + OVERLAP)
        if not chunk:
            break
        if what := credential_in(chunk):
            return what
        at += SCAN_CHUNK
    opening = read(0, 64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if size <= JSON_LIMIT and opening.startswith((b"{", b"[")):
        return _credential_in_json(read(0, size))  # JSON: read whole only then
    return None


JSON_LIMIT = 10_000_000
"""JSON up to this size is decoded to look for a key spelt with escapes."""


def _credential_in_json(data: bytes) -> str | None:
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith((b"{", b"[")) or b"\\u" not in text:
        return None  # no escape: the marks above have seen it as it is
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    pending = [document]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str) and (
                    what := credential_in(f'"{key}": "{value}"'.encode())
                ):
                    return what
                pending.append(value)
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and (what := credential_in(item.encode())):
            return what
    return None


def credential_file(path: Path) -> str | None:
    """What kind of credential the plain file at ``path`` holds (never following a
    link, never blocking on a FIFO), if any."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stats.S_ISREG(info.st_mode) or info.st_size > SNIFF_LIMIT:
            return None
        return credential_in(os.read(fd, SNIFF_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)


PATH_MAX = 4096
NAME_MAX = 255
"""Linux's limits, in bytes; a longer path is refused before it reaches the disk."""

NO_WORKSPACE = (
    "goose-ls has no workspace folder (the editor opened none, or it is / or your home "
    "folder), so the agent may not read, write or run anything; open a project folder"
)


class Denied(Exception):
    """The agent may not touch this path; the message says why."""

    def __init__(self, message: str, outside: Path | None = None) -> None:
        super().__init__(message)
        self.outside = outside
        """The resolved path, when the only problem is that it is outside the roots."""


class BadPath(ValueError):
    """Not a path goose-ls can use at all (NUL byte, too long): the agent's request is invalid."""


@attrs.frozen
class Verdict:
    """What the confinement says of the paths a permission request names."""

    refused: str | None = None
    """Why the call may not run at all: a secret, a path outside the roots (with
    ``workspace.outside: deny``), no workspace, a path no file can have."""
    outside: tuple[str, ...] = ()
    """Paths outside the roots, resolved, that the user is to be asked about."""


LINK_SEARCH_LIMIT = 200_000
"""Entries looked at per root when finding a hard-linked file's other names."""
HOME_DEPTH = 3
"""How deep the home folder is searched for them (``~/.config/gh/hosts.yml``)."""


def _names_of(base: Path, depth: int | None, stat: os.stat_result) -> tuple[list[Path], bool]:
    """The names under ``base`` of the file ``stat`` describes, and whether the search
    looked at every entry (it stops after :data:`LINK_SEARCH_LIMIT`)."""
    found: list[Path] = []
    seen = 0
    pending = [(base, 0)]
    while pending:
        folder, level = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > LINK_SEARCH_LIMIT:
                return found, False
            if entry.inode() == stat.st_ino:  # from the directory listing: no stat call
                try:
                    if entry.stat(follow_symlinks=False).st_dev == stat.st_dev:
                        found.append(Path(entry.path))
                except OSError:
                    pass
            elif entry.is_dir(follow_symlinks=False) and (depth is None or level + 1 < depth):
                pending.append((Path(entry.path), level + 1))
    return found, True


def _home() -> Path | None:
    try:
        return Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError):
        return None


def too_broad(root: Path) -> bool:
    """``/``, the home folder, or a folder holding it: confining to it confines nothing."""
    home = _home()
    return root == Path(root.anchor) or (
        home is not None and (root == home or root in home.parents)
    )


def roots_of(workspace: str | None, extra_roots: Iterable[str]) -> list[Path]:
    """The workspace and the extra roots (relative ones against the workspace, ``~``
    expanded), without any that is too broad; none at all without a usable workspace."""
    if workspace is None:
        return []
    base = Path(os.path.realpath(workspace))
    if too_broad(base):
        return []
    extras = (Path(os.path.realpath(base / os.path.expanduser(r))) for r in extra_roots)
    return [base, *(root for root in extras if not too_broad(root))]


def checked_spelling(path: str) -> None:
    """Refuse a path no file can have: NUL bytes, over-long, not encodable."""
    if "\0" in path:
        raise BadPath(f"the path contains a NUL byte: {path!r}")
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError:
        raise BadPath(f"the path is not a valid file name: {path!r}") from None
    if len(encoded) >= PATH_MAX or any(len(p) > NAME_MAX for p in encoded.split(b"/")):
        raise BadPath(
            f"the path is too long ({len(encoded)} bytes; at most {PATH_MAX - 1}, "
            f"{NAME_MAX} per name): {path[:80]}..."
        )


class TrailingPatterns:
    """Patterns (``.ssh/*``, ``*.pem``) matched against a path's last parts, one part to
    one part, as a walk of thousands of files needs it: one regular expression over the
    name first, the parts only for a name that could match."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._each = [(pattern, pattern.split("/")) for pattern in patterns]
        names = "|".join(f"(?:{fnmatch.translate(parts[-1])})" for _, parts in self._each)
        self._names = re.compile(names) if self._each else None

    def match(self, parts: tuple[str, ...]) -> str | None:
        """The first pattern matching ``parts`` from the right, if any."""
        if self._names is None or not parts or not self._names.match(parts[-1]):
            return None
        for pattern, own in self._each:
            tail = parts[-len(own) :]
            if len(tail) == len(own) and all(map(fnmatch.fnmatchcase, tail, own)):
                return pattern
        return None


class Confinement:
    def __init__(self, roots: Iterable[Path], secrets: Iterable[str] = DEFAULT_SECRETS) -> None:
        self.roots = [Path(os.path.realpath(root)) for root in roots]
        self.secrets = list(secrets)
        self._by_name = TrailingPatterns(self.secrets)

    def root_of(self, resolved: Path) -> Path:
        """The root ``resolved`` lies in (its anchor for a path allowed from outside)."""
        inside = (r for r in self.roots if resolved == r or r in resolved.parents)
        return next(inside, Path(resolved.anchor))

    def contains(self, resolved: Path) -> bool:
        """Whether the resolved path is a root or lies in one."""
        return any(resolved == r or r in resolved.parents for r in self.roots)

    def check(self, path: str, what: str = "path") -> Path:
        """The resolved path, or :class:`Denied` when it is outside every root or secret."""
        checked_spelling(path)
        if not self.roots:
            raise Denied(NO_WORKSPACE)
        if not os.path.isabs(path):
            raise Denied(f"{what} must be absolute: {path}")
        resolved = Path(os.path.realpath(path))
        if not self.contains(resolved):
            shown = ", ".join(str(r) for r in self.roots)
            if secret := self._secret(resolved):
                raise Denied(f"{path} looks like a secret ({secret})")
            raise Denied(f"{path} is outside the workspace ({shown})", outside=resolved)
        if secret := self._secret(resolved):
            raise Denied(f"{path} looks like a secret ({secret}); goose-ls does not hand those out")
        return resolved

    def judge(self, paths: Iterable[str], outside: str) -> Verdict:
        """The absolute ``paths`` of a call the agent makes itself, judged as its ``fs/*``
        requests are: secrets refused (hard links too), paths outside the roots refused,
        or asked about with ``outside`` "ask". Blocking (it resolves, and may search for
        a file's other names): run it in a thread."""
        beyond: list[str] = []
        for path in paths:
            try:
                try:
                    resolved = self.check(path)
                except Denied as exc:
                    if exc.outside is None or outside != "ask":
                        raise
                    resolved = exc.outside
                    beyond.append(str(resolved))
                self._check_named(resolved)
            except (Denied, BadPath) as exc:
                return Verdict(refused=str(exc))
        return Verdict(outside=tuple(beyond))

    def secret(self, path: str) -> str | None:
        """The secrets pattern ``path`` matches by its name alone (not resolved: it may
        name a file on the agent's side, which goose-ls cannot resolve)."""
        return self._secret(Path(path))

    def _check_named(self, path: Path) -> None:
        """A regular file with several names is refused when one of them is a secret."""
        try:
            stat = os.stat(path)
        except OSError:
            return  # none yet: a file to be written has no other name
        if stats.S_ISREG(stat.st_mode):
            self.check_links(path, stat)

    def secret_named(self, path: Path) -> str | None:
        """The secrets pattern ``path`` matches by its last parts, for a walk from a
        resolved folder (its folders were looked at before it, links never taken)."""
        return self._by_name.match(path.parts)

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

    def check_links(self, path: Path, stat: os.stat_result, outside_ok: bool = True) -> None:
        """A file with more than one name is a secret when one of its names is; unless
        ``outside_ok``, it is refused too when a name is outside the roots (a link made
        in the workspace to read a file from elsewhere).

        Its other names are looked for by inode in the roots and the home folder (three
        levels deep), up to :data:`LINK_SEARCH_LIMIT` entries each; a file whose names
        cannot all be looked at is refused, as a secret could be among them.
        """
        if stat.st_nlink < 2:
            return
        inside = 0
        for root in self.roots:
            names, complete = _names_of(root, None, stat)
            self._no_secret_among(path, names)
            if not complete:
                raise Denied(
                    f"{path} has {stat.st_nlink} names and {root} is too big to look at "
                    "them all; a secret could be one of them"
                )
            inside += len(names)
        if inside >= stat.st_nlink:
            return
        if not outside_ok:
            raise Denied(
                f"{path} has {stat.st_nlink} hard links and {stat.st_nlink - inside} of them "
                "are outside the workspace roots: goose-ls does not read a file from "
                "elsewhere through a link (workspace.allowHardLinks allows it)"
            )
        home = _home()
        if home is not None:
            self._no_secret_among(path, _names_of(home, HOME_DEPTH, stat)[0])

    def _no_secret_among(self, path: Path, names: list[Path]) -> None:
        for name in names:
            if pattern := self._secret(name):
                raise Denied(f"{path} is a hard link to a secret ({pattern})")
