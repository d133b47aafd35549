"""A fake Anthropic Messages API on 127.0.0.1, so that Claude Code (behind
claude-agent-acp) runs a turn offline.

Claude Code streams ``POST /v1/messages``; each such request takes the next scripted
:class:`Reply`: text, a tool it asks to run (the next request carries the tool's result,
which a reply can say back), or a stream that hangs (the server itself is
:class:`~support.fake_api.FakeApi`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from support import fake_api

INPUT_TOKENS, OUTPUT_TOKENS = 100, 10
"""The tokens each message says it used: what the agent's usage update should report."""


@attrs.frozen
class ToolUse:
    """A tool the model asks to run, with its input."""

    name: str
    input: dict[str, Any]
    id: str = "toolu_01"


@attrs.frozen
class Reply:
    """One streamed message: ``chunks`` of text, then, when it ``echoes``, the text of the
    tool results the request carried; then ``tool`` (the turn goes on with its result), or
    the end of the turn; unless it ``hangs`` after its text (the stream stays open until
    the agent closes it: a turn to cancel)."""

    chunks: tuple[str, ...] = ()
    tool: ToolUse | None = None
    echoes: bool = False
    hangs: bool = False


def ask(question: str, header: str, *labels: str) -> ToolUse:
    """Claude Code's AskUserQuestion tool asking one single-choice ``question``."""
    options = [{"label": label, "description": f"The {label} one"} for label in labels]
    asked = {"question": question, "header": header, "options": options, "multiSelect": False}
    return ToolUse("AskUserQuestion", {"questions": [asked]})


def tool_result_blocks(request: fake_api.Request) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks in the last message of a turn ``request``: what the agent
    told the model its tools answered (``is_error`` when one failed)."""
    messages = request.body.get("messages") or [{}]
    content = messages[-1].get("content")
    blocks = content if isinstance(content, list) else []
    return [block for block in blocks if block.get("type") == "tool_result"]


def tool_results(request: fake_api.Request) -> list[str]:
    """The text of each tool result in the last message of a turn ``request``."""
    found = []
    for block in tool_result_blocks(request):
        result = block.get("content")
        if isinstance(result, list):
            result = "".join(part.get("text", "") for part in result)
        found.append(str(result))
    return found


TITLE = "A chat about buttons"
ASIDE = Reply((json.dumps({"title": TITLE}),))
"""The answer to Claude Code's requests of its own, with no tools: it asks the model for a
chat's title, as JSON."""


class FakeAnthropic(fake_api.FakeApi[Reply]):
    """The Messages API: ``with FakeAnthropic([...]) as api:``; ``api.origin`` is what
    Claude Code's ``ANTHROPIC_BASE_URL`` names. A turn is a request that offers the
    model tools; Claude Code's own requests are answered :data:`ASIDE`."""

    TURN_PATH = "/v1/messages"

    def aside(self, request: fake_api.Request) -> Reply | None:
        return ASIDE if super()._is_turn(request) else None

    def _is_turn(self, request: fake_api.Request) -> bool:
        return super()._is_turn(request) and bool((request.body or {}).get("tools"))

    def stream(self, reply: Reply, n: int, request: fake_api.Request) -> Iterator[fake_api.Event]:
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": 1}
        model = request.body.get("model")
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model}
        yield {"type": "message_start", "message": message | {"content": [], "usage": usage}}
        chunks = reply.chunks + (tuple(tool_results(request)) if reply.echoes else ())
        blocks = 0
        if chunks:
            yield _start(0, {"type": "text", "text": ""})
            for chunk in chunks:
                yield _delta(0, {"type": "text_delta", "text": chunk})
            if reply.hangs:
                return
            yield {"type": "content_block_stop", "index": 0}
            blocks = 1
        if reply.tool is not None:
            tool = {"type": "tool_use", "id": reply.tool.id, "name": reply.tool.name, "input": {}}
            yield _start(blocks, tool)
            given = json.dumps(reply.tool.input)
            for part in (given[: len(given) // 2], given[len(given) // 2 :]):
                yield _delta(blocks, {"type": "input_json_delta", "partial_json": part})
            yield {"type": "content_block_stop", "index": blocks}
        stop = "end_turn" if reply.tool is None else "tool_use"
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": OUTPUT_TOKENS},
        }
        yield {"type": "message_stop"}


def _start(index: int, block: dict[str, Any]) -> fake_api.Event:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> fake_api.Event:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def replies_from(script: list[dict[str, Any]]) -> list[Reply]:
    """Replies from JSON: each ``{"text": "..." or [chunks], "tool": {"name", "input"},
    "hangs": bool}``; a ``tool`` is a Claude Code tool (``Read``, ``Edit``, ``Bash``...)."""
    replies = []
    for n, item in enumerate(script):
        text = item.get("text", ())
        chunks = (text,) if isinstance(text, str) else tuple(text)
        tool = item.get("tool")
        use = ToolUse(tool["name"], tool.get("input", {}), f"toolu_{n:02}") if tool else None
        replies.append(Reply(chunks, use, hangs=bool(item.get("hangs"))))
    return replies


def main(argv: list[str] | None = None) -> int:
    """Serve the Messages API offline for Claude Code (claude-agent-acp) until killed."""
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(
        prog="python -m support.fake_anthropic",
        description="A fake Anthropic Messages API: each turn the agent asks for gets the "
        "next reply of REPLIES (JSON: a list of {text, tool: {name, input}, hangs}); "
        "when they run out, every turn is answered 'ok.'. Prints the URL to set as "
        "ANTHROPIC_BASE_URL, then serves until killed. Run it in tests/ (or with tests/ on "
        "PYTHONPATH).",
    )
    parser.add_argument("replies", nargs="?", help="the replies' JSON file")
    args = parser.parse_args(argv)
    script = json.loads(Path(args.replies).read_text(encoding="utf-8")) if args.replies else []
    replies = replies_from(script) + [Reply(("ok.",))] * 1000
    with FakeAnthropic(replies) as api:
        print(api.origin, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
