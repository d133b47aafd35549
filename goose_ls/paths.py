"""Where goose-ls keeps its files (platformdirs' per-user dirs unless the user says)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP = "goose-ls"


def log_dir() -> Path:
    return Path(os.environ.get("GOOSE_LS_LOG_DIR") or platformdirs.user_log_dir(APP))


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def data_dir(setting: str = "") -> Path:
    return Path(os.path.expanduser(setting)) if setting else Path(platformdirs.user_data_dir(APP))


def runtime_dir() -> Path | None:
    """The per-user runtime dir (``$XDG_RUNTIME_DIR/goose-ls`` on Linux), or None where
    there is none: a guessed one under ``/tmp`` could be another user's."""
    if sys.platform.startswith("linux") and not os.environ.get("XDG_RUNTIME_DIR"):
        return None
    return Path(platformdirs.user_runtime_dir(APP))


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP))


def own_folders(data_setting: str) -> list[Path]:
    """Every folder goose-ls keeps its own files in: chats, audit, logs, settings, the
    shared servers' secrets. The agent's sandbox hides them."""
    runtime = runtime_dir()
    found = [data_dir(data_setting), config_dir(), log_dir(), cache_dir()]
    found += [runtime] if runtime is not None else []
    return [Path(os.path.abspath(folder)) for folder in dict.fromkeys(found)]
