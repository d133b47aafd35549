"""Checks what goose-ls sent the scripted agent against the ACP SDK's schema.

The scripted agent reads plain JSON (see :mod:`goose_ls.scripted.peer`); this is where its record is held
to the schema, in the test process, where the SDK is imported once, not in every agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def schema_errors(record: Path) -> list[str]:
    """One line per message in ``record`` that the ACP schema refuses, or that answers a
    request the agent never sent."""
    from acp import schema
    from pydantic import BaseModel, ValidationError

    params: dict[str, type[BaseModel] | tuple[type[BaseModel], ...]] = {
        "initialize": schema.InitializeRequest,
        "authenticate": schema.AuthenticateRequest,
        "session/new": schema.NewSessionRequest,
        "session/load": schema.LoadSessionRequest,
        "session/set_mode": schema.SetSessionModeRequest,
        "session/prompt": schema.PromptRequest,
        "session/cancel": schema.CancelNotification,
        "$/cancel_request": schema.CancelRequestNotification,
        "session/list": schema.ListSessionsRequest,
        "session/close": schema.CloseSessionRequest,
        "session/resume": schema.ResumeSessionRequest,
        "session/delete": schema.DeleteSessionRequest,
        "session/fork": schema.ForkSessionRequest,
        "logout": schema.LogoutRequest,
        # Steering extensions: no schema of their own, a prompt's shape plus a key or two.
        "_session/steering": schema.PromptRequest,
        "_goose/unstable/session/steer": schema.PromptRequest,
        "session/set_config_option": (
            schema.SetSessionConfigOptionBooleanRequest,
            schema.SetSessionConfigOptionSelectRequest,
        ),
    }
    results: dict[str, type[BaseModel] | tuple[type[BaseModel], ...]] = {
        "fs/read_text_file": schema.ReadTextFileResponse,
        "fs/write_text_file": schema.WriteTextFileResponse,
        "terminal/create": schema.CreateTerminalResponse,
        "terminal/output": schema.TerminalOutputResponse,
        "terminal/wait_for_exit": schema.WaitForTerminalExitResponse,
        "terminal/kill": schema.KillTerminalResponse,
        "terminal/release": schema.ReleaseTerminalResponse,
        "session/request_permission": schema.RequestPermissionResponse,
        "elicitation/create": (
            schema.AcceptElicitationResponse,
            schema.DeclineElicitationResponse,
            schema.CancelElicitationResponse,
        ),
    }
    asked = {entry["id"]: entry["method"] for entry in _lines(record.with_suffix(".sent.jsonl"))}
    errors: list[str] = []
    for message in _lines(record):
        if "method" in message:
            what, models, value = (
                message["method"],
                params.get(message["method"]),
                message.get("params"),
            )
        elif "id" in message and "result" in message:
            what = f"the answer to {asked.get(message['id'], 'an unknown request')}"
            models, value = results.get(asked.get(message["id"], "")), message["result"]
            if message["id"] not in asked:
                errors.append(f"{what}: {json.dumps(message)[:200]}")
                continue
        else:
            continue  # an error answer: its shape is JSON-RPC's, checked by the agent's reader
        if models is None:
            errors.append(f"{what}: not an ACP method goose answers")
            continue
        refusals = []
        for model in models if isinstance(models, tuple) else (models,):
            try:
                model.model_validate(value)
                break
            except ValidationError as exc:
                refusals.append(f"{model.__name__}: {exc.errors()[:3]}")
        else:
            errors.append(f"{what}: {'; '.join(refusals)}")
    return errors


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
