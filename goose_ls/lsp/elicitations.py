"""Asking the user the agent's questions (elicitations) without a plugin.

A form of one choice (a single-select or a yes/no property) is asked with
``window/showMessageRequest``: its choices, and Decline (its card drawn and shown first).
Any other form waits on its card in the chat, where code actions decline or cancel it (a
plugin fills it in through ``goose/elicitation``). A page to open (URL mode) is opened
outside the editor with ``window/showDocument``: accepted once shown, declined when the
editor would not, or when it is not a web page. Nothing here makes up a value the user
did not pick.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from lsprotocol import types

from goose_ls import events
from goose_ls.lsp.editor import Editor
from goose_ls.lsp.transcripts import Transcripts
from goose_ls.sessions import Elicitations, choices
from goose_ls.tasks import Tasks

DECLINE = "Decline"
WEB = ("http", "https")


def single_choice(schema: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A form of one single-select or boolean property: its name, and each choice's
    label with its value. None for any other form."""
    properties = schema.get("properties") or {}
    if len(properties) != 1:
        return None
    name, prop = next(iter(properties.items()))
    if not isinstance(prop, dict):
        return None
    if prop.get("type") == "boolean":
        return name, {"Yes": True, "No": False}
    values = choices(prop) if prop.get("type") == "string" else None
    if not values:
        return None
    titles = {str(o.get("const")): o.get("title") for o in prop.get("oneOf") or []}
    return name, {str(titles.get(value) or value): value for value in values}


class ElicitationPrompts:
    def __init__(
        self, editor: Editor, questions: Elicitations, transcripts: Transcripts, tasks: Tasks
    ) -> None:
        self._editor = editor
        self._questions = questions
        self._transcripts = transcripts
        self._tasks = tasks

    def ask(self, session_id: str, request: events.ElicitationRequested) -> None:
        url = request.mode == "url"
        work = self._page(request) if url else self._form(session_id, request)
        self._tasks.run(work, "elicitation prompt")

    async def _form(self, session_id: str, request: events.ElicitationRequested) -> None:
        message = f"goose asks: {request.message}"
        await self._transcripts.drawn(session_id)  # the card first: then the news of it
        choice = single_choice(request.requested_schema or {})
        if choice is None or not self._editor.has_popups():
            self._editor.show(
                types.MessageType.Info, f"{message} (its card in the chat can decline or cancel it)"
            )
            return
        name, values = choice
        labels = [*values, *([] if DECLINE in values else [DECLINE])]
        await self._transcripts.show_end(session_id)  # its card in view before the popup
        if not self._questions.waiting(request.request_id):
            return
        chosen = await self._editor.ask(types.MessageType.Info, message, labels)
        if chosen is None or not self._questions.waiting(request.request_id):
            return  # dismissed, or answered elsewhere meanwhile: the card stays the way
        if chosen in values:
            self._questions.answer(request.request_id, "accept", {name: values[chosen]})
        else:
            self._questions.answer(request.request_id, "decline")
        await self._transcripts.show_end(session_id, below_new_text=True)

    async def _page(self, request: events.ElicitationRequested) -> None:
        url = request.url or ""
        shown = urlsplit(url).scheme in WEB and await self._editor.open_external(url)
        if self._questions.waiting(request.request_id):
            self._questions.answer(request.request_id, "accept" if shown else "decline")
