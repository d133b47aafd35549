"""Fuzz: random and malformed input from the editor and from the agent.

Every goose/* request, every command and code action requests get random params: the
answer is a result or an LSP error, never a hang, the server goes on serving, and its log
shows no traceback (commands answer at once and do their work in the background, where an
exception reaches only the log). Random ``session/update`` payloads from the agent are
skipped and logged, and the turn goes on. One goose-ls serves all the editor-side
examples, so what one example breaks shows up in the next.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as examples
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from goose_ls.lsp import commands
from goose_ls.lsp.plugin_api import protocol
from support.harness import Editor, raw_request, start_editor

T = TypeVar("T")

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
"""Each example costs a server round trip: shrinking a failure could take many minutes of
CI, so a failure is reported as it was found."""

ANSWER_WITHIN = 60.0
"""Seconds an answer may take before the example counts as a hang."""

METHODS = sorted(
    value
    for name, value in vars(protocol).items()
    if name.isupper() and isinstance(value, str)
    if value.startswith("goose/")
    and value not in (protocol.UPDATE, protocol.TURN_END, protocol.AGENT_STATUS)
)
FIELDS = [
    "sessionId", "messageId", "prompt", "context", "requestId", "optionId", "title", "tabId",
    "index", "modeId", "configId", "value", "methodId", "type", "uri", "range", "text",
]  # fmt: skip


class Background:
    """An event loop in a thread: hypothesis runs examples synchronously, the client is async."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = ANSWER_WITHIN) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def near_valid(session_id: str, uri: str) -> st.SearchStrategy[Any]:
    """Params objects built from the protocol's own field names (often almost right)."""
    value = st.one_of(json_values, st.just(session_id), st.just(uri), st.uuids().map(str))
    return st.one_of(
        json_values,
        st.dictionaries(st.sampled_from(FIELDS), value, max_size=5),
    )


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Background, Editor, str, str]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    background = Background()
    editor = background.run(start_editor(tmp))
    client = editor.client
    background.run(editor.start({"turns": [[{"text": "ok"}]]}))
    session_id = background.run(editor.new_session())
    source = editor.workspace / "app.py"
    source.write_text("def add(x, y):\n    return x + y\n", encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(source.as_uri(), "python", 1, source.read_text())
        )
    )
    yield background, editor, session_id, source.as_uri()
    assert client._server is not None and client._server.returncode is None, "the server died"
    background.run(editor.goose.request(protocol.STATUS, {}))  # and still answers
    background.run(client.shutdown_session())
    background.stop()
    # What was still at work when the last example read the log.
    logged = editor.log.unexpected_tracebacks()
    assert not logged, f"goose-ls logged a traceback:\n{logged[0]}"


def _answer(background: Background, editor: Editor, method: str, params: Any) -> None:
    """A result or an error saying what was wrong is fine; a hang, a dead server, an
    internal error or a traceback in the log (an exception nobody caught) is not."""
    try:
        background.run(raw_request(editor.client, method, params))
    except JsonRpcInternalError as exc:
        raise AssertionError(f"{method} {params!r}: internal error {exc}") from exc
    except JsonRpcException:
        pass
    # Once this is answered, the background work the request started has begun. What
    # fails later shows up in the next example (a traceback stays in the log, so every
    # example after it fails), or in the fixture's check at the end.
    background.run(editor.goose.request(protocol.STATUS, {}))
    logged = editor.log.unexpected_tracebacks()
    assert not logged, f"{method} {params!r}: goose-ls logged a traceback:\n{logged[0]}"


@examples(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK
)
@given(data=st.data())
def test_random_goose_requests_get_an_answer(
    served: tuple[Background, Editor, str, str], data: st.DataObject
) -> None:
    background, editor, session_id, uri = served
    method = data.draw(st.sampled_from(METHODS))
    params = data.draw(near_valid(session_id, uri))
    _answer(background, editor, method, params)


