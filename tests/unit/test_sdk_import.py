"""The ACP SDK imported without pydantic reading its docstrings: same models, faster."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import pydantic._internal._fields as fields
before = fields._update_fields_from_docstrings
from goose_ls.agent.acp.sdk import import_sdk
import_sdk()
from acp import schema
chunk = schema.SessionNotification.model_validate(
    {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                   "content": {"type": "text", "text": "hi"}}}
)
assert chunk.update.content.text == "hi"
assert fields._update_fields_from_docstrings is before, "pydantic is left as it was"
field = schema.SessionNotification.model_fields["session_id"]
print(field.description is None)
"""


def test_the_sdk_validates_as_before_and_pydantic_is_left_as_it_was() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True", "the docstrings were not read"
