"""Scripts for the scripted agent, and helpers that turn them into agent commands.

A script is JSON. Top-level keys (all optional):

``agentInfo``      ``{"name", "version"}`` sent in ``initialize`` (default goose 1.43.0)
``capabilities``   ``agentCapabilities`` (default: what goose 1.43 advertises)
``protocolVersion`` the ``protocolVersion`` ``initialize`` answers (default: the one asked)
``initializeError`` ``{"code", "message", "data"}``: ``initialize`` fails with it (an agent
                   of ACP v2 only answers a v1 client -32022)
``startup``        steps played before reading stdin (``{"exit": 3}`` = dies at start)
``sessionSetup``   steps played before the ``session/new`` response (default: usage and
                   available commands, as goose sends them)
``turns``          a list of step lists; prompt N plays ``turns[N]`` (the last one repeats);
                   without it every prompt is echoed back
``byPrompt``       ``{"prompt text": steps}``: a prompt with exactly that text plays those
                   steps (before ``turns``; handy across agent restarts)
``configOptions``  config options returned by ``session/new`` and ``session/load`` (and
                   changed by ``session/set_config_option``; boolean ones only for a client
                   that advertised them; ``options.GOOSE_CONFIG_OPTIONS`` is goose's set)
``agentSessions``  extra ``SessionInfo`` entries for ``session/list``
``authMethods``    the ``authMethods`` of ``initialize``
``requireAuth``    ``session/new`` fails with -32000 until ``authenticate`` succeeds
``acceptAuth``     the method ids ``authenticate`` accepts (default: any)
``terminalSignIn`` a path: run with a ``terminal`` auth method's arguments after the
                   script, the agent asks for a code on its terminal and keeps the
                   sign-in there, which ``requireAuth`` then takes (see ``sign_in.py``)
``load``           steps replayed during ``session/load`` (``session/resume`` replays none)
``resume``         steps played during ``session/resume``, before its answer (as
                   claude-agent-acp sends its slash commands there)
``deleteError``    ``{"code", "message", "data"}``: ``session/delete`` fails with it
``noFork``         ``session/fork`` is not a method (as codex-acp); by default it forks as
                   goose does, unadvertised unless ``capabilities`` says so
``forkError``      ``{"code", "message", "data"}``: ``session/fork`` fails with it
``record``         a path; every message received is appended to it as JSON lines
``sessionsFile``   a path where created session ids are kept, so that a restarted agent
                   loads them (and only them) as goose does from its database
``serveAuth``      served over WebSocket (``serve``): how the token may come, among
                   ``bearer``, ``subprotocol``, ``x-secret-key``, ``query`` (see
                   ``serve.py``; default: goose's newer forms, the first two)
``serveOver``      ``"http"``: served (``serve``) over ACP's streamable HTTP instead of
                   a WebSocket (see ``serve_http.py``)
``idPrefix``       put before each new session id (two agents of one test keep apart)
``sessionIds``     the ids ``session/new`` and ``session/fork`` answer, in order, before
                   the usual ones (an agent chooses its ids: a hostile one, any string)
``steering``       ``"acp"`` or ``"goose"``: takes messages into a running turn, in that
                   agent shape (see ``steering.py``; ``steerTooLate``: each comes as the
                   turn ends)
``agentFolders``   folders that exist on the agent's side though not here, as a container's
                   mounts do (``session/new`` refuses a ``cwd`` that is neither one nor a
                   folder here, as goose does)
``conversations``  a folder where each chat is kept as goose keeps it, and replayed by
                   ``session/load`` (``saveChunks``: every chunk as it goes; see ``memory.py``)
``chatScripts``    a folder of scripts: once a new one is there (the last by name), the
                   agent plays it from the next request on as a fresh agent would (its
                   turns counted from the first), over the keys of its own script; for
                   tests that share one agent, each with a script. Keys that only count at
                   the agent's start (``AGENT_KEYS``) are refused there

Steps (one key each, plus options): ``text`` (``chunks``, ``delay``, ``messageId``: the
agent's id of the message), ``thought``, ``userText``, ``stamped`` (N chunks whose text starts with the sending time, 20 digits of
``time.monotonic_ns()``, padded to ``size`` bytes, at ``rate`` chunks a second or at
once; for benchmarks), ``toolCall``, ``toolUpdate`` (``repeat``: sent that many times), ``plan``, ``usage``, ``commands``, ``mode``,
``configOptions``, ``sessionInfo``, ``update`` (a raw update object; an unstable kind
only to a client that offers it: ``notice``, ``compaction_*``, ``plan_update``...), ``gooseStatus``
(``{"type", "message"}``: goose's ``status_message``, sent only to a client that asked
for goose's custom notifications, as goose does), ``permission``
(goose's four options unless ``options`` is given; ``withdrawAfter``: that many seconds
on, withdraw it with ``$/cancel_request`` and say the answer, ``[permission: error -32800]``),
``elicit`` (``{"message", "schema", "mode", "url", "withdrawAfter"}``: ``elicitation/create``
in form mode, or URL mode with ``"mode": "url"``, sent only to a client that advertised
that mode; says the answer, ``[elicitation: accept {...}]``, ``[elicitation: decline]``,
or ``[elicitation: form not supported]``), ``elicitComplete`` (an ``elicitationId``:
``elicitation/complete``), ``together`` (a list of steps played at once, as an agent
running tools in parallel asks: its permission requests all wait together), ``sleep``, ``waitForCancel``, ``raw``
(a raw stdout line), ``rawHex``, ``bigText`` (one chunk of N bytes), ``burst`` (a text
in ``chunks`` agent message chunks written to stdout at once), ``bigRaw``,
``onSession`` (beside another step: its messages name that session id, as an agent speaks
for a subagent's child session; ``{other}`` is another open session's id, ``{this}`` the
turn's, in the id and in an ``update``'s strings; a permission's or question's answer is
said on the turn's session),
``waitForSteer`` (until a message is taken into the turn), ``halfLine`` (half a line, then exit), ``crash`` (exit code), ``hang``, ``stderr``,
``stopReason``, ``turnUsage`` (the prompt answer's ``usage``, as goose sends it), ``error`` (``{"code", "message", "data"}`` as the prompt's reply),
``shell`` (a command line run in the agent's own process, as goose's shell tool runs
it; says ``[shell CODE: OUTPUT]``, unless ``"quiet": true``), ``closeStdout`` (close stdout, then keep running), ``orphanCrash`` (``{"code",
"childSleeps"}``: start a ``sleep`` child that keeps the pipes, say ``[child PID]``, exit),
``exitLater`` (exit with code 1 that many seconds later; in ``startup``, an agent that dies
after a good start), ``unknownSessions`` (N updates, each for a session id nobody opened).
With ``"cancelledAs": "end_turn"`` in a turn step list's last step, a cancelled turn
reports ``end_turn`` the way goose 1.48 did. A step with ``"evenIfCancelled": true`` is
played even after a cancel (an agent that ignores it); other steps stop the turn there.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

GOOSE_PERMISSION_OPTIONS = [
    {"optionId": kind, "name": kind, "kind": kind}
    for kind in ("allow_always", "allow_once", "reject_once", "reject_always")
]
"""The four options goose offers, in goose's order, with ``optionId == name == kind``."""


