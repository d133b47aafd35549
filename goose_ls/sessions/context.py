"""Prompt context: what the user attaches to a question, turned into ACP content blocks.

Plain text goes as text. A whole file goes as a ``resource_link`` (the agent reads it).
An image goes as an ``image`` block of the bytes goose-ls read and checked
(:mod:`goose_ls.sessions.images`).
A selection goes as an embedded ``resource`` when the agent advertises
``embeddedContext``, otherwise as a fenced text block headed ``path:start-end``, the path
as the agent names it (``agent.pathMap``; the URIs are mapped on their way out).
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, Literal

import attrs

from goose_ls.events import Json


@attrs.frozen
class ContextItem:
    """One piece of context. ``type`` says which fields matter:

    ``text``: ``text``. ``file``: ``uri``. ``selection``: ``uri``, ``text``, ``start_line``
    and ``end_line`` (1-based, inclusive). ``image``: ``uri`` (a file goose-ls reads and
    checks when the prompt is accepted, or a ``data:`` URI of an image the user pasted).
    """

    type: Literal["text", "file", "selection", "image"]
    text: str | None = None
    uri: str | None = None
    start_line: int | None = None
    end_line: int | None = None

    def problem(self) -> str | None:
        """What is missing for this item's type, or None when it is complete."""
        if self.type == "text" and self.text is None:
            return "a text item needs 'text'"
        if self.type in ("file", "selection", "image") and not self.uri:
            return f"{'an' if self.type == 'image' else 'a'} {self.type} item needs 'uri'"
        if self.type == "selection" and (self.start_line is None or self.end_line is None):
            return "a selection item needs 'startLine' and 'endLine'"
        if self.type == "selection" and (self.start_line or 0) < 1:
            return "a selection's startLine is 1-based (1 or more)"
        if self.type == "selection" and (self.start_line or 0) > (self.end_line or 0):
            return "a selection's startLine is after its endLine"
        return None


def path_of(uri: str) -> str:
    """The path part of a ``file://`` URI (other schemes are returned unchanged)."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _mime(path: str) -> str | None:
    """A text MIME type when the extension says so (the registry's other guesses mislead:
    ``.rs`` is not ``application/rls-services+xml`` in an editor)."""
    guess = mimetypes.guess_type(path)[0]
    return guess if guess and guess.startswith("text/") else None


def _fence_language(path: str) -> str:
    return PurePath(path).suffix.lstrip(".")


@attrs.frozen
class PromptImage:
    """An image item's file as goose-ls read and checked it for the prompt."""

    mime_type: str
    """The type its bytes are (never the name's guess)."""
    data: bytes = attrs.field(repr=False)


def to_blocks(
    prompt: str,
    context: list[ContextItem],
    embedded_context: bool,
    agent_path: Callable[[str], str] = str,
    images: Mapping[str, PromptImage] | None = None,
) -> list[Json]:
    """The ``session/prompt`` content for a question and its context, in that order;
    ``agent_path`` names a local path as the agent sees it, in the text written here;
    ``images`` holds each image item's bytes, by its URI."""
    blocks: list[Json] = []
    if prompt:
        blocks.append({"type": "text", "text": prompt})
    for item in context:
        if item.type == "image":
            image = (images or {})[str(item.uri)]
            data = base64.b64encode(image.data).decode("ascii")
            blocks.append({"type": "image", "mimeType": image.mime_type, "data": data})
        else:
            blocks.append(_block(item, embedded_context, agent_path))
    return blocks


def _block(
    item: ContextItem, embedded_context: bool, agent_path: Callable[[str], str]
) -> dict[str, Any]:
    if item.type == "text":
        return {"type": "text", "text": item.text or ""}
    assert item.uri is not None
    path = path_of(item.uri)
    if item.type == "file":
        link: dict[str, Any] = {
            "type": "resource_link",
            "uri": item.uri,
            "name": PurePath(path).name,
        }
        if mime := _mime(path):
            link["mimeType"] = mime
        return link
    text = item.text or ""
    heading = f"{agent_path(path)}:{item.start_line}-{item.end_line}"
    if embedded_context:
        resource: dict[str, Any] = {
            "uri": f"{item.uri}#L{item.start_line}-L{item.end_line}",
            "text": text,
        }
        if mime := _mime(path):
            resource["mimeType"] = mime
        return {"type": "resource", "resource": resource}
    fence = "````" if "```" in text else "```"
    body = text if text.endswith("\n") or not text else text + "\n"
    return {"type": "text", "text": f"{heading}\n{fence}{_fence_language(path)}\n{body}{fence}"}
