"""goosed's messages as ACP ``session/update``s, and a prompt's blocks as goosed's message.

Everything goosed sends is the agent's, so untrusted: each field is taken only when it
has the type it should, and what goose-ls cannot place is dropped (logged), never shown
as goose-ls's own. goosed streams a reply as ``Message`` events each holding the new
piece (text, a thought, a tool request or response); a tool response comes in a message
of the user's role, as the model sees it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

log = logging.getLogger(__name__)

TOOL_KINDS = {
    "shell": "execute",
    "read": "read",
    "view": "read",
    "write": "edit",
    "edit": "edit",
    "str_replace": "edit",
    "insert": "edit",
    "search": "search",
    "fetch": "fetch",
}
"""The ACP kind of goose's developer tools, by the name after ``developer__`` (or, for
``text_editor``, its ``command``). Only the developer extension's: another extension's
tool (any MCP server's) named ``notes__read`` does what its server does, so it is
``other``, never a read or an edit a rule for those would let run."""
KNOWN_EXTENSION = "developer"

Update = dict[str, Any]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def tool_call(request: dict[str, Any]) -> Update | None:
    """A ``toolRequest`` (or a ``frontendToolRequest``) as ACP's ``tool_call``."""
    call_id = _text(request.get("id"))
    if not call_id:
        return None
    name, arguments = call_of(request)
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title_of(name),
        "kind": kind_of(name, arguments),
        "status": "pending",
        "rawInput": arguments,
    }


def call_of(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool's name and arguments from a request's ``toolCall`` (``{"status":
    "success", "value": {"name", "arguments"}}``), or from a confirmation's fields."""
    if "toolName" in request:
        name, arguments = request.get("toolName"), request.get("arguments")
    else:
        call = request.get("toolCall")
        value = call.get("value") if isinstance(call, dict) else None
        value = value if isinstance(value, dict) else {}
        name, arguments = value.get("name"), value.get("arguments")
    return (name if isinstance(name, str) else ""), (
        arguments if isinstance(arguments, dict) else {}
    )


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+__[A-Za-z0-9_-]+")


def title_of(name: str) -> str:
    """A tool call's title: its name when it is an extension's tool as goose names them
    (``extension__tool``), else ``tool <name>``, so that no name of goosed's (``read``,
    ``edit: x``) reads as goose's own titles do, which give a call its kind."""
    return name if _TOOL_NAME.fullmatch(name) else f"tool {name}".rstrip()


def kind_of(name: str, arguments: dict[str, Any]) -> str:
    extension, _, short = name.partition("__")
    if extension != KNOWN_EXTENSION:
        return "other"
    if short == "text_editor":
        command = arguments.get("command")
        short = command if isinstance(command, str) else ""
    return TOOL_KINDS.get(short, "other")


def tool_result(response: dict[str, Any]) -> Update | None:
    """A ``toolResponse`` as ACP's ``tool_call_update``: completed with its text, or
    failed with goosed's error."""
    call_id = _text(response.get("id"))
    if not call_id:
        return None
    result = response.get("toolResult")
    result = result if isinstance(result, dict) else {}
    texts: list[str] = []
    failed = result.get("status") == "error"
    if failed:
        texts.append(_text(result.get("error")) or "the tool failed")
    value = result.get("value")
    if isinstance(value, dict):  # a CallToolResult
        failed = failed or value.get("isError") is True or value.get("is_error") is True
        value = value.get("content")
    if isinstance(value, list):
        texts += [t for item in value if isinstance(item, dict) and (t := _text(item.get("text")))]
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "failed" if failed else "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "\n".join(texts)}}]
        if texts
        else [],
    }


def updates(message: Any, replay: bool = False) -> list[Update]:
    """One goosed ``Message`` as the updates it makes. Live, the user's own words are not
    repeated (goose-ls recorded the prompt); replayed (``session/load``), they are."""
    if not isinstance(message, dict):
        return []
    role = message.get("role")
    metadata = message.get("metadata")
    visible = not isinstance(metadata, dict) or metadata.get("userVisible") is not False
    content = message.get("content")
    found: list[Update] = []
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        update = _one(item, role, visible, replay)
        if update is not None:
            found.append(update)
    return found


