"""An MCP server for tests whose one tool asks the user (MCP elicitation), so that a real
agent that forwards MCP questions (claude-agent-acp) asks goose-ls with ACP's
``elicitation/create``.

``python tests/support/mcp_asker.py`` (it imports only the standard library) speaks MCP on stdio (one JSON-RPC message a
line). Its tool ``ask`` takes ``{"message", "url"}`` (a page to open: URL mode) or
``{"message", "schema"}`` (a form), asks the client, and answers with what the client
answered, as JSON text; a page accepted is then said done with
``notifications/elicitation/complete``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

NAME, TOOL = "asker", "ask"
ELICITATION_ID = "asker-page-1"

_TOOL = {
    "name": TOOL,
    "description": "Ask the user: a form (schema) or a page to open (url).",
    "inputSchema": {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "url": {"type": "string"},
            "schema": {"type": "object"},
        },
        "required": ["message"],
    },
}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def _receive() -> dict[str, Any] | None:
    """The next message from the client, or None at the end of its input."""
    for line in sys.stdin:
        if line.strip():
            message: dict[str, Any] = json.loads(line)
            return message
    return None


def _ask(arguments: dict[str, Any]) -> dict[str, Any]:
    """Ask the client as ``arguments`` say; its answer (result or error)."""
    if "url" in arguments:
        params = {"mode": "url", "message": arguments["message"], "url": arguments["url"]}
        params["elicitationId"] = ELICITATION_ID
    else:
        params = {"message": arguments["message"], "requestedSchema": arguments.get("schema")}
    _send({"id": "ask", "method": "elicitation/create", "params": params})
    while (message := _receive()) is not None:
        if message.get("method") == "ping" and "id" in message:
            _send({"id": message["id"], "result": {}})
        elif message.get("id") == "ask" and "method" not in message:
            answer: dict[str, Any] = message.get("result", message.get("error", {}))
            if "url" in arguments and answer.get("action") == "accept":
                done = {"elicitationId": ELICITATION_ID}
                _send({"method": "notifications/elicitation/complete", "params": done})
            return answer
    return {}


def main() -> None:
    while (message := _receive()) is not None:
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # a notification: nothing to answer
        if method == "initialize":
            version = message["params"].get("protocolVersion")
            info = {"name": NAME, "version": "1.0.0"}
            capabilities: dict[str, Any] = {"tools": {}}
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
            _send({"id": ident, "result": result})
        elif method == "tools/list":
            _send({"id": ident, "result": {"tools": [_TOOL]}})
        elif method == "tools/call":
            text = json.dumps(_ask(message["params"].get("arguments") or {}), sort_keys=True)
            _send({"id": ident, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            _send({"id": ident, "result": {}})
        else:
            _send({"id": ident, "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
