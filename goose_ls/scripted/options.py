"""Config options as the scripted agent keeps them: offered per the client's capability,
changed by ``session/set_config_option`` with goose's checks and errors."""

from __future__ import annotations

from typing import Any

from goose_ls.scripted.peer import RpcError


def _select(
    option_id: str, name: str, category: str | None, current: str, values: list[str]
) -> Any:
    option: dict[str, Any] = {
        "id": option_id,
        "name": name,
        "type": "select",
        "currentValue": current,
        "options": [{"value": value, "name": value} for value in values],
    }
    if category:
        option["category"] = category
    return option


GOOSE_CONFIG_OPTIONS: list[dict[str, Any]] = [
    _select("provider", "Provider", None, "anthropic", ["goose", "anthropic", "openai"]),
    _select("mode", "Mode", "mode", "auto", ["auto", "approve", "smart_approve", "chat"]),
    _select(
        "model", "Model", "model", "claude-sonnet-4", ["claude-sonnet-4", "claude-opus-4", "gpt-5"]
    ),
    _select(
        "thinking_effort",
        "Thinking effort",
        "thought_level",
        "off",
        ["off", "low", "medium", "high"],
    ),
    {
        "id": "auto_compact",
        "name": "Auto-compact",
        "description": "Compact the conversation when the context is nearly full",
        "type": "boolean",
        "currentValue": True,
    },
]
"""goose's four select options (``build_config_options``: provider, mode, model,
thinking_effort, in its order) and one boolean option such as the spec allows."""

PICKER_ITEMS = [
    "Other · Provider: anthropic",
    "Other · Auto-compact: on",
    "Mode · Mode: auto",
    "Model · Model: claude-sonnet-4",
    "Thinking · Thinking effort: off",
]
"""How a plugin's option picker lists :data:`GOOSE_CONFIG_OPTIONS`: in the agent's order,
one category's options together, each with its category and current value."""


def takes_booleans(initialize_params: dict[str, Any]) -> bool:
    """Whether the client advertised ``clientCapabilities.session.configOptions.boolean``."""
    capabilities = initialize_params.get("clientCapabilities") or {}
    config = (capabilities.get("session") or {}).get("configOptions") or {}
    return config.get("boolean") is not None


def offered(options: list[dict[str, Any]], booleans: bool) -> list[dict[str, Any]]:
    """What an agent may send: boolean options only to a client that takes them."""
    return [o for o in options if booleans or o.get("type", "select") != "boolean"]


def changed(options: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
    """``options`` with ``params["configId"]`` set to ``params["value"]``; -32602 when the
    option is unknown or the value does not fit its type."""
    config_id, value = params["configId"], params["value"]
    option = next((o for o in options if o["id"] == config_id), None)
    if option is None:
        raise RpcError(-32602, "Invalid params", f"Unsupported config option: {config_id}")
    boolean = option.get("type", "select") == "boolean"
    if boolean != (params.get("type") == "boolean") or boolean != isinstance(value, bool):
        raise RpcError(
            -32602, "Invalid params", "Expected a boolean" if boolean else "Expected a value ID"
        )
    return [{**o, "currentValue": value} if o is option else o for o in options]
