"""A fake model API on 127.0.0.1, so that a real agent (codex-acp) runs a turn offline.

It speaks the OpenAI Responses API as codex streams it: ``POST {base}/responses`` answered
with server-sent events, each turn the next scripted :class:`Reply`: text, or a tool the
model asks codex to run (the next request carries its output), or a stream that hangs (the
server itself is :class:`~support.fake_api.FakeApi`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from support import fake_api

MODEL = "gpt-5.4"
"""A model codex knows offline: an unknown one makes it warn in the chat before a turn."""

TOTAL_TOKENS = 110
"""The tokens each response says it used: what the agent's usage update should report."""

KEY_VARIABLE = "FAKE_MODEL_API_KEY"
"""The environment variable codex reads the fake API key from (``env_key``)."""


@attrs.frozen
class Call:
    """A tool the model calls: a function with JSON ``input`` (``exec_command``), or a
    freeform tool with text ``input`` (``apply_patch``)."""

    name: str
    input: dict[str, Any] | str
    id: str = "call_1"


@attrs.frozen
class Reply:
    """One streamed answer: ``chunks`` of text, then ``call`` (the next request carries
    its output), then the end of the response; unless it ``hangs`` after its text (the
    stream stays open until the agent closes it: a turn to cancel)."""

    chunks: tuple[str, ...] = ()
    hangs: bool = False
    call: Call | None = None


def exec_command(line: str, id: str = "call_1", **arguments: Any) -> Call:
    """codex's shell tool asked to run ``line`` (``workdir``, ``sandbox_permissions``...)."""
    return Call("exec_command", {"cmd": line, **arguments}, id)


def apply_patch(patch: str, id: str = "call_1") -> Call:
    """codex's file-editing tool, given a whole ``*** Begin Patch`` text."""
    return Call("apply_patch", patch, id)


def call_outputs(request: fake_api.Request) -> list[str]:
    """What codex told the model each tool call of the turn returned, in order."""
    found = []
    for item in request.body.get("input", []):
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            found.append(output if isinstance(output, str) else json.dumps(output))
    return found


class FakeModel(fake_api.FakeApi[Reply]):
    """The Responses API: ``with FakeModel([...]) as model:``; ``model.base_url`` for codex."""

    TURN_PATH = "/v1/responses"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def stream(self, reply: Reply, n: int, request: fake_api.Request) -> Iterator[fake_api.Event]:
        return _events(reply, n)

    def codex_home(self, path: Path, trusted: Path | None = None) -> Path:
        """A ``CODEX_HOME`` whose config.toml makes this server codex's model provider, its
        key read from ``KEY_VARIABLE``, with no retries: a failure shows at once. With
        ``trusted``, that folder is a project the user trusts (codex asks it once)."""
        path.mkdir(parents=True, exist_ok=True)
        trust = f'[projects."{trusted}"]\ntrust_level = "trusted"\n' if trusted else ""
        (path / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n'
            "[model_providers.fake]\n"
            'name = "Fake model API"\n'
            f'base_url = "{self.base_url}"\n'
            'wire_api = "responses"\n'
            f'env_key = "{KEY_VARIABLE}"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n" + trust,
            encoding="utf-8",
        )
        return path


def conversation(request: fake_api.Request) -> list[tuple[str, str]]:
    """The user's and the assistant's messages of a turn's ``input``, as (role, text): what
    the model was told was said before, the new prompt last."""
    said = []
    for item in request.body.get("input", []):
        if item.get("type") == "message" and item.get("role") in ("user", "assistant"):
            text = "".join(part.get("text", "") for part in item.get("content", []))
            said.append((str(item["role"]), text))
    return said


def _events(reply: Reply, n: int) -> Iterator[fake_api.Event]:
    """The Responses API's stream for ``reply``, the ``n``th: an assistant message item,
    then the tool it asks for."""
    item = f"msg_{n}"
    yield {"type": "response.created", "response": {"id": f"resp_{n}"}}
    message: dict[str, Any] = {"type": "message", "role": "assistant", "id": item}
    yield {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": message | {"content": []},
    }
    for chunk in reply.chunks:
        yield {
            "type": "response.output_text.delta",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "delta": chunk,
        }
    if reply.hangs:
        return
    text = {"type": "output_text", "text": "".join(reply.chunks), "annotations": []}
    yield {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": message | {"content": [text]},
    }
    if reply.call is not None:
        yield {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": _call_item(reply.call),
        }
    usage = {"input_tokens": TOTAL_TOKENS - 10, "output_tokens": 10, "total_tokens": TOTAL_TOKENS}
    yield {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}}


def _call_item(call: Call) -> dict[str, Any]:
    """The output item of a tool call, whole (codex reads the finished item)."""
    item = {"id": f"fc_{call.id}", "call_id": call.id, "name": call.name, "status": "completed"}
    if isinstance(call.input, str):
        return item | {"type": "custom_tool_call", "input": call.input}
    return item | {"type": "function_call", "arguments": json.dumps(call.input)}
