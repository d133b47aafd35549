"""The scripted agent's steering, in either shape an agent ships (script key ``steering``).

``"acp"``: ``initialize`` says ``_meta.steering.supported`` and ``_session/steering``
answers ``{outcome: "injected"}`` during a turn, ``{outcome: "promptRequired"}`` outside
one when asked so (else it starts a turn itself, ``startedNewTurn``, as the Claude adapter
does). ``"goose"``: each turn is named in a ``session_info_update``
(``_meta.goose.activeRunId``, null at its end) and ``_goose/unstable/session/steer``
takes a message only for the named run, else fails with -32602 as goose does.

With ``steerTooLate``, each ``_session/steering`` request ends the turn (it wakes its
``waitForSteer``) before it is answered, as if it came just as the turn ended.

A message taken into a turn is said at once in it, as ``[steered: TEXT]``, and wakes a
``waitForSteer`` step.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from goose_ls.scripted.peer import RpcError
from goose_ls.scripted.steps import StepPlayer

ACP_METHOD = "_session/steering"
GOOSE_METHOD = "_goose/unstable/session/steer"


class ScriptedSteering:
    def __init__(self, shape: str | None, steps: StepPlayer, too_late: bool = False) -> None:
        self.shape = shape
        self.too_late = too_late
        """Each message comes as the turn ends: the turn is ended before it is answered."""
        self._steps = steps
        self._runs: dict[str, str] = {}
        """The running turn of each session, by the run id it was given."""
        self._numbers = itertools.count(1)
        self._ended: dict[str, asyncio.Event] = {}
        self._later: set[asyncio.Future[None]] = set()
        """What is said after an answer (kept, so that it is not collected midway)."""
        """Set when the session's turn ends, for a request that waits for that."""

    def meta(self) -> dict[str, Any]:
        """What ``initialize``'s answer says of steering."""
        return {"steering": {"supported": True}} if self.shape == "acp" else {}

    async def turn_starts(self, session_id: str) -> None:
        run = self._runs[session_id] = f"run_{next(self._numbers)}"
        if self.shape == "goose":
            await self._name_run(session_id, run)

    async def turn_ends(self, session_id: str) -> None:
        self._runs.pop(session_id, None)
        if ended := self._ended.pop(session_id, None):
            ended.set()
        if self.shape == "goose":
            await self._name_run(session_id, None)

    async def acp(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = str(params.get("sessionId"))
        if self.too_late and session_id in self._runs:  # the turn ends first
            ended = self._ended[session_id] = asyncio.Event()
            self._steps.steered.setdefault(session_id, asyncio.Event()).set()
            await ended.wait()
        if session_id not in self._runs:
            idle = ((params.get("_meta") or {}).get("steering") or {}).get("idleBehavior")
            if idle == "promptRequired":
                return {"outcome": "promptRequired", "reason": "noRunningTurn"}
            return {"outcome": "startedNewTurn"}
        await self._take(session_id, params.get("prompt"))
        return {"outcome": "injected"}

    async def goose(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = str(params.get("sessionId"))
        run = self._runs.get(session_id)
        if run is None or params.get("expectedRunId") != run:
            raise RpcError(-32602, "Invalid params", f"no active run {params.get('expectedRunId')}")
        await self._take(session_id, params.get("prompt"))
        return {"runId": run, "messageId": f"msg_{next(self._numbers)}"}

    async def _take(self, session_id: str, prompt: Any) -> None:
        if not isinstance(prompt, list) or not prompt:
            raise RpcError(-32602, "Invalid params", "prompt: a non-empty list of blocks")
        said = " ".join(str(b.get("text") or "") for b in prompt if isinstance(b, dict))
        self._steps.memory.said(session_id, prompt)
        # After the answer, as agents do: the model takes the message at its next step.
        self._later.add(asyncio.ensure_future(self._said(session_id, said)))

    async def _said(self, session_id: str, said: str) -> None:
        await asyncio.sleep(0.1)
        await self._steps.say(session_id, f"[steered: {said.strip()}]")
        self._steps.steered.setdefault(session_id, asyncio.Event()).set()
        self._later = {task for task in self._later if not task.done()}

    async def _name_run(self, session_id: str, run: str | None) -> None:
        await self._steps.update(
            session_id,
            {"sessionUpdate": "session_info_update", "_meta": {"goose": {"activeRunId": run}}},
        )
