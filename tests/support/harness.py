"""The test harness: a real goose-ls process, and an editor speaking LSP to it.

The editor is a pytest-lsp client; what it receives of the goose/* protocol is kept by a
:class:`~support.editor.GooseRecorder`. Each :class:`Editor` has its own
workspace, data dir, log dir and scripted agent. This module imports pytest-lsp (the
``test`` extra); the scripted agent it starts (:mod:`goose_ls.scripted`) does not, so the
demo runs without it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import os
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from goose_ls.scripted.script import AGENT_KEYS, scripted_agent_command, write_script
from goose_ls.tasks import within
from support.conformance import schema_errors
from support.editor import GooseRecorder
from support.logs import LogWatch

SERVER_COMMAND = [sys.executable, "-m", "goose_ls", "--log-level", "info"]
"""goose-ls as an editor starts it."""

Test = TypeVar("Test", bound=Callable[..., Any])

EDITOR = "neovim@v0.11.0"
"""The editor ``Editor.start`` initializes as, unless told."""

converter = get_converter()
"""lsprotocol's, to compare what editors send as JSON."""


class Editor:
    """One editor session against one goose-ls process."""

    def __init__(self, client: LanguageClient, tmp_path: Path) -> None:
        self.client = client
        self.goose = GooseRecorder(client)
        self.tmp = tmp_path
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.record = tmp_path / "agent-received.jsonl"
        self.log = LogWatch(tmp_path / "logs")
        """goose-ls's log, and the tracebacks in it that are failures."""
        self.capabilities: types.ServerCapabilities | None = None
        """What goose-ls answered to ``initialize``."""

    def script(self, script: dict[str, Any]) -> list[str]:
        """Write ``script`` (recording what the agent receives) and return its command."""
        defaults = {"record": str(self.record), "sessionsFile": str(self.tmp / "agent-sessions")}
        for made in (self.record, self.tmp / "agent-sessions"):
            made.touch()  # there before the agent: a Landlock sandbox lets it write no new file here
        path = write_script(self.tmp / "script.json", {**defaults, **script})
        return scripted_agent_command(path)

    async def start(
        self,
        script: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        editor: str | types.ClientCapabilities = EDITOR,
        folders: list[Path] | None = None,
        name: str | None = None,
    ) -> None:
        """``folders``: workspace folders the editor has open besides the workspace;
        ``name``: the editor's ``clientInfo.name`` (``code-server``, ``helix``...)."""
        # goose/update from the start (a plugin's flag): tests read what a turn streamed
        # even when they drive it as an editor without a plugin does.
        options: dict[str, Any] = {"dataDir": str(self.tmp / "data"), "gooseUpdates": True}
        if script is not None:
            options["agent"] = {"command": self.script(script)}
        for key, value in (settings or {}).items():
            if isinstance(value, dict) and isinstance(options.get(key), dict):
                options[key] = {**options[key], **value}
            else:
                options[key] = value
        result = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(editor) if isinstance(editor, str) else editor,
                root_uri=self.workspace.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)
                    for folder in [self.workspace, *(folders or [])]
                ],
                initialization_options=options,
                client_info=types.ClientInfo(name=name) if name is not None else None,
            )
        )
        self.capabilities = result.capabilities

    async def new_session(self) -> str:
        result = await self.goose.request("goose/newSession", {})
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str = "hello", **extra: Any) -> str:
        message_id = str(uuid.uuid4())
        await self.goose.request(
            "goose/prompt",
            {"sessionId": session_id, "messageId": message_id, "prompt": text, **extra},
        )
        return message_id

    async def shown(self, text: str) -> str:
        """Wait for a window/showMessage containing ``text``; return the message."""
        found = await self.goose.wait_for(
            lambda: [m.message for m in self.client.messages if text in m.message],
            what=f"a message saying {text!r}",
        )
        return str(found[0])

    async def code_actions(self, uri: str, line: int) -> dict[str, types.CodeAction]:
        """The code actions on ``line`` of ``uri``, by title."""
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(line, 0), end=types.Position(line, 0)),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return {a.title: a for a in result or [] if isinstance(a, types.CodeAction)}

    async def run(self, action: types.CodeAction) -> None:
        """Run a code action's command, as the editor does when it is picked."""
        assert action.command is not None, action.title
        await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments
            )
        )

    async def transcript_path(self, session_id: str | None = None) -> Path:
        """The transcript file of the chat ``session_id`` (else of the one chat open)."""
        sessions = (await self.goose.request("goose/status", {}))["sessions"]
        (summary,) = [s for s in sessions if session_id in (None, s["sessionId"])]
        return Path(summary["transcript"].removeprefix("file://"))

    async def transcript_text(
        self, has: str = "", session_id: str | None = None, path: Path | None = None
    ) -> str:
        """The text of a chat's transcript file (``path``, else the one of ``session_id``
        or of the one chat open) once it holds ``has``."""
        where = path or await self.transcript_path(session_id)
        text: str = await self.goose.wait_for(
            lambda: (
                t if where.exists() and has in (t := where.read_text(encoding="utf-8")) else None
            ),
            what=f"{has!r} in the transcript",
        )
        return text

    async def new_chat_from_here(self, uri: str, line: int) -> str:
        """Run **Goose: New chat from here** (offered where the agent cannot fork, and
        Fork chat here is not) on ``line`` of the transcript at ``uri``: the URI of the
        new chat goose-ls shows."""
        actions = await self.code_actions(uri, line)
        (title,) = [title for title in actions if "New chat from here" in title]
        assert "cannot fork" in title and "Goose: Fork chat here" not in actions
        await self.run(actions[title])
        shown: list[str] = await self.goose.wait_for(
            lambda: [d.uri for d in self.client.shown_documents if d.uri != uri] or None,
            what="the new chat shown",
        )
        return shown[-1]

    async def explain_and_open(self, buffers: Any) -> str:
        """Open ``app.py`` (``x = 1``) in ``buffers``, run **Goose: Explain selection** on
        its first line, and open the chat goose-ls shows, as an editor does: its URI."""
        code = self.workspace / "app.py"
        code.write_text("x = 1\n")
        buffers.open(code.as_uri(), language="python")
        await self.run((await self.code_actions(code.as_uri(), 0))["Goose: Explain selection"])
        shown = await self.goose.wait_for(lambda: self.client.shown_documents, what="the chat")
        uri: str = shown[0].uri
        buffers.open(uri)
        return uri

    def received(self, method: str) -> list[dict[str, Any]]:
        """Messages with ``method`` that the scripted agent received."""
        return [m for m in self.agent_messages() if m.get("method") == method]

    def agent_messages(self) -> list[dict[str, Any]]:
        """Everything the scripted agent received, requests, notifications and answers."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]


class SharedEditor(Editor):
    """One goose-ls and one scripted agent for the tests of a module that differ only in
    their script: each test's :meth:`start` hands the agent its script for the chats it
    makes from then on (the agent's ``chatScripts``). A test sees only its own: what
    goose-ls sent since it began, of its own chats, and what the agent received and
    goose-ls audited since (the record and the audit log start afresh). The documents it
    opened are closed and the client handlers it set are dropped when it ends."""

    def __init__(self, client: LanguageClient, tmp_path: Path, group: SharedGroup) -> None:
        super().__init__(client, tmp_path)
        self.group = group
        self.scripts = tmp_path / "chat-scripts"
        self.scripts.mkdir()
        self.taken = 0
        """Scripts handed to the agent so far."""
        self.before: set[str] = set()
        """The sessions goose-ls had when the current test began."""
        self.opened: set[str] = set()
        """The documents the client has open."""
        self.handlers: dict[str, Any] = {}
        """The client's request and notification handlers, as the group opened."""

    async def open(self) -> None:
        """Initialize goose-ls as ``Editor.start`` does, with the group's settings and
        editor, and an agent that takes its scripts from :attr:`scripts`."""
        notify = self.client.protocol.notify

        def noting(method: str, params: Any = None) -> None:
            # What a test opens, through any helper, is closed when it ends.
            if method == types.TEXT_DOCUMENT_DID_OPEN:
                self.opened.add(params.text_document.uri)
            elif method == types.TEXT_DOCUMENT_DID_CLOSE:
                self.opened.discard(params.text_document.uri)
            notify(method, params)

        self.client.protocol.notify = noting  # type: ignore[method-assign]
        agent = {**self.group.agent, "chatScripts": str(self.scripts)}
        await super().start(agent, self.group.settings, self.group.editor)
        self.handlers = dict(self.client.protocol.fm.features)

    async def start(
        self,
        script: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        editor: str | types.ClientCapabilities = EDITOR,
        folders: list[Path] | None = None,
        name: str | None = None,
    ) -> None:
        """The agent plays ``script`` (none: it echoes) for the chats made from now on,
        as a fresh one would. Settings, the editor and the agent's start-only keys were
        fixed at its start: those of the test's group (its ``shared_with`` mark); given
        here, they must be those."""
        script = dict(script or {})
        own = {key: script.pop(key) for key in AGENT_KEYS & script.keys()}
        given = SharedGroup(
            settings or self.group.settings,
            self.group.editor if editor == EDITOR else editor,
            {**self.group.agent, **own},
        )
        assert (given, folders, name) == (self.group, None, None), (
            "settings, an editor or agent keys not the group's: mark the test `shared_with` them"
        )
        self.taken += 1
        written = write_script(self.scripts / f"{self.taken:06}.part", script)
        written.rename(written.with_suffix(".json"))  # whole, or not there

    async def chat(self, script: dict[str, Any] | None = None) -> str:
        """A new chat whose agent plays ``script``: its session id."""
        await self.start(script)
        return await self.new_session()

    async def sessions(self) -> set[str]:
        status = await self.goose.request("goose/status", {})
        return {s["sessionId"] for s in status["sessions"]}

    async def begin(self) -> None:
        """Forget what earlier tests received and made."""
        self.before = await self.sessions()
        self.goose.ignored |= self.before
        self.goose.forget()
        for kept in (self.client.messages, self.client.log_messages, self.client.shown_documents):
            kept.clear()
        self.client.diagnostics.clear()
        self.client.progress_reports.clear()
        for record in (self.record, self.record.with_suffix(".sent.jsonl")):
            record.write_bytes(b"")  # the agent appends to it as it did
        audit = self.tmp / "data" / "audit.log"
        if audit.exists():
            audit.write_bytes(b"")  # goose-ls appends each record (O_APPEND) as it did

    async def end(self) -> None:
        """Close the test's documents and chats (their running turns end cancelled),
        check what the agent was sent, delete every chat goose-ls keeps, and leave the
        workspace and the client's handlers as they were."""
        for uri in sorted(self.opened):
            self.client.text_document_did_close(
                types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
        closed = await self.sessions() - self.before
        for session_id in closed:
            await self.goose.request("goose/closeSession", {"sessionId": session_id})
        if self.group.closes():  # then all goose-ls sent before it is in the record
            await self.goose.wait_for(
                lambda: (
                    closed <= {m["params"]["sessionId"] for m in self.received("session/close")}
                ),
                what="the agent to hear its chats closed",
            )
        self.goose.ignored |= await self.sessions() | {u["sessionId"] for u in self.goose.arrived}
        refused = schema_errors(self.record)
        assert not refused, "goose-ls sent its agent what ACP refuses:\n" + "\n".join(refused)
        # Deleted, the chats leave no "last chat" for the next test to resume.
        for listed in (await self.goose.request("goose/listSessions", {}))["sessions"]:
            if listed["source"] != "agent":
                await self.goose.request("goose/deleteSession", {"sessionId": listed["sessionId"]})
        features = self.client.protocol.fm.features
        features.clear()
        features.update(self.handlers)
        for entry in self.workspace.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


@dataclasses.dataclass
class SharedGroup:
    """What the tests sharing one goose-ls have in common: its settings, the editor it
    was initialized by, and the agent's start-only keys (``AGENT_KEYS``)."""

    settings: dict[str, Any] | None = None
    editor: str | types.ClientCapabilities = EDITOR
    agent: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.editor, str):  # as pytest-lsp names them: one group either way
            self.editor = client_capabilities(self.editor)

    def closes(self) -> bool:
        """Whether the agent advertises ``session/close`` (the scripted agent does, unless
        given capabilities without it)."""
        capabilities = self.agent.get("capabilities", {"sessionCapabilities": {"close": {}}})
        return "close" in capabilities.get("sessionCapabilities", {})

    def key(self) -> str:
        editor = converter.unstructure(self.editor)
        return json.dumps([self.settings, editor, self.agent], sort_keys=True)


def shared_with(
    settings: dict[str, Any] | None = None,
    editor: str | types.ClientCapabilities = EDITOR,
    agent: dict[str, Any] | None = None,
) -> pytest.MarkDecorator:
    """Mark a test of a sharing module that needs goose-ls started with ``settings``, as
    ``editor``, or its agent with start-only keys (``agentInfo``, ``capabilities``...):
    its ``shared`` goose-ls is the module's one for that group, started by the first test
    that asks (:class:`SharedPool`). On a ``pytest.param``, a parameter's group."""
    own = sorted((agent or {}).keys() - AGENT_KEYS)
    assert not own, f"{own} are a chat's script, not the agent's start"
    return pytest.mark.shared_with(SharedGroup(settings, editor, dict(agent or {})))


class SharedPool:
    """The goose-ls of each group of a module's sharing tests, started when first asked
    for; each must still serve a turn when the module is done."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.servers: dict[str, SharedEditor] = {}

    async def get(self, group: SharedGroup) -> SharedEditor:
        key = group.key()
        if key not in self.servers:
            tmp = self.tmp_path_factory.mktemp("shared-goose")
            shared = SharedEditor(await _start_client(tmp, SERVER_COMMAND, {}), tmp, group)
            self.servers[key] = shared
            await shared.open()
        return self.servers[key]

    async def close(self) -> None:
        failures = []
        for shared in self.servers.values():
            try:
                await shared.begin()
                session_id = await shared.chat({"turns": [[{"text": "ok"}]]})
                end = await shared.goose.turn_end(await shared.prompt(session_id, "still there?"))
                assert end["stopReason"] == "end_turn", "after all that, the server still works"
            except Exception as failure:  # the others are stopped all the same
                failures.append(failure)
            finally:
                await stop_editor(shared)
        if failures:
            raise failures[0]


def shared_agent(module: str) -> pytest.MarkDecorator:
    """``pytestmark = shared_agent(__name__)`` in a module whose tests use the ``shared``
    fixture (one goose-ls and agent for the tests of each group: :func:`shared_with`):
    they run in the module's event loop, where those servers' clients live. (The
    conftest sends such a module's tests to one xdist worker, which starts each once.)"""
    del module  # spelled in the module so that the conftest finds it
    return pytest.mark.asyncio(loop_scope="module")


CHECKOUT = Path(__file__).resolve().parents[2]
"""The source the scripted agent and the wiretap import (an editable install)."""


AGENTS = Path(os.environ.get("GOOSE_LS_AGENTS", Path.home() / ".cache" / "goose-ls" / "agents"))
"""Where scripts/fetch-agents.sh puts the real agents the tests run."""


def sandbox_env(
    writable: list[Path], readable: tuple[Path, ...] = (CHECKOUT, AGENTS)
) -> dict[str, str]:
    """The agent's sandbox in tests: as a user's, with what the test's arrangement needs
    besides (this checkout, which the scripted agent and the wiretap import; the
    fetched agents, which the wiretap runs; the test's scripts and records)."""
    return {
        "GOOSE_LS_AGENT_SANDBOX_WRITABLE": json.dumps([str(p) for p in writable]),
        "GOOSE_LS_AGENT_SANDBOX_READABLE": json.dumps([str(p) for p in readable]),
    }


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """goose-ls's environment: logs, XDG dirs and a ``bin`` on PATH, all under
    ``tmp_path``, and the agent's sandbox (:func:`sandbox_env`: the test's folder is
    writable; a test of the sandbox itself narrows it)."""
    env = {
        **os.environ,
        "GOOSE_LS_LOG_DIR": str(tmp_path / "logs"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        # Tests that need a goose on PATH put a fake one here.
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        **sandbox_env([tmp_path]),
    }
    env.update(extra)
    return env


async def start_editor(
    tmp_path: Path, server_command: list[str] = SERVER_COMMAND, **env: str
) -> Editor:
    """A goose-ls process started by ``server_command`` (with ``env`` added to its
    environment) and an LSP client speaking to it."""
    return Editor(await _start_client(tmp_path, server_command, env), tmp_path)


async def _start_client(
    tmp_path: Path, server_command: list[str], env: dict[str, str]
) -> LanguageClient:
    config = ClientServerConfig(
        server_command=server_command, server_env=server_env(tmp_path, **env)
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    return client


EXIT_WITHIN = 30.0
"""Seconds goose-ls may take to exit after ``shutdown`` and ``exit``."""


async def stop_editor(editor: Editor) -> None:
    """Shut the server down the way an editor does, unless it has already stopped.

    A server still running after that (never initialized, or its connection broken) is
    stopped with SIGTERM, then SIGKILL; one that did not exit after ``exit`` is an error,
    reported instead of a test run that never ends. So is anything goose-ls sent its agent
    that the ACP schema refuses.
    """
    await _stop(editor)
    refused = schema_errors(editor.record)
    assert not refused, "goose-ls sent its agent what ACP refuses:\n" + "\n".join(refused)


async def _stop(editor: Editor) -> None:
    server = editor.client._server
    if server is None or server.returncode is not None:
        return
    hung = False
    try:
        await within(EXIT_WITHIN, editor.client.shutdown_session())
    except asyncio.TimeoutError:
        hung = True
    except Exception:
        pass  # the connection is broken: stopped below
    if server.returncode is None:
        server.terminate()  # goose-ls stops its agent on SIGTERM
        try:
            await within(10, server.wait())
        except asyncio.TimeoutError:
            server.kill()
            await server.wait()
        await disconnect(editor)
    assert not hung, f"goose-ls did not exit within {EXIT_WITHIN:.0f} s of shutdown and exit"


async def disconnect(editor: Editor) -> None:
    """Stop the client without the LSP shutdown; it waits for a running server to exit."""
    await editor.client.stop()  # type: ignore[no-untyped-call]  # unannotated in pytest-lsp


async def kill(editor: Editor) -> None:
    """``kill -9`` goose-ls (what quitting an editor without saving can leave), then let
    the client go."""
    server = editor.client._server
    assert server is not None
    server.kill()
    await server.wait()
    await disconnect(editor)


def process_alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def gone(pid: int, timeout: float = 10.0) -> bool:
    """Wait (up to ``timeout`` seconds) for ``pid`` to stop running."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while process_alive(pid):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def raw_request(client: LanguageClient, method: Any, params: Any) -> Any:
    """Send the method and params as they are: the typed client would refuse to send
    malformed ones."""
    request_id = str(uuid.uuid4())
    answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
    client.protocol._request_futures[request_id] = answer
    client.protocol._result_types[request_id] = None  # keep the result as plain JSON
    client.protocol._send_data(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    )
    return await asyncio.wrap_future(answer)


def shared_server(test: Test) -> Test:
    """Mark a test that uses the ``shared_editor`` fixture (one goose-ls for a module's
    tests that only read): it runs in its module's event loop, where that server's client
    lives."""
    in_module_loop: Test = pytest.mark.asyncio(loop_scope="module")(test)
    return in_module_loop
