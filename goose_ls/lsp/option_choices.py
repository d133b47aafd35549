"""The choices a session's config options offer, worded and grouped by category.

Code actions are one flat menu, so each choice names its group in its title
(``Model → gpt-5``, ``Thinking: on``) and choices of one category sit together.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from goose_ls.events import Json

CATEGORY_LABELS = {
    "mode": "Mode",
    "model": "Model",
    "model_config": "Model settings",
    "thought_level": "Thinking",
}
"""The categories ACP names. ACP SDK 0.12.1 drops custom (``_x``) categories, so others
are not seen yet; they would be shown as they are."""

MAX_CHOICES = 12
"""Select options with more values than this (long model lists) get no code actions."""


@attrs.frozen
class Choice:
    title: str
    config_id: str
    value: str | bool


def grouped(options: list[Json]) -> list[Json]:
    """The options, those of one category together, groups in the order the agent gave
    (its order is their priority)."""
    first: dict[Any, int] = {}
    for index, option in enumerate(options):
        first.setdefault(option.get("category"), index)
    return sorted(options, key=lambda o: first[o.get("category")])


def heading(option: Json, options: list[Json]) -> str:
    """The option's category when it alone has one ACP names, else category and name."""
    name = str(option.get("name") or option["id"])
    category = option.get("category")
    if not isinstance(category, str) or not category:
        return name
    label = CATEGORY_LABELS.get(category, category)
    alone = sum(o.get("category") == category for o in options) == 1
    if (alone and category in CATEGORY_LABELS) or label.casefold() == name.casefold():
        return label
    return f"{label} / {name}"


def values(option: Json) -> Iterator[Json]:
    """A select option's values, those in value groups too."""
    for entry in option.get("options", []):
        if "options" in entry:
            yield from (value for value in entry["options"] if "value" in value)
        elif "value" in entry:
            yield entry


def choices(options: list[Json]) -> list[Choice]:
    """Every value each option could change to: the other values of a select option (when
    there are at most :data:`MAX_CHOICES`), the other state of a boolean one."""
    found: list[Choice] = []
    for option in grouped(options):
        head, kind = heading(option, options), option.get("type", "select")
        if kind == "boolean":
            turn_on = option.get("currentValue") is not True
            found.append(Choice(f"{head}: {'on' if turn_on else 'off'}", option["id"], turn_on))
            continue
        every = list(values(option)) if kind == "select" else []
        if len(every) > MAX_CHOICES:
            continue
        others = [v for v in every if v["value"] != option.get("currentValue")]
        found += [
            Choice(f"{head} → {v.get('name') or v['value']}", option["id"], v["value"])
            for v in others
        ]
    return found
