"""Which open files differ from the disk, and how the note names them."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from goose_ls.sessions.unsaved import _differs, wording


def test_a_buffer_differs_from_its_file_by_content_not_by_a_byte_order_mark(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(codecs.BOM_UTF8 + "é = 1\n".encode())
    assert not _differs(path, "é = 1\n", 1000)
    assert _differs(path, "é = 2\n", 1000), "same size, other text"
    assert _differs(path, "é = 10\n", 1000)
    assert _differs(tmp_path / "new.py", "", 1000), "never saved"
    assert not _differs(path, "x", 5), "a file too big to compare is not named"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_opened_for_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert not _differs(fifo, "text", 1000), "and it did not block"


def test_the_note_names_the_mentioned_files_first_then_a_few_others() -> None:
    cwd = Path("/proj")
    others = [cwd / f"o{n}.py" for n in range(7)]
    assert wording([cwd / "a.py", Path("/elsewhere/b.py")], others, cwd) == (
        "a.py and /elsewhere/b.py have unsaved changes: the agent reads the files on disk, "
        "not your buffers; save them for it to see them. Also unsaved: o0.py, o1.py, o2.py, "
        "o3.py, o4.py and 2 more."
    )
    assert wording([], others[:2], cwd) == (
        "Open files with unsaved changes, which the agent reads as last saved: o0.py and o1.py."
    )
