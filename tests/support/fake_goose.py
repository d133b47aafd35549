"""A fake ``goose`` binary that runs the scripted agent, for discovery, version-check and
shared-server tests."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from goose_ls.scripted import scripted_agent_command


def write_fake_goose(directory: Path, version_output: str, script_path: Path | str) -> Path:
    """Write an executable named ``goose`` that prints ``version_output`` for ``--version``
    and runs the scripted agent for ``goose acp`` (and serves it for ``goose serve --host
    H --port P``), so discovery, the version check and a shared server can be tested as
    they run for real."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / "goose"
    command = " ".join(f"'{part}'" for part in scripted_agent_command(script_path))
    binary.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ] || [ "$1" = "-V" ]; then\n'
        f"  printf '%s\\n' {json.dumps(version_output)}\n"
        "  exit 0\n"
        "fi\n"
        f'exec {command} "$@"\n',
        encoding="utf-8",
    )
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return binary
