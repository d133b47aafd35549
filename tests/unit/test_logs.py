"""Which tracebacks in goose-ls's log fail a test (``support.logs``)."""

from __future__ import annotations

from pathlib import Path

from pygls.exceptions import JsonRpcException

from support.logs import LogWatch, read_log, unexpected_tracebacks


class AgentTrouble(JsonRpcException):
    """An error of goose-ls's own that it answers a request with."""


INVALID_PARAMS = """\
2026-11-23 20:34:12,192 ERROR pygls.protocol.json_rpc: Exception occurred for message "7098"
Traceback (most recent call last):
  File "pygls/protocol/json_rpc.py", line 300, in _send_handler_result
    self._send_response(msg_id, result=future.result())
pygls.exceptions.JsonRpcInvalidParams: goose/prompt: sessionId: is required
"""
UNREADABLE = """\
2026-11-23 20:27:21,580 ERROR pygls.protocol.json_rpc: Unable to deserialize message
Traceback (most recent call last):
  File "cattrs/cols.py", line 129, in structure_list
TypeError: 'float' object is not iterable
"""
AGENT_FAILED = f"""\
2026-11-23 21:33:39,173 ERROR pygls.protocol.json_rpc: Exception occurred for message "3825"
Traceback (most recent call last):
  File "goose_ls/lsp/goose_methods.py", line 89, in _agent_call
    raise _agent_failure(exc) from None
{__name__}.AgentTrouble: session/load failed: Resource not found
"""
INTERNAL = """\
2026-11-23 20:34:13,001 ERROR pygls.protocol.json_rpc: Exception occurred for message "99"
Traceback (most recent call last):
  File "goose_ls/lsp/code_actions.py", line 203, in code_actions
ValueError: embedded null byte
"""
BACKGROUND = """\
2026-11-23 21:16:13,426 ERROR goose_ls.lsp.commands: goose.sessions failed
Traceback (most recent call last):
  File "goose_ls/lsp/commands.py", line 110, in run
RuntimeError: broken
"""
PLAIN = "2026-11-23 21:16:13,435 INFO goose_ls.cli: goose-ls stopped\n"


def test_errors_answered_on_purpose_are_not_failures() -> None:
    log = PLAIN + INVALID_PARAMS + UNREADABLE + AGENT_FAILED + PLAIN
    assert unexpected_tracebacks(log) == []


def test_an_exception_nobody_caught_is_a_failure_whoever_logged_it() -> None:
    log = INVALID_PARAMS + INTERNAL + PLAIN + BACKGROUND + PLAIN
    assert unexpected_tracebacks(log) == [INTERNAL, BACKGROUND]


def test_the_rotated_parts_are_read_oldest_first(tmp_path: Path) -> None:
    (tmp_path / "goose-ls.log.2").write_text("one\n")
    (tmp_path / "goose-ls.log.1").write_text("two\n")
    (tmp_path / "goose-ls.log").write_text("three\n")
    assert read_log(tmp_path) == "one\ntwo\nthree\n"


def test_a_watch_judges_what_the_log_has_become(tmp_path: Path) -> None:
    log = tmp_path / "goose-ls.log"
    watch = LogWatch(tmp_path)
    log.write_text(PLAIN + INVALID_PARAMS)
    assert watch.unexpected_tracebacks() == []
    log.write_text(PLAIN + INVALID_PARAMS + BACKGROUND[:70])
    assert watch.unexpected_tracebacks() == [], "a record still being written waits"
    log.write_text(PLAIN + INVALID_PARAMS + BACKGROUND)
    assert watch.unexpected_tracebacks() == [BACKGROUND]
    log.write_text(PLAIN + INVALID_PARAMS + BACKGROUND + UNREADABLE + INTERNAL)
    assert watch.unexpected_tracebacks() == [BACKGROUND, INTERNAL]
    log.write_text(PLAIN)
    assert watch.unexpected_tracebacks() == [], "after a rotation, what is left"
