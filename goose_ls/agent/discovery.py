"""Find the agent binary and check its version before anything is spawned.

Order: the ``agent.binaryPath`` setting, then ``PATH``, then the places goose's installers
use on each platform. A missing binary and an outdated one are different problems with
different fixes, so they are reported as different reasons.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from goose_ls.agent.presets import MINIMUM_GOOSE_VERSION, PRESETS
from goose_ls.errors import AgentUnavailable
from goose_ls.settings import AgentSettings
from goose_ls.tasks import within

VERSION_TIMEOUT = 5.0

_VERSION = re.compile(r"(?<![\d.])v?(\d+)\.(\d+)(?:\.(\d+))?")

_PLATFORM_PATHS = {
    "darwin": [
        "/Applications/Goose.app/Contents/MacOS/goose",
        "~/.local/bin/goose",
        "/usr/local/bin/goose",
        "/opt/homebrew/bin/goose",
    ],
    "linux": [
        "~/.local/bin/goose",
        "/usr/local/bin/goose",
        "/usr/bin/goose",
        "/usr/share/goose/bin/goose",
    ],
    "win32": [r"%LOCALAPPDATA%\Goose\goose.exe", r"%PROGRAMFILES%\Goose\goose.exe"],
}


@attrs.frozen
class Launch:
    """A resolved command line, ready to spawn."""

    argv: list[str]
    binary: str
    version: str | None = None


def is_goose(binary: str) -> bool:
    return Path(binary).name.lower() in ("goose", "goose.exe")


def expand(path: str, environ: Mapping[str, str]) -> str:
    """Expand ``~``, ``%VAR%`` and ``$VAR`` from ``environ``, the way installers write paths."""
    path = re.sub(r"%([^%]+)%", lambda m: environ.get(m.group(1), m.group(0)), path)
    path = re.sub(r"\$(\w+)", lambda m: environ.get(m.group(1), m.group(0)), path)
    home = environ.get("HOME") or environ.get("USERPROFILE")
    if path.startswith("~") and home:
        return home + path[1:]
    return os.path.expanduser(path)


def platform_candidates(environ: Mapping[str, str], platform: str = sys.platform) -> list[str]:
    key = "linux" if platform.startswith("linux") else platform
    return [expand(p, environ) for p in _PLATFORM_PATHS.get(key, _PLATFORM_PATHS["linux"])]


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_binary(
    name: str, explicit: str, environ: Mapping[str, str]
) -> tuple[str | None, list[str]]:
    """Return the binary's path (or None) and every place that was looked at."""
    searched: list[str] = []
    if explicit:
        path = expand(explicit, environ)
        searched.append(path)
        return (path if _executable(path) else None), searched
    if os.sep in name or (os.altsep and os.altsep in name):
        path = expand(name, environ)
        searched.append(path)
        return (path if _executable(path) else None), searched
    searched.append(f"PATH ({name})")
    found = shutil.which(name, path=environ.get("PATH"))
    if found:
        return found, searched
    if name in ("goose", "goose.exe"):
        for candidate in platform_candidates(environ):
            searched.append(candidate)
            if _executable(candidate):
                return candidate, searched
    return None, searched


def parse_version(text: str) -> tuple[int, int, int] | None:
    """Read ``1.43.0`` out of `` 1.43.0``, ``goose version 1.16.0``, ``Goose 1.16.0-beta``..."""
    match = _VERSION.search(text.strip())
    if not match:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def format_version(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


async def read_version(binary: str, environ: Mapping[str, str]) -> str:
    """Run ``<binary> --version`` and return what it printed (stdout, else stderr)."""
    process = await asyncio.create_subprocess_exec(
        binary,
        "--version",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(environ),
    )
    try:
        out, err = await within(VERSION_TIMEOUT, process.communicate())
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise
    return (out or err).decode("utf-8", "replace")


async def resolve(settings: AgentSettings, environ: Mapping[str, str]) -> Launch:
    """Turn the settings into a checked :class:`Launch`, or raise :class:`AgentUnavailable`."""
    preset = PRESETS[settings.preset]
    name, *rest = settings.command or preset.command
    binary, searched = find_binary(name, settings.binary_path, environ)
    if binary is None:
        hint = preset.install if name == preset.command[0] else f"Install {name}."
        raise AgentUnavailable(
            "missing",
            f"{name} was not found (looked in: {', '.join(searched)})",
            f"{hint} Or set agent.binaryPath to its full path.",
        )
    argv = [binary, *rest, *settings.args]
    if not (settings.check_version and is_goose(binary)):
        return Launch(argv=argv, binary=binary)
    try:
        printed = await read_version(binary, environ)
    except (OSError, asyncio.TimeoutError) as exc:
        raise AgentUnavailable(
            "unusable",
            f"{binary} --version failed: {exc or 'no answer within 5 s'}",
            "Check that the binary runs from a terminal, or set agent.checkVersion to false.",
        ) from exc
    version = parse_version(printed)
    minimum = format_version(MINIMUM_GOOSE_VERSION)
    if version is None:
        raise AgentUnavailable(
            "unusable",
            f"could not read a version from `{binary} --version` (it printed {printed.strip()!r})",
            "Check the binary is goose, or set agent.checkVersion to false.",
        )
    if version < MINIMUM_GOOSE_VERSION:
        raise AgentUnavailable(
            "outdated",
            f"goose {format_version(version)} at {binary} is older than the minimum {minimum}",
            f"Update goose to {minimum} or newer (run `goose update`).",
        )
    return Launch(argv=argv, binary=binary, version=format_version(version))