def _one(item: dict[str, Any], role: Any, visible: bool, replay: bool) -> Update | None:
    kind = item.get("type")
    if kind == "text" and visible and (text := _text(item.get("text"))):
        if role == "assistant":
            return _chunk("agent_message_chunk", text)
        if role == "user" and replay:
            return {"sessionUpdate": "user_message_chunk", "content": context_block(text)}
        return None
    if kind == "thinking" and role == "assistant" and (text := _text(item.get("thinking"))):
        return _chunk("agent_thought_chunk", text)
    if kind == "image" and role == "assistant" and visible:
        data, mime = _text(item.get("data")), _text(item.get("mimeType"))
        if data and mime:
            return {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "image", "data": data, "mimeType": mime},
            }
        return None
    if kind in ("toolRequest", "frontendToolRequest"):
        return tool_call(item)
    if kind == "toolResponse":
        return tool_result(item)
    if kind == "systemNotification" and visible and (text := _text(item.get("msg"))):
        shape = item.get("notificationType")
        if shape == "thinkingMessage":
            return _chunk("agent_thought_chunk", text)
        if shape in ("inlineMessage", "creditsExhausted"):
            return _chunk("agent_message_chunk", text)
    if kind not in ("text", "thinking", "redactedThinking", "actionRequired",
                    "toolConfirmationRequest", "systemNotification", "image"):  # fmt: skip
        log.info("goosed sent content of a kind goose-ls does not show: %.40s", kind)
    return None


def _chunk(kind: str, text: str) -> Update:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def confirmation(message: Any) -> list[dict[str, Any]]:
    """The tool confirmations a message asks for: ``actionRequired`` of the kind
    ``toolConfirmation`` (1.2x on), or the older ``toolConfirmationRequest``; each with
    ``id``, ``toolName``, ``arguments``."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    asked = []
    for item in message["content"]:
        if not isinstance(item, dict):
            continue
        data = item.get("data") if item.get("type") == "actionRequired" else None
        if isinstance(data, dict) and data.get("actionType") == "toolConfirmation":
            found = data
        elif item.get("type") == "toolConfirmationRequest":
            found = item
        else:
            continue
        if _text(found.get("id")):
            asked.append(found)
    return asked


def user_message(blocks: list[Any]) -> dict[str, Any]:
    """ACP prompt blocks as goosed's user ``Message``: text as text; a file as its path
    (goosed reads it with its own tools); an embedded resource as its text under its
    URI."""
    content: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            content.append({"type": "text", "text": block["text"]})
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            content.append({"type": "text", "text": f"[file: {_path(block['uri'])}]"})
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            uri, text = resource.get("uri"), resource.get("text")
            if isinstance(text, str):
                content.append({"type": "text", "text": f"{_path(str(uri))}:\n{text}"})
        elif kind == "image" and isinstance(block.get("data"), str):
            content.append(
                {"type": "image", "data": block["data"], "mimeType": block.get("mimeType")}
            )
    return {
        "role": "user",
        "created": int(time.time()),
        "content": content,
        "metadata": {"userVisible": True, "agentVisible": True},
    }


def _path(uri: str) -> str:
    return uri.removeprefix("file://")


_FILE = re.compile(r"\[file: (/[^\n\]]*)\]")
_SELECTION = re.compile(r"(/[^\n]*#L\d+-L\d+):\n(.*)", re.DOTALL)


def context_block(text: str) -> dict[str, Any]:
    """A user message's text as goose-ls sent it: a context item :func:`user_message`
    wrote as text (``[file: PATH]``, ``PATH#Ln-Lm:`` then the selection) is that ACP
    block again, so that the journal's copy of it is recognised; other text is text."""
    if found := _FILE.fullmatch(text):
        path = found.group(1)
        name = path.rsplit("/", 1)[-1]
        return {"type": "resource_link", "uri": f"file://{path}", "name": name}
    if found := _SELECTION.fullmatch(text):
        return {
            "type": "resource",
            "resource": {"uri": f"file://{found.group(1)}", "text": found.group(2)},
        }
    return {"type": "text", "text": text}


def usage(token_state: Any) -> dict[str, int] | None:
    """A ``Finish``'s ``token_state`` as ACP's prompt ``usage`` (this turn's counts)."""
    if not isinstance(token_state, dict):
        return None
    counts = {
        "inputTokens": token_state.get("inputTokens"),
        "outputTokens": token_state.get("outputTokens"),
        "totalTokens": token_state.get("totalTokens"),
    }
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
        return None
    return {k: int(v) for k, v in counts.items() if v is not None}


def session_info(session: Any) -> dict[str, Any] | None:
    """A goosed ``Session`` as ACP's ``SessionInfo``, marked as goosed's (Desktop's)."""
    if not isinstance(session, dict) or not _text(session.get("id")):
        return None
    info: dict[str, Any] = {
        "sessionId": session["id"],
        "cwd": _text(session.get("working_dir")) or "/",
        "_meta": {"goosed": {"sessionType": _text(session.get("session_type")) or "user"}},
    }
    if name := _text(session.get("name")):
        info["title"] = name[:200]
    if updated := _text(session.get("updated_at")):
        info["updatedAt"] = updated
    return info


def dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))
