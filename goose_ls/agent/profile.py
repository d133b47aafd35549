"""What the agent said about itself in ``initialize``: its name, version and capabilities."""

from __future__ import annotations

from typing import Any

import attrs
from acp.schema import InitializeResponse

from goose_ls.agent import presets
from goose_ls.agent.interface import CARRIED_CAPABILITIES, RENAME, model_json
from goose_ls.agent.steering import advertised
from goose_ls.inert import agent_name


@attrs.frozen
class AgentProfile:
    """What the agent said about itself in ``initialize`` (omitted means unsupported)."""

    response: InitializeResponse

    @property
    def name(self) -> str:
        info = self.response.agent_info
        return info.name if info else "agent"

    @property
    def title(self) -> str:
        """The name the agent gives itself for people (``agentInfo.title``, else its name):
        what chats head its messages with. The agent chose it, so it is inert, short and
        never the user's own label (:func:`~goose_ls.inert.agent_name`)."""
        info = self.response.agent_info
        return agent_name((info.title or info.name) if info else None)

    @property
    def version(self) -> str | None:
        info = self.response.agent_info
        return info.version if info else None

    @property
    def load_session(self) -> bool:
        return bool(
            self.response.agent_capabilities and self.response.agent_capabilities.load_session
        )

    def session_capability(self, name: str) -> bool:
        """Whether ``sessionCapabilities.<name>`` is advertised (present means supported)."""
        caps = self.response.agent_capabilities
        sessions = caps.session_capabilities if caps else None
        return getattr(sessions, name, None) is not None

    @property
    def forks(self) -> bool:
        """Whether the agent forks a chat: it advertises ``sessionCapabilities.fork``, or
        is one that answers it unadvertised (goose)."""
        preset = presets.of_agent(self.name)
        return self.session_capability("fork") or bool(preset and preset.forks_unadvertised)

    @property
    def fork_point(self) -> presets.ForkPoint | None:
        """How the agent cuts a fork before its last turn, if it can."""
        preset = presets.of_agent(self.name)
        return preset.fork_point if preset and self.forks else None

    @property
    def system_prompt_modes(self) -> frozenset[str]:
        """The system prompt modes the agent takes (``sessionCapabilities.systemPrompt``:
        present, ``append``; with ``mode.override``, ``override`` too); none when it
        takes no system prompt."""
        sessions = self._capabilities().get("sessionCapabilities")
        taken = sessions.get("systemPrompt") if isinstance(sessions, dict) else None
        if not isinstance(taken, dict):
            return frozenset()
        modes = taken.get("mode")
        override = isinstance(modes, dict) and isinstance(modes.get("override"), dict)
        return frozenset({"append", "override"} if override else {"append"})

    def _capabilities(self) -> dict[str, Any]:
        """``agentCapabilities`` as the agent sent them (carried past the SDK, which
        drops what it has no model for)."""
        carried = (self.response.field_meta or {}).get(CARRIED_CAPABILITIES)
        if isinstance(carried, dict):
            return carried
        caps = self.response.agent_capabilities
        return model_json(caps) if caps is not None else {}

    @property
    def logout(self) -> bool:
        """Whether ``agentCapabilities.auth.logout`` is advertised."""
        caps = self.response.agent_capabilities
        auth = caps.auth if caps else None
        return getattr(auth, "logout", None) is not None

    @property
    def renames(self) -> bool:
        """Whether the agent takes a chat's new title (``_meta["goose-ls/rename"]``: goosed,
        through goose-ls's own translation; ACP has no such request)."""
        return (self.response.field_meta or {}).get(RENAME) is True

    @property
    def steering(self) -> bool:
        """Whether ``_meta.steering.supported`` is advertised (see :mod:`.steering`)."""
        return advertised(self.response.field_meta)

    @property
    def mcp_transports(self) -> set[str]:
        """stdio (every agent takes it), and http and sse when advertised."""
        caps = self.response.agent_capabilities
        mcp = caps.mcp_capabilities if caps else None
        return {"stdio"} | {kind for kind in ("http", "sse") if getattr(mcp, kind, False)}

    @property
    def embedded_context(self) -> bool:
        caps = self.response.agent_capabilities
        prompt = caps.prompt_capabilities if caps else None
        return bool(prompt and prompt.embedded_context)

    @property
    def images(self) -> bool:
        """Whether the agent takes image blocks in a prompt (``promptCapabilities.image``)."""
        caps = self.response.agent_capabilities
        prompt = caps.prompt_capabilities if caps else None
        return bool(prompt and prompt.image)

    def describe(self) -> dict[str, Any]:
        """The ``initialize`` result as camelCase JSON, for status reports: its
        capabilities as the agent sent them."""
        data = model_json(self.response)
        meta = data.get("_meta")
        if isinstance(meta, dict) and CARRIED_CAPABILITIES in meta:
            data["agentCapabilities"] = meta.pop(CARRIED_CAPABILITIES)
            if not meta:
                del data["_meta"]
        return data
