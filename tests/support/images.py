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


def png_claiming(width: int, height: int) -> bytes:
    """A small PNG whose header says ``width`` by ``height`` pixels (a decompression
    bomb's header: a viewer sets aside four bytes a pixel before it reads the rest)."""
    real = png()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = zlib.crc32(b"IHDR" + header) & 0xFFFFFFFF
    return real[:16] + header + struct.pack(">I", crc) + real[33:]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


JPEG = (
    b"\xff\xd8"  # start of image
    + b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"  # APP0
    + b"\xff\xc0\x00\x0b\x08\x00\x01\x00\x02\x01\x01\x11\x00"  # its frame: 2 by 1, grey
    + b"\xff\xd9"  # end of image
)
"""A JPEG's header as goose-ls reads it (its size in pixels), with no picture in it."""
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