AGENT_KEYS = frozenset(
    {
        "agentInfo",
        "capabilities",
        "protocolVersion",
        "initializeError",
        "startup",
        "authMethods",
        "requireAuth",
        "acceptAuth",
        "terminalSignIn",
        "steering",
        "steerTooLate",
        "conversations",
        "saveChunks",
        "record",
        "sessionsFile",
        "serveAuth",
        "serveOver",
        "chatScripts",
    }
)
"""The keys read once, when the agent starts or is initialized: a script in
``chatScripts`` cannot change them."""


def edit_call(path: Path | str, old: str, new: str, call_id: str = "e1") -> dict[str, Any]:
    """The tool call of an agent asking to change ``path`` from ``old`` to ``new`` (for a
    ``permission`` or ``toolCall`` step), its change as a diff, as goose sends it."""
    diff = {"type": "diff", "path": str(path), "oldText": old, "newText": new}
    return {"toolCallId": call_id, "title": "Edit app.py", "kind": "edit", "content": [diff]}


REPLACE = (
    "import sys; p=sys.argv[1]; t=open(p).read(); "
    "open(p,'w').write(t.replace(sys.argv[2], sys.argv[3]))"
)


def replace_in_file(path: Path, old: str, new: str) -> dict[str, Any]:
    """A ``shell`` step that replaces ``old`` with ``new`` in ``path`` in the agent's own
    process, as agents that write files with their own tools do (never through goose-ls)."""
    line = shlex.join(["python3", "-c", REPLACE, str(path), old, new])
    return {"shell": line}


def received(record: Path) -> list[dict[str, Any]]:
    """Every message the scripted agent received, in order (the file its ``record``
    names); none when it has not started yet."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def elicitation_answers(record: Path) -> list[dict[str, Any]]:
    """What the client answered to each of the scripted agent's ``elicitation/create``."""
    answers = [m.get("result") for m in received(record)]
    return [a for a in answers if isinstance(a, dict) and "action" in a]


def prompts(record: Path) -> list[list[dict[str, Any]]]:
    """The content blocks of each ``session/prompt`` the scripted agent received."""
    return [m["params"]["prompt"] for m in received(record) if m.get("method") == "session/prompt"]


def prompt_texts(record: Path) -> list[str]:
    """The text of each ``session/prompt`` the scripted agent received (its first block)."""
    return [str(blocks[0].get("text", "")) for blocks in prompts(record)]


def write_script(path: Path, script: dict[str, Any]) -> Path:
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


def scripted_agent_command(script_path: Path | str) -> list[str]:
    """The ``agent.command`` setting that runs the scripted agent on a script."""
    return [sys.executable, "-m", "goose_ls.scripted", str(script_path)]


def scripted_server_command(
    script_path: Path | str, port: int = 0, cert: Path | None = None, key: Path | None = None
) -> list[str]:
    """The command that serves the scripted agent as ``goose serve`` serves goose, on
    127.0.0.1 (see :mod:`goose_ls.scripted.serve`; port 0: any free port)."""
    command = [*scripted_agent_command(script_path), "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port)]
    if cert is not None and key is not None:
        command += ["--tls-cert-path", str(cert), "--tls-key-path", str(key)]
    return command


def load_script(path: str | os.PathLike[str]) -> dict[str, Any]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a script must be a JSON object")
    return data
