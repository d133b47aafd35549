"""Asking the user the agent's questions (elicitations) without a plugin.

A form of one choice (a single-select or a yes/no property) is asked with
``window/showMessageRequest``: its choices, and Decline (its card drawn and shown first).
Any other form waits on its card in the chat, where code actions decline or cancel it (a
plugin fills it in through ``goose/elicitation``). A page to open (URL mode) is asked
about first, its origin shown (a popup, else the card's code action); opened outside the
editor with ``window/showDocument`` only on the user's yes, accepted once shown. The
sessions layer refused what may never be opened (:mod:`goose_ls.workspace.pages`).
Nothing here makes up a value the user did not pick.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from goose_ls import events
from goose_ls.inert import inert_line
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.sessions import QuestionAnswers, choices
from goose_ls.tasks import Tasks
from goose_ls.workspace.pages import origin

DECLINE = "Decline"


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
    labels: dict[str, Any] = {}
    for value in values:
        label = inert_line(str(titles.get(value) or value))
        if label in labels or label == DECLINE:  # two buttons reading alike: say which is which
            label = f"{label} ({inert_line(value)})"
        if label in labels:
            return None  # still alike: the card, field by field, not a popup
        labels[label] = value
    return name, labels


class ElicitationPrompts:
    def __init__(
        self,
        editor: EditorConnection,
        questions: QuestionAnswers,
        transcripts: Transcripts,
        tasks: Tasks,
    ) -> None:
        self._editor = editor
        self._questions = questions
        self._transcripts = transcripts
        self._tasks = tasks

    def ask(self, session_id: str, request: events.ElicitationRequested) -> None:
        url = request.mode == "url"
        work = self._page(session_id, request) if url else self._form(session_id, request)
        self._tasks.run(work, "elicitation prompt")

    async def _form(self, session_id: str, request: events.ElicitationRequested) -> None:
        agent = self._transcripts.agent_of(session_id)
        message = f"{agent} asks: {inert_line(request.message)}"
        await self._transcripts.drawn(session_id)  # the card first: then the news of it
        choice = single_choice(request.requested_schema or {})
        if choice is None or not self._editor.has_popups():
            self._editor.show(
                types.MessageType.Info, f"{message} (its card in the chat can decline or cancel it)"
            )
            return
        name, values = choice
        labels = [*values, DECLINE]  # no choice reads "Decline" (single_choice)
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

    async def _page(self, session_id: str, request: events.ElicitationRequested) -> None:
        """Open the page only once the user said yes to its origin."""
        url = request.url or ""
        await self._transcripts.drawn(session_id)
        message = page_question(request, self._transcripts.agent_of(session_id))
        if not self._editor.has_popups():
            self._editor.show(types.MessageType.Info, f"{message} (answer on its card in the chat)")
            return
        await self._transcripts.show_end(session_id)
        if not self._questions.waiting(request.request_id):
            return
        open_it = f"Open {origin(url)}"
        chosen = await self._editor.ask(types.MessageType.Info, message, [DECLINE, open_it])
        if chosen is None or not self._questions.waiting(request.request_id):
            return  # dismissed, or answered elsewhere: the card stays the way
        if chosen == open_it:
            await open_page(self._editor, self._questions, request.request_id, url)
        else:
            self._questions.answer(request.request_id, "decline")


async def open_page(
    editor: EditorConnection, questions: QuestionAnswers, request_id: str, url: str
) -> None:
    """The user said yes: open the page, and tell the agent whether it was."""
    shown = await editor.open_external(url)
    if questions.waiting(request_id):
        questions.answer(request_id, "accept" if shown else "decline")


def page_question(request: events.ElicitationRequested, agent: str) -> str:
    """What the user is asked before a page opens: the agent's reason, the origin, the
    whole address."""
    url = request.url or ""
    return (
        f"{agent} asks you to open a page on {origin(url)}: {inert_line(request.message)} "
        f"({inert_line(url)})"
    )
