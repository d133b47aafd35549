"""Images for tests: real PNGs made on the spot, and an agent's image steps for the
scripted agent in the shapes goose sends them (a message's image, a tool's result)."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any


def png(width: int = 2, height: int = 1, red: int = 255) -> bytes:
    """A real PNG, ``width`` by ``height`` pixels of one colour."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + bytes([red, 0, 0]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(64)
SHOT = png()
DRAWING = png(3, 2, red=12)


def image_update(data: str, mime_type: str = "image/png") -> dict[str, Any]:
    """An agent's image as goose sends one in a message."""
    content = {"type": "image", "mimeType": mime_type, "data": data}
    return {"update": {"sessionUpdate": "agent_message_chunk", "content": content}}


def tool_image(call_id: str, data: str, mime_type: str = "image/png") -> dict[str, Any]:
    """goose's tool call whose result is an image (an MCP tool's screenshot), re-sent
    with each update as goose does."""
    image = {"type": "image", "mimeType": mime_type, "data": data}
    update = {"toolCallId": call_id, "status": "completed"}
    return {"toolUpdate": {**update, "content": [{"type": "content", "content": image}]}}
