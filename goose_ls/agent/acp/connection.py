"""One running agent: the ACP requests goose-ls makes, with their timeouts and errors.

Every failure becomes an :class:`AgentError` with a message fit for the user. A turn
(``session/prompt``) never times out; everything else waits at most its configured time.

One short method per ACP request, each read beside the others (the same timeouts, the
same errors, the same path mapping on the way out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from acp import PROTOCOL_VERSION, Client, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.meta import AGENT_METHODS
from acp.schema import (
    AcpMcpServer,
    AuthCapabilities,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    LogoutRequest,
    LogoutResponse,
    McpServerStdio,
    PlanCapabilities,
    PromptRequest,
    SessionConfigOptionsCapabilities,
    SseMcpServer,
)
from acp.utils import request_model_from_dict
from pydantic import BaseModel

from goose_ls import __version__
from goose_ls.agent import presets, steering
from goose_ls.agent.acp.cancelling import Withdraw
from goose_ls.agent.acp.client import AcpClient
from goose_ls.agent.acp.message_transport import AgentTransport
from goose_ls.agent.acp.requests import call_agent
from goose_ls.agent.acp.unstable_updates import CARRIED_SYSTEM_PROMPT
from goose_ls.agent.interface import (
    AgentCallbacks,
    ClientTools,
    SessionOptions,
    SystemPrompt,
    model_json,
)
from goose_ls.agent.mcp import offer
from goose_ls.agent.profile import AgentProfile
from goose_ls.agent.remote_paths import content_block
from goose_ls.errors import AgentBusy, AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings
from goose_ls.workspace.path_map import NO_MAP, PathMap

T = TypeVar("T")


CLIENT = "goose-ls"
"""``_meta.client`` of ``session/new``: goose keeps a session that has one (a string; it
refuses anything else) as a user session, listed by goose Desktop, else as an acp one."""

_SDK_SERVERS: dict[str, type[HttpMcpServer | SseMcpServer | McpServerStdio]] = {
    "http": HttpMcpServer,
    "sse": SseMcpServer,
}

LIST_PAGES = 20
"""At most this many ``session/list`` pages are read (goose pages by 50)."""
ACTIVE_RUN = "already has active run"
"""What goose says refusing a prompt while the session's turn runs for another client."""


