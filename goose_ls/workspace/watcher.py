"""The folders of the editor's open files, watched for changes on disk (``watchfiles``:
inotify on Linux).

Whoever writes a file, the agent's own tools, a command it ran or goose-ls, the change
is reported here in batches: a batch comes once nothing changed for ``STEP_MS``, or
every ``DEBOUNCE_MS`` while changes keep coming.

Only the folders holding open files are watched, each without its subfolders: a
recursive watch of the workspace follows its symbolic links (one to ``/`` in a cloned
repository would have every turn walk the whole disk) and costs a watch per folder of a
big tree. What changed elsewhere is found by the turn's checkpoints instead. The folders
are looked at again every ``REVIEW_MS``, so a file opened meanwhile is watched too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import watchfiles

from goose_ls.tasks import within

log = logging.getLogger(__name__)

STEP_MS = 50
DEBOUNCE_MS = 400
REVIEW_MS = 1000


async def changes(
    folders: Callable[[], set[Path]], stop: asyncio.Event
) -> AsyncIterator[set[Path]]:
    """The paths that changed in ``folders()``, batch by batch, until ``stop`` is set; an
    empty batch when the folders to watch changed (or every ``REVIEW_MS``)."""
    while not stop.is_set():
        watched = {folder for folder in folders() if folder.is_dir()}
        if not watched:
            if not await _stopped(stop):
                yield set()
            continue
        try:
            async for batch in watchfiles.awatch(
                *sorted(watched),
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=stop,
                recursive=False,
                rust_timeout=REVIEW_MS,
                yield_on_timeout=True,
                ignore_permission_denied=True,
                watch_filter=None,
            ):
                yield {Path(path) for _, path in batch}
                if {f for f in folders() if f.is_dir()} != watched:
                    break  # a file was opened in another folder (or the last one closed)
        except (OSError, RuntimeError) as exc:  # inotify limits, a folder gone
            log.warning("cannot watch %s: %s", ", ".join(map(str, sorted(watched))), exc)
            await _stopped(stop)


async def _stopped(stop: asyncio.Event) -> bool:
    """Wait ``REVIEW_MS`` at most for ``stop``; whether it was set."""
    try:
        await within(REVIEW_MS / 1000, stop.wait())
    except asyncio.TimeoutError:
        return False
    return True
