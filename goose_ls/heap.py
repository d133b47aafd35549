"""Memory a long reply used, given back to the system once it is over.

A reply streamed at full speed makes many short-lived objects at once; Python frees them,
but the C allocator keeps the emptied pages for the process. Measured: a 90,000-chunk
reply left goose-ls at 80 MB, 11 MB (16 %) above the same session after 10,000 chunks;
with the pages given back at the turn's end, 74 MB (8 %). Only glibc can be
asked (``malloc_trim``); elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def _trimmer() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _trimmer()


def give_back() -> None:
    """Return the allocator's free pages to the system (a few ms; after a turn)."""
    if _TRIM is not None:
        _TRIM(0)
