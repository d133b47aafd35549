"""The context line every face shows: numbers grouped, the cost in its currency."""

from __future__ import annotations

import pytest

from goose_ls.events import Usage
from goose_ls.lsp.usage import context_line, cost_text


@pytest.mark.parametrize(
    ("cost", "text"),
    [
        ({"amount": 0.42, "currency": "USD"}, "$0.42"),
        ({"amount": 1234.5, "currency": "usd"}, "$1,234.50"),
        ({"amount": 0.0042, "currency": "USD"}, "$0.0042"),
        ({"amount": 0, "currency": "USD"}, "$0.00"),
        ({"amount": 3.1, "currency": "EUR"}, "3.10 EUR"),
        ({"amount": 3.1}, "3.10"),
        ({"currency": "USD"}, None),
        ({"amount": "lots", "currency": "USD"}, None),
        ({"amount": True, "currency": "USD"}, None),
        (None, None),
    ],
)
def test_a_cost_is_worded_in_its_currency(cost: dict[str, object] | None, text: str) -> None:
    assert cost_text(cost) == text


def test_the_context_line_groups_digits_and_adds_the_cost_only_when_given() -> None:
    assert context_line(Usage(12345, 200000)) == "context 12,345 / 200,000"
    cost = {"amount": 0.42, "currency": "USD"}
    assert context_line(Usage(12345, 200000, cost)) == "context 12,345 / 200,000 · $0.42"
