"""The one converter for everything on a wire (``goose_ls.wire``): camelCase JSON, strict
primitives, and errors that name the field."""

from __future__ import annotations

from typing import Any, Literal

import attrs
import pytest

from goose_ls.wire import WireError, camel, from_wire, to_wire


@attrs.define
class Item:
    start_line: int
    label: str | None = None


@attrs.define
class Message:
    session_id: str
    mode: Literal["auto", "approve"] = "auto"
    ratio: float = 1.0
    flag: bool = False
    items: list[Item] = attrs.Factory(list)
    note: str | None = None


def test_names_are_camel_case_on_the_wire() -> None:
    assert [camel(n) for n in ("check_version", "tab_id", "x", "after_index2")] == [
        "checkVersion",
        "tabId",
        "x",
        "afterIndex2",
    ]


def test_to_wire_leaves_out_what_is_none_by_default() -> None:
    assert to_wire(Message("s", items=[Item(1)])) == {
        "sessionId": "s",
        "mode": "auto",
        "ratio": 1.0,
        "flag": False,
        "items": [{"startLine": 1}],
    }
    both = to_wire(Message("s", note="n", items=[Item(1, "first")]))
    assert both["note"] == "n" and both["items"] == [{"startLine": 1, "label": "first"}]


def test_from_wire_reads_what_to_wire_writes() -> None:
    message = Message("s", "approve", 0.5, True, [Item(3, "x")], "note")
    assert from_wire(to_wire(message), Message) == message


def test_an_int_is_a_float_but_nothing_else_is_coerced() -> None:
    value = from_wire({"sessionId": "s", "ratio": 2}, Message).ratio
    assert value == 2.0 and isinstance(value, float)
    assert from_wire(3, int) == 3


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"sessionId": "s", "ratio": True}, "ratio: expected float, got a boolean"),
        ({"sessionId": "s", "flag": "yes"}, "flag: expected bool, got str"),
        ({"sessionId": "s", "flag": 1}, "flag: expected bool, got int"),
        ({"sessionId": "s", "mode": "ask"}, "mode: expected one of 'auto', 'approve', got 'ask'"),
        (
            {"sessionId": "s", "items": [{"startLine": "1"}]},
            "items[0].startLine: expected int, got str",
        ),
        ({"sessionId": "s", "items": [{}]}, "items[0].startLine: is required"),
        ({"session_id": "s"}, "sessionId: is required"),
        ([], "expected an object, got list"),
        ("s", "expected an object, got str"),
    ],
)
def test_what_does_not_fit_is_a_wire_error_naming_the_field(data: Any, problem: str) -> None:
    with pytest.raises(WireError) as info:
        from_wire(data, Message)
    assert str(info.value) == problem


def test_several_problems_are_named_together() -> None:
    with pytest.raises(WireError) as info:
        from_wire({"sessionId": 1, "flag": "no"}, Message)
    assert str(info.value) == "sessionId: expected str, got int; flag: expected bool, got str"


def test_a_wire_error_is_a_value_error() -> None:
    """Callers that catch ValueError (bad JSON, say) catch a bad shape too."""
    with pytest.raises(ValueError, match="expected int, got a boolean"):
        from_wire(True, int)
