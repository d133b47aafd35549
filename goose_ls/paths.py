"""Where goose-ls keeps its files (platformdirs' per-user dirs unless the user says)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "goose-ls"


def log_dir() -> Path:
    return Path(os.environ.get("GOOSE_LS_LOG_DIR") or platformdirs.user_log_dir(APP))


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def data_dir(setting: str = "") -> Path:
    return Path(os.path.expanduser(setting)) if setting else Path(platformdirs.user_data_dir(APP))
