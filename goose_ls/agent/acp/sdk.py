"""The ACP SDK, imported once, in a thread, and without its slowest needless step.

The SDK's schema is some 280 pydantic models that ask pydantic to read each field's
docstring from the source file (``use_attribute_docstrings``): tokenizing the schema
takes 0.15 of the 0.43 CPU seconds its import costs, at every goose-ls start. goose-ls
never shows those descriptions (they only go into JSON schemas), so the import skips
that step. The models validate exactly as before. Should pydantic rename the step, the
import simply takes its usual time.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

STEP = "_update_fields_from_docstrings"
"""pydantic's step that reads field docstrings from the source (pydantic 2.x)."""


def import_sdk() -> None:
    """Import the SDK and goose-ls's connection over it (run in a thread: ~0.3 s)."""
    fields = _pydantic_fields()
    original = getattr(fields, STEP, None)
    if fields is not None and original is not None:
        setattr(fields, STEP, _skip)
    try:
        importlib.import_module("goose_ls.agent.acp.connection")
    finally:
        if fields is not None and original is not None:
            setattr(fields, STEP, original)


def _skip(*_: Any, **__: Any) -> None:
    return None


def _pydantic_fields() -> ModuleType | None:
    try:
        return importlib.import_module("pydantic._internal._fields")
    except ImportError:
        return None
