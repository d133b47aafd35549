"""The arguments of the goose.* commands: typed, positional, checked like goose/* params.

Commands get their arguments as a JSON array. Each command names a class here whose
fields, in order, are its arguments; :func:`parse_arguments` structures the array with
the same converter as goose/* params, so a wrong argument gets InvalidParams naming it:
``goose.renameSession: argument 2 (title): expected str, got int``.

Helix types selections as a path and two 1-based line numbers
(``"%{buffer_name}" %{selection_line_start} %{selection_line_end}``); code actions send a
URI and an LSP range. :func:`lsp_range` folds the first form into the second.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import attrs
from pygls.exceptions import JsonRpcInvalidParams

from goose_ls.events import Json
from goose_ls.lsp.positions import Range
from goose_ls.wire import WireError, camel, from_wire

T = TypeVar("T")


def lsp_range(arguments: list[Any]) -> list[Any]:
    """``[file, first, last, ...]`` (Helix, 1-based lines) as ``[file, range, ...]``."""
    if len(arguments) < 2 or isinstance(arguments[1], dict):
        return arguments
    numbers = [a for a in arguments[1:3] if isinstance(a, int) and not isinstance(a, bool)]
    if not numbers or numbers != arguments[1 : 1 + len(numbers)]:
        return arguments  # not line numbers: leave it to the checks to say what is wrong
    first = max(1, numbers[0])
    last = max(first, numbers[-1])
    line_range = {"start": {"line": first - 1}, "end": {"line": last, "character": 0}}
    return [arguments[0], line_range, *arguments[1 + len(numbers) :]]


def _file_problem(value: str | None, number: int, name: str) -> str | None:
    """A file argument no file can have: empty, or with a NUL byte."""
    if value is None:
        return None
    if not value:
        return f"argument {number} ({name}): must not be empty"
    if "\0" in value:
        return f"argument {number} ({name}): contains a NUL byte"
    return None


@attrs.frozen
class NoArguments:
    pass


@attrs.frozen
class FileArguments:
    file: str
    """A file URI, or a path (absolute, ``~/``, or relative to the workspace)."""

    def problem(self) -> str | None:
        return _file_problem(self.file, 1, "file")


@attrs.frozen
class ChatArguments:
    transcript: str | None = None
    """A transcript's URI or path; the current chat's when left out."""

    def problem(self) -> str | None:
        return _file_problem(self.transcript or None, 1, "transcript")


@attrs.frozen
class SelectionArguments:
    file: str
    range: Range

    def problem(self) -> str | None:
        return _file_problem(self.file, 1, "file") or self.range.problem()


@attrs.frozen
class FixArguments:
    file: str
    range: Range
    diagnostics: list[Json] = attrs.Factory(list)
    """The code action's diagnostics: ``{line, message, source, code}`` each."""

    def problem(self) -> str | None:
        return SelectionArguments(self.file, self.range).problem()


@attrs.frozen
class SessionArguments:
    session_id: str

    def problem(self) -> str | None:
        return None if self.session_id else "argument 1 (sessionId): must not be empty"


@attrs.frozen
class ExportArguments:
    session_id: str | None = None
    """The chat to export; the current chat when left out or null."""
    path: str | None = None
    """Where to write it, inside the workspace; ``goose-chat-<title>-<date>.md`` there
    when left out."""

    def problem(self) -> str | None:
        if self.session_id == "":
            return "argument 1 (sessionId): must not be empty"
        return _file_problem(self.path, 2, "path")


@attrs.frozen
class TrustArguments:
    digest: str
    """The SHA-256 of the workspace policy file as offered: a changed file is not trusted."""

    def problem(self) -> str | None:
        return None if self.digest else "argument 1 (digest): must not be empty"


@attrs.frozen
class ForkArguments:
    session_id: str
    message_id: str
    """The turn the new chat goes on from (its history ends with it)."""

    def problem(self) -> str | None:
        if not self.session_id:
            return "argument 1 (sessionId): must not be empty"
        return None if self.message_id else "argument 2 (messageId): must not be empty"


@attrs.frozen
class RenameArguments:
    session_id: str
    title: str


@attrs.frozen
class ModeArguments:
    session_id: str
    mode_id: str


@attrs.frozen
class OptionArguments:
    session_id: str
    config_id: str
    value: str | bool


@attrs.frozen
class PermissionArguments:
    """``[requestId, optionId]``, or just an option kind for the oldest waiting request."""

    request_or_kind: str
    option_id: str | None = None


@attrs.frozen
class QuestionArguments:
    """``[requestId, action]``: a plugin-free editor can decline or cancel a question,
    and open the page a URL question asks for (which accepts it once shown)."""

    request_id: str
    action: Literal["decline", "cancel", "open"] = "decline"


def parse_arguments(command: str, arguments: list[Any], cls: type[T]) -> T:
    """Structure positional ``arguments`` into ``cls``, or raise InvalidParams naming one."""
    fields = attrs.fields(cls)  # type: ignore[arg-type]
    if len(arguments) > len(fields):
        raise JsonRpcInvalidParams(
            f"{command}: takes at most {len(fields)} argument(s), got {len(arguments)}"
        )
    named = {camel(field.name): value for field, value in zip(fields, arguments, strict=False)}
    try:
        value = from_wire(named, cls)
    except WireError as exc:
        raise JsonRpcInvalidParams(f"{command}: {_positional(str(exc), fields)}") from None
    check = getattr(value, "problem", None)
    if check is not None and (problem := check()):
        raise JsonRpcInvalidParams(f"{command}: {problem}")
    return value


def _positional(message: str, fields: Any) -> str:
    """``title: expected str`` as ``argument 2 (title): expected str``, for each problem."""
    numbers = {camel(field.name): number for number, field in enumerate(fields, start=1)}
    parts = []
    for part in message.split("; "):
        name = part.split(":", 1)[0].split(".", 1)[0]
        if name in numbers:
            part = f"argument {numbers[name]} ({name}){part[len(name) :]}"
        parts.append(part)
    return "; ".join(parts)