class AgentConnection:
    """Requests to one agent process (one *generation*; a restart makes a new one)."""

    def __init__(
        self,
        conn: ClientSideConnection,
        profile: AgentProfile,
        settings: AgentSettings,
        generation: int,
        gone: asyncio.Future[str],
        withdraw: Withdraw | None = None,
        directories: Callable[[], list[str]] = list,
        paths: PathMap = NO_MAP,
        client: AcpClient | None = None,
    ) -> None:
        """``directories`` are sent as ``additionalDirectories`` to an agent that takes
        them; ``paths`` spells local paths as the agent sees them (``agent.pathMap``);
        ``client`` serves the agent's requests."""
        self._conn = conn
        self._client = client
        self.profile = profile
        self._settings = settings
        self.generation = generation
        self._gone = gone
        self._withdraw = withdraw
        self._directories = directories
        self._paths = paths
        mcp = offer(
            settings.mcp_servers,
            profile.mcp_transports,
            profile.name,
            profile.version,
            settings.command + settings.args,
        )
        self._mcp_servers: list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio] = [
            _SDK_SERVERS.get(server.get("type", ""), McpServerStdio).model_validate(server)
            for server in mcp.servers
        ]
        self.mcp_warnings = mcp.warnings
        """What the user should hear about ``agent.mcpServers`` (said once by the caller)."""

    @property
    def alive(self) -> bool:
        return not self._gone.done()

    @property
    def reads_buffers(self) -> bool:
        """Whether the agent reads files through goose-ls, and so sees what the editor
        has not saved: goose-ls offers it ``fs/read_text_file`` (``agent.clientFs``) and
        the agent is known to use it (goose), or has since it started. ACP has the agent
        say nothing of it: Claude Code and codex read the disk themselves."""
        if not self._settings.client_fs:
            return False
        preset = presets.of_agent(self.profile.name)
        known = preset is not None and preset.reads_buffers
        return known or (self._client is not None and self._client.read_a_file)

    async def new_session(
        self, cwd: str, system_prompt: SystemPrompt | None = None
    ) -> tuple[str, SessionOptions]:
        response = await self._call(
            "session/new",
            self._conn.new_session(**self._set_up(cwd, system_prompt), client=CLIENT),
            self._settings.session_timeout,
        )
        return response.session_id, SessionOptions.of(response)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        point: str | int | None = None,
        system_prompt: SystemPrompt | None = None,
    ) -> tuple[str, SessionOptions]:
        """A new chat with the history of ``session_id`` (``session/fork``), cut at
        ``point`` by the agent's own extension (:attr:`AgentProfile.fork_point`): one of
        its message ids, or a time in Unix seconds; None for the whole chat. The agent
        replays nothing: the history is goose-ls's to show."""
        meta: dict[str, Any] = {}
        kind = self.profile.fork_point
        if point is not None and kind is presets.ForkPoint.AGENT_MESSAGE:
            meta["jetbrains"] = {"air": {"fork": {"version": 1, "messageId": str(point)}}}
        elif point is not None and kind is presets.ForkPoint.BEFORE_TIME:
            meta["conversationBefore"] = int(point)
        elif point is not None:
            raise AgentError(f"{self.profile.title} forks only a whole chat")
        response = await self._call(
            "session/fork",
            self._conn.fork_session(
                session_id=session_id, **self._set_up(cwd, system_prompt), **meta
            ),
            self._settings.session_timeout,
        )
        return response.session_id, SessionOptions.of(response)

    async def load_session(
        self, session_id: str, cwd: str, system_prompt: SystemPrompt | None = None
    ) -> SessionOptions:
        """Reopen a session; the agent replays its history before it answers."""
        response = await self._call(
            "session/load",
            self._conn.load_session(session_id=session_id, **self._set_up(cwd, system_prompt)),
            self._settings.session_timeout,
        )
        return SessionOptions.of(response)

    async def resume_session(
        self, session_id: str, cwd: str, system_prompt: SystemPrompt | None = None
    ) -> SessionOptions:
        """Reopen a session without its history (``sessionCapabilities.resume``)."""
        response = await self._call(
            "session/resume",
            self._conn.resume_session(session_id=session_id, **self._set_up(cwd, system_prompt)),
            self._settings.session_timeout,
        )
        return SessionOptions.of(response)

    def takes_system_prompt(self, prompt: SystemPrompt) -> bool:
        """Whether the agent takes ``prompt`` (its mode advertised): else it is not sent."""
        return prompt.mode in self.profile.system_prompt_modes

    async def authenticate(self, method_id: str) -> None:
        await self._call(
            "authenticate",
            self._conn.authenticate(method_id=method_id),
            self._settings.request_timeout,
        )

    async def list_sessions(self, cwd: str | None) -> list[dict[str, Any]]:
        """Every session the agent lists (following its pages), as ACP JSON."""
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(LIST_PAGES):
            page = await self._call(
                "session/list",
                self._conn.list_sessions(
                    cwd=None if cwd is None else self._agent_cwd(cwd), cursor=cursor
                ),
                self._settings.request_timeout,
            )
            found += [self._local_info(model_json(info)) for info in page.sessions]
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    async def rename_session(self, session_id: str, title: str) -> None:
        """Give the agent a chat's new title, where it takes one (:attr:`AgentProfile.renames`)."""
        if not self.profile.renames:
            return
        await self._call(
            "_goose-ls/rename",
            self._conn.ext_method("goose-ls/rename", {"sessionId": session_id, "title": title}),
            self._settings.request_timeout,
        )

    async def close_session(self, session_id: str) -> None:
        await self._call(
            "session/close",
            self._conn.close_session(session_id=session_id),
            self._settings.request_timeout,
        )

    async def delete_session(self, session_id: str) -> None:
        """``session/delete`` (``sessionCapabilities.delete``)."""
        request = DeleteSessionRequest(session_id=session_id)
        await self._raw("session_delete", request, DeleteSessionResponse)

    async def logout(self) -> None:
        """``logout`` (``agentCapabilities.auth.logout``)."""
        await self._raw("logout", LogoutRequest(), LogoutResponse)

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        await self._call(
            "session/set_mode",
            self._conn.set_session_mode(session_id=session_id, mode_id=mode_id),
            self._settings.request_timeout,
        )

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> list[dict[str, Any]]:
        response = await self._call(
            "session/set_config_option",
            self._conn.set_config_option(config_id=config_id, session_id=session_id, value=value),
            self._settings.request_timeout,
        )
        return [model_json(option) for option in response.config_options]

    async def prompt(
        self, session_id: str, blocks: list[dict[str, Any]]
    ) -> tuple[str, dict[str, Any] | None]:
        """Run a turn: its stop reason, and the tokens it used if the agent says (ACP's
        unstable ``usage``). No timeout: long turns are normal."""
        blocks = self._agent_blocks(blocks)
        request = PromptRequest.model_validate({"sessionId": session_id, "prompt": blocks})
        try:
            response = await self._call(
                "session/prompt",
                self._conn.prompt(session_id=session_id, prompt=request.prompt),
                None,
            )
        except AgentError as exc:
            # goose: "session already has active run `run_…`; use …/steer" (-32602).
            if exc.code == -32602 and ACTIVE_RUN in str(exc):
                raise AgentBusy(str(exc), exc.code) from exc
            raise
        usage = model_json(response.usage) if response.usage is not None else None
        if usage is not None:
            usage.pop("_meta", None)
        return str(response.stop_reason), usage

    def can_steer(self, run_id: str | None) -> bool:
        """Whether a message can be taken into the session's running turn (``run_id``:
        the agent's name for that turn, if it gave one)."""
        return steering.shape(self.profile.steering, run_id) is not None

    async def steer(
        self, session_id: str, blocks: list[dict[str, Any]], run_id: str | None
    ) -> bool:
        """Take ``blocks`` into the session's running turn (see :mod:`goose_ls.agent.steering`): True
        when the agent did, False when the turn was over and they are to be sent as a
        prompt. Raises :class:`AgentError` when the agent cannot or would not."""
        kind = steering.shape(self.profile.steering, run_id)
        if kind is None:
            raise AgentError(f"{self.profile.name} cannot take a message into a running turn")
        blocks = self._agent_blocks(blocks)
        method, params = steering.request(kind, session_id, blocks, run_id)
        answer = await self._call(
            f"_{method}", self._conn.ext_method(method, params), self._settings.request_timeout
        )
        outcome = steering.taken(kind, answer)
        if isinstance(outcome, str):
            raise AgentError(f"the message could not join the running turn: {outcome}")
        return outcome

    async def cancel(self, session_id: str) -> None:
        """Send the ``session/cancel`` notification (never a request: goose rejects that)."""
        await self._call("session/cancel", self._conn.cancel(session_id=session_id), 5.0)

    def _set_up(self, cwd: str, system_prompt: SystemPrompt | None = None) -> dict[str, Any]:
        """What every session set-up request carries: where, which MCP servers, the
        other folders, and the system prompt for an agent that takes it (in ``_meta``
        through the SDK, which has no field for it; the transport moves it to its place,
        see :func:`~goose_ls.agent.acp.unstable_updates.lift_system_prompt`)."""
        set_up: dict[str, Any] = {
            "cwd": self._agent_cwd(cwd),
            "mcp_servers": self._mcp_servers,
            "additional_directories": self._additional_directories(),
        }
        prompt = system_prompt
        if prompt is not None and prompt.texts and self.takes_system_prompt(prompt):
            set_up[CARRIED_SYSTEM_PROMPT] = prompt.wire()
        return set_up

    def _agent_blocks(self, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Content blocks with their paths as the agent names them (``agent.pathMap``)."""
        if not self._paths:
            return blocks
        return [content_block(block, self._paths.to_agent) for block in blocks]

    def agent_path(self, local: str) -> str:
        """A local path as the agent names it (as it is when the agent cannot see it)."""
        return (self._paths.to_agent(local) if self._paths else None) or local

    def _agent_cwd(self, cwd: str) -> str:
        """Where a session runs, as the agent names it; a folder it cannot see is an error."""
        if not self._paths:
            return cwd
        mapped = self._paths.to_agent(cwd)
        if mapped is None:
            raise AgentError(
                f"{cwd} is in no folder agent.pathMap maps, so the agent cannot work there",
                fix="Add the folder (or one holding it) to agent.pathMap, then restart the agent",
            )
        return mapped

    def _local_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """A ``session/list`` entry with its ``cwd`` as goose-ls names it."""
        cwd = info.get("cwd")
        if self._paths and isinstance(cwd, str):
            return {**info, "cwd": self._paths.to_local(cwd) or cwd}
        return info

    async def _raw(self, name: str, params: BaseModel, answer: type[BaseModel]) -> None:
        """A request the SDK's connection has no method for (0.12.1: ``session/delete``,
        ``logout``), sent on its JSON-RPC connection: its ``ext_method`` would prefix
        the name with ``_``."""
        method = AGENT_METHODS[name]
        rpc = self._conn._conn  # noqa: SLF001 (the SDK's one generic request path; contract-tested)
        request = request_model_from_dict(rpc, method, params, answer)
        await self._call(method, request, self._settings.request_timeout)

    def _additional_directories(self) -> list[str] | None:
        """The other folders the agent may use, for an agent that takes them (None: the
        field is left out, as ACP asks of a client talking to one that does not)."""
        if not self.profile.session_capability("additional_directories"):
            return None
        return self._directories() or None

    async def _call(self, method: str, request: Awaitable[T], timeout: float | None) -> T:
        return await call_agent(method, request, timeout, self._gone, self._withdraw)


def connect(
    transport: AgentTransport, callbacks: AgentCallbacks, tools: ClientTools
) -> tuple[ClientSideConnection, AcpClient]:
    """The SDK's connection over the agent's pipes, through goose-ls's transport, and
    what serves the agent's requests on it."""
    # AcpClient implements the part of the SDK's Client that goose-ls advertises.
    client = AcpClient(callbacks, tools, transport.serving)
    # The SDK routes elicitation/create (stable in ACP since 1.7.0) only under its unstable
    # switch; no other request of an agent to its client is behind it.
    conn = connect_to_agent(cast("Client", client), transport, use_unstable_protocol=True)
    return conn, client


