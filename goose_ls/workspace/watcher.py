"""The workspace roots watched for changes on disk (``watchfiles``: inotify on Linux).

Whoever writes a file, the agent's own tools, a command it ran or goose-ls, the change
is reported here in batches: a batch comes once nothing changed for ``STEP_MS``, or
every ``DEBOUNCE_MS`` while changes keep coming. Folders of built or downloaded files
(``.git``, ``node_modules``...) are not reported.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import watchfiles

log = logging.getLogger(__name__)

STEP_MS = 50
DEBOUNCE_MS = 400


async def changes(roots: Sequence[Path], stop: asyncio.Event) -> AsyncIterator[set[Path]]:
    """The paths that changed, batch by batch, until ``stop`` is set."""
    existing = [root for root in roots if root.is_dir()]
    if not existing:
        return
    try:
        async for batch in watchfiles.awatch(
            *existing,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            ignore_permission_denied=True,
        ):
            yield {Path(path) for _, path in batch}
    except (OSError, RuntimeError) as exc:  # inotify limits, a root gone
        log.warning("cannot watch %s: %s", ", ".join(map(str, existing)), exc)
