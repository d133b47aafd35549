"""The transcript's file, written in place from where it changed."""

from __future__ import annotations

from pathlib import Path

from goose_ls.lsp.transcript.file import TranscriptFile
from goose_ls.lsp.transcript.text import (
    LEGACY_SENTINEL,
    SENTINEL,
    TranscriptText,
    draft_of,
    prompt_section,
)

HEAD = "# goose chat · s1\n\n"


def _expected(text: TranscriptText, section: str) -> str:
    return f"{HEAD}{text.body}\n{section}"


def test_appends_and_a_rewritten_last_block_are_written_in_place(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    text = TranscriptText(HEAD)
    file = TranscriptFile(path, text)
    section = prompt_section([], "my draft ✓")
    text.append("## You\n\nWhy 🦆?\n\n")
    file.write(section)
    inode = path.stat().st_ino
    text.append("## goose\n\nBecause 你好.\n")
    block = text.length
    text.append("**🔧 run** — ⏳ pending\n")
    file.write(section)
    assert path.read_text(encoding="utf-8") == _expected(text, section)
    text.rewrite_from(block, "**🔧 run** — ✓ completed\n")  # shorter in bytes than before
    file.write(prompt_section([], "a longer draft ✓✓✓"), durable=True)
    assert path.read_text(encoding="utf-8") == _expected(
        text, prompt_section([], "a longer draft ✓✓✓")
    )
    assert path.stat().st_ino == inode, "written in place, not replaced"
    assert file.section() == prompt_section([], "a longer draft ✓✓✓")


def test_a_file_someone_else_changed_is_written_whole_again(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    text = TranscriptText(HEAD)
    file = TranscriptFile(path, text)
    text.append("first answer\n")
    file.write(prompt_section([]))
    edited = path.read_text(encoding="utf-8").replace("first", "FIRST") + "typed on disk"
    path.write_text(edited, encoding="utf-8")
    assert file.section() == prompt_section([], "typed on disk")
    text.append("second answer\n")
    file.write(prompt_section([], "typed on disk"))
    assert path.read_text(encoding="utf-8") == _expected(text, prompt_section([], "typed on disk"))
    path.unlink()
    file.write(prompt_section([]))
    assert path.read_text(encoding="utf-8") == _expected(text, prompt_section([]))


def test_a_draft_under_an_earlier_version_s_marker_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    path.write_text(
        f"{HEAD}## goose\n\nHi.\n\n{LEGACY_SENTINEL}\n> 📎 `app.py:1-2`\n\nmy old draft\n",
        encoding="utf-8",
    )
    file = TranscriptFile(path, TranscriptText(HEAD))
    section = file.section()
    assert section is not None and section.startswith(f"{SENTINEL}\n")
    assert draft_of(section) == "my old draft"
    file.write(section)
    assert path.read_text(encoding="utf-8").count("<!--") == 0, "rewritten with today's heading"
