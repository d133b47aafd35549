"""One cattrs converter for everything goose-ls puts on a wire or reads from one.

Python names stay snake_case; the JSON the editor and the settings use is camelCase.
Primitives are structured strictly (``"yes"`` is not a bool), so a mistyped value is
reported instead of silently coerced.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, get_origin

import attrs
import cattrs
from cattrs.cols import list_structure_factory
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

T = TypeVar("T")

_CAMEL_BOUNDARY = re.compile(r"_([a-z0-9])")
_LITERAL_ERROR = re.compile(r"^(.*) not in literal (?:typing\.)?Literal\[(.*)\]$")


def camel(name: str) -> str:
    """``check_version`` -> ``checkVersion``."""
    return _CAMEL_BOUNDARY.sub(lambda m: m.group(1).upper(), name)


def _strict(kind: type, *also: type) -> Any:
    accepted = (kind, *also)

    def structure(value: Any, _: type) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got a boolean")
        if not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return kind(value)

    return structure


def _strict_union(*kinds: type) -> Any:
    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise TypeError(f"expected {names}, got {type(value).__name__}")
        return value

    return structure


def _is_list(kind: Any) -> bool:
    return kind is list or get_origin(kind) is list


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    conv.register_structure_hook(str, _strict(str))
    conv.register_structure_hook(bool, _strict(bool))
    conv.register_structure_hook(int, _strict(int))
    conv.register_structure_hook(float, _strict(float, int))
    conv.register_structure_hook(str | bool, _strict_union(str, bool))

    def structure_factory(cls: type) -> Any:
        renames: dict[str, Any] = {
            f.name: override(rename=camel(f.name)) for f in attrs.fields(cls)
        }
        return make_dict_structure_fn(cls, conv, **renames)

    def unstructure_factory(cls: type) -> Any:
        renames: dict[str, Any] = {
            f.name: override(rename=camel(f.name), omit_if_default=f.default is None)
            for f in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, conv, **renames)

    def list_factory(cls: type) -> Any:
        # cattrs would take a string as a list of its characters ("context": "abc"), and
        # then name each character's problems instead of the one real one.
        items = list_structure_factory(cls, conv)

        def structure(value: Any, kind: type) -> Any:
            if not isinstance(value, list):
                raise TypeError(f"expected an array, got {type(value).__name__}")
            return items(value, kind)

        return structure

    def object_factory(cls: type) -> Any:
        fields = structure_factory(cls)

        def structure(value: Any, kind: type) -> Any:
            if not isinstance(value, dict):
                raise TypeError(f"expected an object, got {type(value).__name__}")
            return fields(value, kind)

        return structure

    conv.register_structure_hook_factory(attrs.has, object_factory)
    conv.register_structure_hook_factory(_is_list, list_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return conv


converter = _make_converter()


def to_wire(value: Any) -> Any:
    """Unstructure an attrs value into camelCase JSON-ready data (None fields left out)."""
    return converter.unstructure(value)


def from_wire(data: Any, cls: type[T]) -> T:
    """Structure camelCase JSON into ``cls``; raises :class:`WireError` naming the bad field."""
    if attrs.has(cls) and not isinstance(data, dict):
        raise WireError(f"expected an object, got {type(data).__name__}")
    try:
        return converter.structure(data, cls)
    except Exception as exc:  # cattrs raises exception groups; flatten them into one message
        raise WireError(describe_error(exc)) from None


class WireError(ValueError):
    """JSON that does not fit the expected shape; the message names the field."""


def describe_error(exc: BaseException) -> str:
    """Turn a cattrs error into ``field: problem; other.field: problem``."""
    if isinstance(exc, (cattrs.ClassValidationError, cattrs.IterableValidationError)):
        messages = cattrs.transform_error(exc, path="", format_exception=_format_leaf)
        return "; ".join(_tidy(m) for m in messages)
    return _format_leaf(exc, None)


def _format_leaf(exc: BaseException, _type: type | None) -> str:
    if isinstance(exc, KeyError):
        return "is required"
    if isinstance(exc, TypeError) and str(exc).startswith("expected"):
        return str(exc)
    literal = _LITERAL_ERROR.match(str(exc))
    if literal:
        return f"expected one of {literal.group(2)}, got {literal.group(1)!r}"
    if isinstance(exc, ValueError):
        return str(exc)
    return f"invalid value ({exc})"


def _tidy(message: str) -> str:
    # cattrs formats "<problem> @ <path>"; we say "<path>: <problem>".
    problem, _, path = message.rpartition(" @ ")
    path = camel(path.lstrip(".")) or "params"
    return f"{path}: {problem}" if problem else message