@examples(
    max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK
)
@given(data=st.data())
def test_random_command_arguments_get_an_answer(
    served: tuple[Background, Editor, str, str], data: st.DataObject
) -> None:
    background, editor, session_id, uri = served
    command = data.draw(st.sampled_from(sorted(commands.COMMANDS)))
    arguments = data.draw(
        st.one_of(
            st.none(),
            st.lists(st.one_of(json_values, st.just(uri), st.just(session_id)), max_size=4),
            json_values,
        )
    )
    params = {"command": command, "arguments": arguments}
    _answer(background, editor, "workspace/executeCommand", params)


positions = st.fixed_dictionaries(
    {"line": st.integers(-5, 2**33), "character": st.integers(-5, 2**33)}
)


@examples(
    max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK
)
@given(data=st.data())
def test_random_code_action_requests_get_an_answer(
    served: tuple[Background, Editor, str, str], data: st.DataObject
) -> None:
    background, editor, _, uri = served
    params = data.draw(
        st.one_of(
            json_values,
            st.fixed_dictionaries(
                {
                    "textDocument": st.fixed_dictionaries(
                        {"uri": st.one_of(st.just(uri), st.text(max_size=20), json_values)}
                    ),
                    "range": st.one_of(
                        st.fixed_dictionaries({"start": positions, "end": positions}), json_values
                    ),
                    "context": st.one_of(
                        st.fixed_dictionaries({"diagnostics": st.lists(json_values, max_size=3)}),
                        json_values,
                    ),
                }
            ),
        )
    )
    _answer(background, editor, "textDocument/codeAction", params)


# --- the agent's side ---------------------------------------------------------------

KINDS = [
    "agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call",
    "tool_call_update", "plan", "available_commands_update", "current_mode_update",
    "config_option_update", "session_info_update", "usage_update", "made_up_kind",
]  # fmt: skip
huge_strings = st.integers(100_000, 400_000).map(lambda n: "ü" * n)
UPDATE_FIELDS = [
    "sessionUpdate", "content", "toolCallId", "title", "status", "entries", "availableCommands",
    "currentModeId", "configOptions", "used", "size", "kind", "locations", "rawInput",
]  # fmt: skip
updates = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(
            [
                "sessionUpdate",
                "content",
                "toolCallId",
                "title",
                "status",
                "entries",
                "availableCommands",
                "currentModeId",
                "configOptions",
                "used",
                "size",
                "kind",
                "locations",
                "rawInput",
            ]
        ),
        st.one_of(st.sampled_from(KINDS), json_values, huge_strings),
        max_size=5,
    ),
    st.sampled_from(KINDS).map(lambda kind: {"sessionUpdate": kind}),
    huge_strings.map(
        lambda text: {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    ),
)


# Few examples of many updates each: each example starts a goose-ls and its agent (2 s).
@examples(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK)
@given(payloads=st.lists(updates, min_size=50, max_size=110))
def test_random_session_updates_from_the_agent_are_survived(
    tmp_path_factory: pytest.TempPathFactory, payloads: list[Any]
) -> None:
    tmp = tmp_path_factory.mktemp("agent-fuzz")
    background = Background()
    editor = background.run(start_editor(tmp))
    client = editor.client
    try:
        (tmp / "payloads.json").write_text(json.dumps(payloads), encoding="utf-8")
        steps: list[dict[str, Any]] = [{"update": p} for p in payloads]
        background.run(editor.start({"turns": [[*steps, {"text": "still here"}]]}))
        session_id = background.run(editor.new_session())
        message_id = background.run(editor.prompt(session_id))
        end = background.run(editor.goose.turn_end(message_id, timeout=ANSWER_WITHIN))
        assert end["stopReason"] == "end_turn"
        assert editor.goose.text(message_id).endswith("still here")
        background.run(editor.goose.request(protocol.STATUS, {}))
    finally:
        background.run(client.shutdown_session())
        background.stop()
    log = (tmp / "logs" / "goose-ls.log").read_text(encoding="utf-8")
    assert "Traceback" not in log, log[-3000:]
    if any(not isinstance(p, dict) or "sessionUpdate" not in p for p in payloads):
        assert "skipped, it does not fit the ACP schema" in log
