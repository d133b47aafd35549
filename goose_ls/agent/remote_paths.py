"""``agent.pathMap`` applied where paths cross between goose-ls and the agent.

Everything above the agent layer speaks local paths. Going to the agent, a local path is
spelt as the agent sees it: a session's ``cwd``, ``additionalDirectories``, the URIs of a
prompt's resource links and embedded resources (:class:`AgentConnection` maps those).
Coming from it, an agent path is spelt as goose-ls sees it: what ``fs/*`` and
``terminal/create`` name (refused when it lies in no mapped folder: goose-ls serves no
file the map does not name), and what updates and permission requests report (tool-call
``locations``, diff ``path``, ``rawInput`` paths, resource URIs in messages; kept as the
agent wrote them when unmapped, as they would be without a map, since they name files on
the agent's side). Text is never rewritten, nor a terminal's command line.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from goose_ls import events
from goose_ls.agent.interface import AgentCallbacks, ClientRefusal, ClientTools
from goose_ls.workspace import targets
from goose_ls.workspace.agent_sandbox import Bounds
from goose_ls.workspace.path_map import Convert, PathMap, map_uri

Call = TypeVar("Call", bound="events.ToolCall | events.ToolCallUpdate")


def _path(path: str, convert: Convert) -> str:
    """``path`` converted, or as it was when it maps nowhere (see the module's doc)."""
    return convert(path) or path


def content_block(block: events.Json, convert: Convert) -> events.Json:
    """A content block with its resource URI converted (other blocks unchanged)."""
    kind = block.get("type")
    if kind == "resource_link" and isinstance(uri := block.get("uri"), str):
        return {**block, "uri": map_uri(uri, convert) or uri}
    resource = block.get("resource")
    if kind == "resource" and isinstance(resource, dict) and isinstance(resource.get("uri"), str):
        uri = resource["uri"]
        return {**block, "resource": {**resource, "uri": map_uri(uri, convert) or uri}}
    return block


def _tool_content(item: events.Json, convert: Convert) -> events.Json:
    if item.get("type") == "diff" and isinstance(item.get("path"), str):
        return {**item, "path": _path(item["path"], convert)}
    if item.get("type") == "content" and isinstance(item.get("content"), dict):
        return {**item, "content": content_block(item["content"], convert)}
    return item


def _raw_input(raw: Any, convert: Convert) -> Any:
    """``rawInput`` with the paths the policy reads from it converted (see
    :mod:`goose_ls.workspace.targets`)."""
    return targets.map_raw_paths(raw, lambda path: _path(path, convert))


def _location(location: events.Json, convert: Convert) -> events.Json:
    if isinstance(path := location.get("path"), str):
        return {**location, "path": _path(path, convert)}
    return location


def tool_call(call: Call, convert: Convert) -> Call:
    """A tool call's reported paths converted."""
    content, locations = call.content, call.locations
    return attrs.evolve(
        call,
        content=None if content is None else [_tool_content(i, convert) for i in content],
        locations=None if locations is None else [_location(i, convert) for i in locations],
        raw_input=_raw_input(call.raw_input, convert),
    )


def foreign_paths(call: events.ToolCall | events.ToolCallUpdate, convert: Convert) -> list[str]:
    """The paths a tool call reports that map nowhere: files on the agent's side only."""
    reported = [i.get("path") for i in call.locations or []]
    reported += [i.get("path") for i in call.content or [] if i.get("type") == "diff"]
    reported += targets.raw_paths(call.raw_input)
    return [path for path in reported if isinstance(path, str) and convert(path) is None]


def event(update: events.SessionEvent, convert: Convert) -> events.SessionEvent:
    """A session update's reported paths converted (messages' resources, tool calls)."""
    if isinstance(update, events.CHUNKS):
        if update.content.get("type") in ("resource_link", "resource"):
            return attrs.evolve(update, content=content_block(update.content, convert))
        return update
    if isinstance(update, (events.ToolCall, events.ToolCallUpdate)):
        return tool_call(update, convert)
    return update


ForeignPaths = dict[tuple[str, str], tuple[str, ...]]
"""Per session and tool call, the paths it ever named that map nowhere. Kept by the
supervisor across connections, as the sessions keep their tool calls: neither an update
nor a reconnection can take back what a card must say (an update's fields replace
earlier ones in the call goose-ls keeps, and the policy judges that)."""


class MappedCallbacks:
    """The upper layers' callbacks, given local paths."""

    def __init__(self, callbacks: AgentCallbacks, paths: PathMap, foreign: ForeignPaths) -> None:
        self._callbacks = callbacks
        self._paths = paths
        self._foreign = foreign

    def session_event(self, session_id: str, update: events.SessionEvent) -> None:
        if isinstance(update, (events.ToolCall, events.ToolCallUpdate)):
            self._note_foreign(session_id, update)
        self._callbacks.session_event(session_id, event(update, self._paths.to_local))

    async def request_permission(
        self,
        session_id: str,
        call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        foreign: tuple[str, ...] = (),
    ) -> str | None:
        """Asked with local paths; an unmapped path is kept as the agent wrote it (it
        names the agent's file, which may be spelt as a local one), and is ``foreign``:
        no rule or earlier grant allows the call, the user is asked."""
        found = self._note_foreign(session_id, call)
        local = tool_call(call, self._paths.to_local)
        return await self._callbacks.request_permission(
            session_id, local, options, foreign=(*foreign, *found)
        )

    def _note_foreign(
        self, session_id: str, call: events.ToolCall | events.ToolCallUpdate
    ) -> tuple[str, ...]:
        key = (session_id, call.tool_call_id)
        found = self._foreign.get(key, ())
        if more := [p for p in foreign_paths(call, self._paths.to_local) if p not in found]:
            found = self._foreign[key] = (*found, *more)
        return found

    async def elicit(
        self,
        session_id: str,
        message: str,
        schema: dict[str, Any] | None,
        url: str | None,
        tool_call_id: str | None = None,
    ) -> tuple[events.ElicitationAction, dict[str, Any] | None]:
        return await self._callbacks.elicit(session_id, message, schema, url, tool_call_id)

    def warning(self, message: str) -> None:
        self._callbacks.warning(message)


class MappedTools:
    """The upper layers' file and terminal tools, asked with local paths only."""

    def __init__(self, tools: ClientTools, paths: PathMap) -> None:
        self._tools = tools
        self._paths = paths

    def directories(self) -> list[str]:
        """The other folders the agent can see, as it sees them (the rest it cannot)."""
        mapped = (self._paths.to_agent(folder) for folder in self._tools.directories())
        return [folder for folder in mapped if folder is not None]

    def refusal(self, session_id: str, action: str, path: str, why: str) -> ClientRefusal:
        return self._tools.refusal(session_id, action, path, why)

    async def sandbox_bounds(self) -> Bounds:
        return await self._tools.sandbox_bounds()  # the process runs here: local paths

    def _local(self, session_id: str, path: str, action: str) -> str:
        local = self._paths.to_local(path)
        if local is None:
            roots = ", ".join(self._paths.agent_roots())
            why = f"{path} is in no folder agent.pathMap maps ({roots})"
            raise self._tools.refusal(session_id, action, path, why)
        return local

    async def read_text_file(
        self, session_id: str, path: str, line: int | None, limit: int | None
    ) -> str:
        local = self._local(session_id, path, f"read {path}")
        return await self._tools.read_text_file(session_id, local, line, limit)

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        local = self._local(session_id, path, f"write {path}")
        await self._tools.write_text_file(session_id, local, content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        """In the local folder ``cwd`` maps to (the command line is the agent's, as sent)."""
        local = None if cwd is None else self._local(session_id, cwd, f"run `{command}` in {cwd}")
        return await self._tools.create_terminal(
            session_id, command, args, env, local, output_byte_limit
        )

    async def terminal_output(
        self, session_id: str, terminal_id: str
    ) -> tuple[str, bool, tuple[int | None, str | None] | None]:
        return await self._tools.terminal_output(session_id, terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str
    ) -> tuple[int | None, str | None]:
        return await self._tools.wait_for_terminal_exit(session_id, terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._tools.kill_terminal(session_id, terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._tools.release_terminal(session_id, terminal_id)


def mapped(
    callbacks: AgentCallbacks, tools: ClientTools, paths: PathMap, foreign: ForeignPaths
) -> tuple[AgentCallbacks, ClientTools]:
    """The callbacks and tools an agent with ``paths`` is served by (as they are without
    a map), noting ``foreign`` paths."""
    if not paths:
        return callbacks, tools
    return MappedCallbacks(callbacks, paths, foreign), MappedTools(tools, paths)
