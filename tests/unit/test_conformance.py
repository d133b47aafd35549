"""The schema check every test ends with refuses what ACP refuses."""

from __future__ import annotations

import json
from pathlib import Path

from support.conformance import schema_errors


def _record(
    tmp_path: Path, received: list[dict[str, object]], sent: list[dict[str, object]]
) -> Path:
    record = tmp_path / "agent-received.jsonl"
    record.write_text("".join(json.dumps(m) + "\n" for m in received))
    record.with_suffix(".sent.jsonl").write_text("".join(json.dumps(m) + "\n" for m in sent))
    return record


def test_what_acp_allows_passes(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
            },
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"content": "text"}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32002, "message": "Resource not found"}},
        ],
        [{"id": 1, "method": "fs/read_text_file"}, {"id": 2, "method": "fs/read_text_file"}],
    )
    assert schema_errors(record) == []


def test_a_malformed_request_an_unknown_method_and_a_bad_answer_are_each_named(
    tmp_path: Path,
) -> None:
    record = _record(
        tmp_path,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/teleport", "params": {}},
            {"jsonrpc": "2.0", "id": 1, "result": {"text": "no content field"}},
            {"jsonrpc": "2.0", "id": 9, "result": {}},
        ],
        [{"id": 1, "method": "fs/read_text_file"}],
    )
    errors = schema_errors(record)
    assert len(errors) == 4, errors
    assert errors[0].startswith("session/prompt: PromptRequest")
    assert errors[1] == "session/teleport: not an ACP method goose answers"
    assert errors[2].startswith("the answer to fs/read_text_file: ReadTextFileResponse")
    assert errors[3].startswith("the answer to an unknown request")
