"""Images in a chat: those the user's prompt attaches, and those the agent sends.

An image the user attaches (an ``@`` mention of an image file, a plugin's ``image``
context item) is read as any read of the user's prompt is (:meth:`AgentTools.read_for_user`:
the workspace roots, secrets and goose-ls's own files refused, no link followed), at most
``images.maxBytes``, then judged by its bytes: a PNG, JPEG, GIF or WebP, and the kind its
name says (a ``.png`` that is no PNG is refused). It goes to the agent as an ACP ``image``
block, and only to an agent that advertises ``promptCapabilities.image``: to any other,
nothing is sent and the user is told, the draft kept.

An image the agent sends (a message chunk, tool call content) is judged by its bytes alone:
its declared ``mimeType`` is the agent's word, and a hostile agent chooses it. Base64 longer
than ``images.maxBytes`` allows is never decoded. A kept image is written once, named by its
SHA-256 and the kind its bytes are, beside the chat's transcript
(``<dataDir>/outputs/<session>/<sha256>.<ext>``: the folder deleted and pruned with the
chat), read-write for the user alone, through its folder opened without following a link;
the event then carries a link to it instead of the bytes, so the journal, the transcript
and ``goose/update`` hold a few dozen bytes per image, and a chat opened again shows it
from the journal. The user's own images are kept the same way (what was sent, not what the
file holds later). A fork's history links copies in the fork's own folder, so deleting
the chat it came from breaks none. An image that is not kept says why (``refused``).

An image the user pastes in a plugin comes as a ``data:`` URI (``data:image/png;base64,...``):
its bytes are the user's own, from the clipboard, so there is no file to confine; they are
judged as the agent's are (the cap, then the bytes), and the type the URI says must be the
type they are.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePath
from typing import Any, TypeVar

import attrs

from goose_ls import events
from goose_ls.atomic_files import WriteFailed, replace_at
from goose_ls.errors import Refused
from goose_ls.inert import inert_line
from goose_ls.sessions.context import ContextItem, PromptImage, path_of
from goose_ls.sessions.session import Turn
from goose_ls.workspace.agent_files import FileProblem
from goose_ls.workspace.confinement import Denied
from goose_ls.workspace.opening import open_folder

Json = dict[str, Any]
E = TypeVar("E", bound=events.SessionEvent)

KEPT_IMAGE = re.compile(r"[0-9a-f]{64}\.(?:png|jpg|gif|webp)")
"""The name of an image goose-ls kept (to be matched whole): its SHA-256, then its kind's
suffix."""


@attrs.frozen
class Kind:
    """An image format goose-ls knows by its first bytes."""

    mime_type: str
    suffix: str
    name: str


PNG = Kind("image/png", "png", "PNG")
JPEG = Kind("image/jpeg", "jpg", "JPEG")
GIF = Kind("image/gif", "gif", "GIF")
WEBP = Kind("image/webp", "webp", "WebP")
BY_SUFFIX = {".png": PNG, ".jpg": JPEG, ".jpeg": JPEG, ".gif": GIF, ".webp": WEBP}
"""The file names taken for images: an ``@`` mention of one sends an image."""
KNOWN = "a PNG, JPEG, GIF or WebP image"
FILE_MODE = 0o600
NOT_OPEN = "it came for a chat that is not open here"
"""Saved images: the user's to read and write, never anyone's to run."""


def kind_of(data: bytes) -> Kind | None:
    """The format ``data`` is, by its magic bytes; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    return None


MAX_PIXELS = 8000 * 8000
"""The most pixels an image may have, whatever its bytes: a viewer (VS Code's chat, a
markdown preview) decodes it whole, four bytes a pixel, so a few kilobytes of PNG saying
100,000 by 100,000 pixels would take it 40 GB. 8000 a side is the most the models take
(Claude refuses a bigger image); a 4K screenshot is 8 million."""


def pixels(data: bytes, kind: Kind) -> tuple[int, int] | None:
    """The width and height ``data`` (of ``kind``) says it has, from its header; None
    when its header does not say."""
    try:
        if kind is PNG and data[12:16] == b"IHDR":
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if kind is GIF and len(data) >= 10:
            return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
        if kind is WEBP:
            return _webp_pixels(data)
        if kind is JPEG:
            return _jpeg_pixels(data)
    except IndexError:
        return None
    return None