async def handshake(
    conn: ClientSideConnection,
    settings: AgentSettings,
    generation: int,
    gone: asyncio.Future[str],
    withdraw: Withdraw | None = None,
    directories: Callable[[], list[str]] = list,
    paths: PathMap = NO_MAP,
    client: AcpClient | None = None,
) -> AgentConnection:
    """``initialize``: say what goose-ls offers, learn what the agent does. goose-ls asks
    for ACP version 1; an agent that speaks only a later one is unusable, said so."""
    try:
        response = await _initialize(conn, settings, gone, withdraw)
    except AgentError as exc:
        if exc.code == UNSUPPORTED_VERSION:
            raise _version_refused("refused ACP version 1 (it speaks a later one only)") from exc
        raise
    if response.protocol_version != PROTOCOL_VERSION:
        raise _version_refused(f"answered ACP version {response.protocol_version}")
    return AgentConnection(
        conn,
        AgentProfile(response),
        settings,
        generation,
        gone,
        withdraw,
        directories,
        paths,
        client,
    )


UNSUPPORTED_VERSION = -32022
"""ACP's error for a protocol version the agent does not speak (v2: "Unsupported protocol
version", with the versions it does)."""


def _version_refused(what: str) -> AgentUnavailable:
    return AgentUnavailable(
        "unusable",
        f"the agent {what}; goose-ls speaks ACP version 1",
        "Run a version of the agent that speaks ACP version 1 (claude-agent-acp: leave "
        "CLAUDE_AGENT_ACP_PROTOCOL unset or set it to v1).",
    )


async def _initialize(
    conn: ClientSideConnection,
    settings: AgentSettings,
    gone: asyncio.Future[str],
    withdraw: Withdraw | None,
) -> InitializeResponse:
    return await call_agent(
        "initialize",
        conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(
                    read_text_file=settings.client_fs, write_text_file=settings.client_fs
                ),
                terminal=settings.client_terminal,
                plan=PlanCapabilities(),  # plans by id: shown side by side, removed
                auth=AuthCapabilities(terminal=True),
                # Questions to the user: forms (goose-ls checks the answer), and pages.
                elicitation=ElicitationCapabilities(
                    form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
                ),
                # Boolean config options are shown and toggled like select ones.
                session=ClientSessionCapabilities(
                    config_options=SessionConfigOptionsCapabilities(
                        boolean=BooleanConfigOptionCapabilities()
                    )
                ),
            ),
            client_info=Implementation(name="goose-ls", title="goose-ls", version=__version__),
        ),
        settings.request_timeout,
        gone,
        withdraw,
    )
