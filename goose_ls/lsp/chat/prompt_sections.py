"""The prompt section of a transcript, where the user writes: read and rewritten.

The editor's copy is read when the transcript is open (goose-ls follows it: only the
section is kept, not the whole text), else the file's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.positions import Position
from goose_ls.lsp.transcript.session_transcript import Transcript
from goose_ls.lsp.transcript.text import draft_of, prompt_section, split_prompt

ApplyEdit = Callable[[str, Position, Position, str], Awaitable[bool]]


def chips_in(section: str) -> int:
    """How many context lines a prompt section shows."""
    return sum(1 for line in section.split("\n")[2:] if line.startswith("> 📎"))


class PromptSections:
    def __init__(self, editor: EditorConnection, apply_edit: ApplyEdit) -> None:
        self._editor = editor
        self._apply_edit = apply_edit

    def document_text(self, transcript: Transcript) -> str:
        if (text := self._editor.buffer_text(transcript.uri)) is not None:
            return text
        try:
            return transcript.path.read_text(encoding="utf-8")
        except OSError:
            return ""

    def section(self, transcript: Transcript) -> str | None:
        """The prompt section as the editor (else the file) has it; None if it has none."""
        if (kept := transcript.document) is not None:
            return self._unsent(transcript, kept.prompt)
        parts = split_prompt(self.document_text(transcript), legacy=True)
        return parts[1] if parts else None

    @staticmethod
    def _unsent(transcript: Transcript, section: str | None) -> str | None:
        """The section without the draft just sent, while the editor still shows it."""
        sent = transcript.sent_draft
        if sent is None or section is None:
            return section
        if not draft_of(section).startswith(sent):
            transcript.sent_draft = None  # the editor has cleared it
            return section
        at = section.find(sent)
        return section[:at] + section[at + len(sent) :]

    def draft(self, transcript: Transcript) -> str:
        section = self.section(transcript)
        return draft_of(section) if section is not None else ""

    def line(self, transcript: Transcript, line: int) -> str | None:
        """The text of ``line`` when it is below the sentinel in the editor's copy."""
        kept = transcript.document
        sentinel = kept.sentinel_line if kept is not None else None
        if kept is None or sentinel is None or kept.prompt is None:
            return None
        lines = kept.prompt.split("\n")
        return lines[line - sentinel] if sentinel < line < sentinel + len(lines) else None

    async def rewrite(self, transcript: Transcript, keep_draft: bool) -> None:
        """Show the current context lines, and keep or clear the draft under them."""
        # Under the streamer's lock the editor holds exactly ``text.shown`` above the
        # sentinel, so the section's lines are known even while a reply streams.
        async with transcript.streamer.lock:
            await self._rewrite(transcript, keep_draft)

    async def start_with(self, transcript: Transcript, draft: str) -> None:
        """Put ``draft`` in the prompt section for the user to edit and send (a new chat
        that goes on from another: the summary of its turns)."""
        async with transcript.streamer.lock:
            await self._rewrite(transcript, keep_draft=False, new_draft=draft)

    async def _rewrite(self, transcript: Transcript, keep_draft: bool, new_draft: str = "") -> None:
        lines = transcript.context_lines
        kept = transcript.document
        if transcript.streamer.uses_editor() and kept is not None:
            start = Position(transcript.text.sentinel_line + 1, 0)  # under the heading
            if keep_draft:
                end = Position(start.line + transcript.chips_shown, 0)
                new_text = "".join(f"{line}\n" for line in lines)
            else:
                section, units = kept.prompt, transcript.text.units
                end = kept.end
                if section is not None:  # counted from where goose-ls has put the sentinel
                    last_line = section[section.rfind("\n") + 1 :]
                    end = Position(
                        transcript.text.sentinel_line + section.count("\n"), units(last_line)
                    )
                new_text = "".join(f"{line}\n" for line in lines) + "\n" + new_draft
            sent = None if keep_draft or new_draft else draft_of(kept.prompt or "")
            if await self._apply_edit(transcript.uri, start, end, new_text):
                transcript.chips_shown = len(lines)
                if sent is not None:  # the file may hold the draft just sent, if it was saved
                    transcript.sent_draft = sent or None
                    transcript.streamer.save_section(prompt_section(lines))
                return
        draft = self.draft(transcript) if keep_draft else new_draft
        try:
            transcript.streamer.file.write(prompt_section(lines, draft), durable=True)
        except OSError as exc:
            self._editor.cannot_write(transcript.path, exc)
            return
        transcript.chips_shown = len(lines)