def _webp_pixels(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        return width, int.from_bytes(data[28:30], "little") & 0x3FFF
    return None


def _jpeg_pixels(data: bytes) -> tuple[int, int] | None:
    """From the first start-of-frame segment (SOF0 to SOF15, less DHT, JPG and DAC)."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # no length
            at += 2
            continue
        if marker in (0xD9, 0xDA):  # the end, or the scan before any frame
            return None
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None


def too_many_pixels(data: bytes, kind: Kind) -> str | None:
    """Why an image of ``kind`` is refused for its size in pixels, if it is."""
    size = pixels(data, kind)
    if size is None:
        return f"its {kind.name} header does not say its size in pixels"
    width, height = size
    if width * height > MAX_PIXELS:
        return f"it is {width:,} by {height:,} pixels, over {MAX_PIXELS:,} pixels"
    return None


def named_image(path: str) -> bool:
    """Whether a file name is an image's (its suffix, case aside)."""
    return PurePath(path).suffix.lower() in BY_SUFFIX


def safe_name(session_id: str) -> str:
    """A session id as a file name: anything but letters, digits, ``.`` and ``-`` as ``_``
    (the transcript's name, and its outputs folder's). The agent chooses the id: one of
    dots only (``..``) would name the data dir as the chat's outputs folder, so its images
    would land there and deleting the chat would delete every file goose-ls keeps."""
    name = re.sub(r"[^\w.-]", "_", session_id)
    return name if name.strip(".") else "_" * max(len(name), 1)


def base64_limit(cap: int) -> int:
    """The longest base64 text that can decode to at most ``cap`` bytes (with the line
    break every 76 characters some encoders add)."""
    encoded = 4 * ((cap + 2) // 3)
    return encoded + encoded // 76 * 2


def is_pasted(uri: str) -> bool:
    """Whether an image item's URI carries the image itself (one the user pasted)."""
    return uri[:5].lower() == "data:"


def _pasted(uri: str, cap: int) -> PromptImage:
    """A pasted image's bytes, checked as an agent's image is; :class:`Refused` saying why
    it cannot be sent."""
    head, comma, data = uri[5:].partition(",")
    said, _, encoding = head.partition(";")
    if not comma or encoding.lower() != "base64":
        raise Refused(
            "the pasted image cannot be attached: its data: URI is not data:<type>;base64,<data>"
        )
    checked = decoded({"data": data}, cap)
    if isinstance(checked, str):
        big = checked.startswith("it is over")
        raise Refused(
            f"the pasted image cannot be attached: {checked}",
            "Make it smaller, or raise images.maxBytes" if big else None,
        )
    raw, kind = checked
    if said.lower() != kind.mime_type:
        raise Refused(
            f"the pasted image cannot be attached: it says it is {inert_line(said[:40]) or 'no type'}"
            f" but its bytes are a {kind.name}'s"
        )
    return PromptImage(kind.mime_type, raw)


def decoded(content: Json, cap: int) -> tuple[bytes, Kind] | str:
    """The bytes of an agent's image block and their format, or why it is not kept."""
    data = content.get("data")
    if not isinstance(data, str) or not data:
        return "it carries no image data"
    if len(data) > base64_limit(cap):  # never decoded: it cannot fit
        return f"it is over {cap:,} bytes (images.maxBytes)"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        try:
            raw = base64.b64decode("".join(data.split()), validate=True)
        except (binascii.Error, ValueError):
            return "its data is not base64"
    if len(raw) > cap:
        return f"it is over {cap:,} bytes (images.maxBytes)"
    kind = kind_of(raw)
    if kind is None:
        return f"its bytes are not {KNOWN}, whatever its type says"
    if why := too_many_pixels(raw, kind):
        return why
    return raw, kind


class Images:
    """Keeps a chat's images beside its transcript, and reads those a prompt attaches."""

    def __init__(
        self,
        data_dir: Callable[[], Path],
        cap: Callable[[], int],
        write_failed: WriteFailed,
        read: Callable[[str, int], Awaitable[bytes]],
    ) -> None:
        """``data_dir``: goose-ls's data dir; ``cap``: ``images.maxBytes``; ``read``:
        reads a file the user's prompt attaches, as :meth:`AgentTools.read_for_user`."""
        self._data_dir = data_dir
        self._cap = cap
        self._write_failed = write_failed
        self._read = read
        self._written: set[tuple[str, str]] = set()
        """(session, file name) of the images written in this run: not looked at again."""

    def folder(self, session_id: str) -> Path:
        """Where a chat's images are kept (with its saved tool outputs)."""
        return self._root() / "outputs" / safe_name(session_id)

    def _root(self) -> Path:
        return Path(os.path.realpath(self._data_dir()))

    # --- the user's -----------------------------------------------------------------
    async def read(self, items: list[ContextItem]) -> dict[str, PromptImage]:
        """The bytes of each image item, by URI, read and checked; :class:`Refused`
        saying which and why for the first that cannot be sent."""
        found: dict[str, PromptImage] = {}
        cap = self._cap()
        for item in items:
            if item.type != "image" or item.uri is None or item.uri in found:
                continue
            if is_pasted(item.uri):
                found[item.uri] = _pasted(item.uri, cap)
                continue
            path = path_of(item.uri)
            shown = PurePath(path).name or item.uri
            if not item.uri.startswith("file:"):
                raise Refused(f"the image {item.uri} is not a file; only files are attached")
            try:
                data = await self._read(path, cap)
            except FileProblem as exc:
                if exc.too_big:
                    size = ""
                    with contextlib.suppress(OSError):
                        size = f" ({(await asyncio.to_thread(os.stat, path)).st_size:,} bytes)"
                    raise Refused(
                        f"the image {shown}{size} is over images.maxBytes, {cap:,} bytes",
                        "Make it smaller, or raise images.maxBytes",
                    ) from None
                raise Refused(f"the image {shown} cannot be attached: {exc}") from None
            except Denied as exc:
                raise Refused(f"the image {shown} cannot be attached: {exc}") from None
            kind = kind_of(data)
            named = BY_SUFFIX.get(PurePath(path).suffix.lower())
            if kind is None:
                what = f"a {named.name} image" if named else KNOWN
                raise Refused(f"{shown} is not {what}: its bytes are not those of {KNOWN}")
            if named is not None and kind != named:
                raise Refused(
                    f"{shown} is not a {named.name} image: its bytes are a {kind.name}'s",
                    f"Rename it to .{kind.suffix}",
                )
            if why := too_many_pixels(data, kind):
                raise Refused(f"the image {shown} cannot be attached: {why}; not sent")
            found[item.uri] = PromptImage(kind.mime_type, data)
        return found

    def sent(self, session_id: str, uri: str, image: PromptImage) -> Json:
        """The content a prompt's image is recorded as: a link to the copy kept of it,
        and the file it was read from (``source``)."""
        kind = kind_of(image.data)
        assert kind is not None  # checked when it was read
        kept = self._keep(session_id, image.data, kind)
        return kept if is_pasted(uri) else {**kept, "source": uri}

    def recorded(self, session_id: str, turn: Turn, blocks: list[Json]) -> list[Json]:
        """A prompt's blocks as the chat records them: an image as a link to the copy
        kept of it, not its bytes (its image items come in the order of their blocks)."""
        uris = iter([str(i.uri) for i in turn.context if i.type == "image"])
        shown: list[Json] = []
        for block in blocks:
            if block.get("type") == "image":
                uri = next(uris)
                block = self.sent(session_id, uri, turn.images[uri])
            shown.append(block)
        return shown

    # --- the agent's ----------------------------------------------------------------
    def event(self, session_id: str, event: E, open_: bool = True) -> E:
        """``event`` with each image the agent sent kept and linked (or refused). An image
        for a chat that is not ``open_`` here (an id the agent made up, or one whose
        ``session/new`` has not answered yet) is refused unread: nothing would ever delete
        its folder, and the agent could fill the disk with such."""
        if isinstance(event, events.CHUNKS) and event.content.get("type") == "image":
            return attrs.evolve(event, content=self.content(session_id, event.content, open_))
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)) and event.content:
            content = self.tool_content(session_id, event.content, open_)
            if content is not event.content:
                return attrs.evolve(event, content=content)
        return event

    def tool_content(self, session_id: str, content: list[Json], open_: bool = True) -> list[Json]:
        """A tool call's content with its images kept (the same list when it has none)."""
        if not any(_inner_image(item) for item in content):
            return content
        return [
            {**item, "content": self.content(session_id, item["content"], open_)}
            if _inner_image(item)
            else item
            for item in content
        ]

    def content(self, session_id: str, block: Json, open_: bool = True) -> Json:
        """An agent's image block as kept: a link to the file, or why it was refused."""
        if not open_:
            return {"type": "image", "refused": NOT_OPEN}
        checked = decoded(block, self._cap())
        if isinstance(checked, str):
            return {"type": "image", "refused": checked}
        return self._keep(session_id, *checked)

    # --- a fork's --------------------------------------------------------------------
    def forked(self, source_id: str, fork_id: str, event: E) -> E:
        """``event`` of ``source_id``'s history as its fork ``fork_id`` records it: each
        image it links copied into the fork's own folder, so the fork's history still
        shows it once the chat it came from is deleted or pruned (and that folder with it)."""
        if isinstance(event, events.CHUNKS) and event.content.get("type") == "image":
            return attrs.evolve(event, content=self._copied(source_id, fork_id, event.content))
        if not isinstance(event, (events.ToolCall, events.ToolCallUpdate)) or not event.content:
            return event
        if not any(_inner_image(item) for item in event.content):
            return event
        content = [
            {**item, "content": self._copied(source_id, fork_id, item["content"])}
            if _inner_image(item)
            else item
            for item in event.content
        ]
        return attrs.evolve(event, content=content)

    def _copied(self, source_id: str, fork_id: str, block: Json) -> Json:
        """An image block of ``source_id``'s linked to a copy in ``fork_id``'s folder (its
        ``source`` kept); a refused one as it was. The copy is of the bytes kept in the
        source chat's folder, read there without following a link, and only when they are
        still the bytes the block names (their SHA-256)."""
        uri, digest = block.get("uri"), block.get("sha256")
        if not isinstance(uri, str) or not isinstance(digest, str):
            return block
        name = PurePath(path_of(uri)).name
        if not KEPT_IMAGE.fullmatch(name) or not name.startswith(f"{digest}."):
            return {"type": "image", "refused": "its link is not to an image goose-ls kept"}
        try:
            data = _read(self._root(), self.folder(source_id), name, self._cap())
        except (OSError, Denied) as exc:
            why = f"it could not be copied from the chat this one was forked from ({exc})"
            return {"type": "image", "refused": why}
        kind = kind_of(data)
        if kind is None or hashlib.sha256(data).hexdigest() != digest:
            changed = "it changed in the chat this one was forked from; not copied"
            return {"type": "image", "refused": changed}
        return {**block, **self._keep(fork_id, data, kind)}

    def _keep(self, session_id: str, data: bytes, kind: Kind) -> Json:
        digest = hashlib.sha256(data).hexdigest()
        name = f"{digest}.{kind.suffix}"
        folder = self.folder(session_id)
        if (session_id, name) not in self._written:
            try:
                _write(self._root(), folder, name, data)
            except (OSError, Denied) as exc:
                self._write_failed(folder / name, OSError(str(exc)))
                return {"type": "image", "refused": f"it could not be saved ({exc})"}
            self._written.add((session_id, name))
        return {
            "type": "image",
            "mimeType": kind.mime_type,
            "uri": (folder / name).as_uri(),
            "sha256": digest,
            "size": len(data),
        }


def _inner_image(item: Any) -> bool:
    """Whether a tool call content item is an image (``{type: content, content: image}``)."""
    return (
        isinstance(item, dict)
        and item.get("type") == "content"
        and isinstance(item.get("content"), dict)
        and item["content"].get("type") == "image"
    )


def _read(root: Path, folder: Path, name: str, cap: int) -> bytes:
    """The bytes of the regular file ``name`` in ``folder`` (below ``root``), at most
    ``cap``: no link followed on the way, nor at the file itself."""
    fd = open_folder(root, folder)
    try:
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file, "rb") as kept:
        if not stat.S_ISREG(os.fstat(kept.fileno()).st_mode):
            raise OSError(f"{name} is not a file")
        data = kept.read(cap + 1)
    if len(data) > cap:
        raise OSError(f"it is over {cap:,} bytes (images.maxBytes)")
    return data


def _write(root: Path, folder: Path, name: str, data: bytes) -> None:
    """Write ``name`` in ``folder`` (below ``root``, made if need be) unless a file of
    that size is there already: no link followed on the way, nor at the file itself."""
    fd = open_folder(root, folder, create=True)
    try:
        try:
            there = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        if (
            there is not None
            and stat.S_ISREG(there.st_mode)
            and there.st_size == len(data)
            and not there.st_mode & 0o111
        ):
            return  # the same bytes: the name is their digest
        replace_at(fd, name, data, FILE_MODE)
    finally:
        os.close(fd)
