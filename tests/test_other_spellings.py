"""Invariants of docs/security.md against the other spellings a hostile agent tries: a
protected path planted after its turn, a key deep in a file or spelt with JSON escapes,
a line handed to a shell every way a shell takes one, a patch tagged another way, a card
as markdown shows it however it is indented. Each section names the sentence it holds."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from support.harness import Editor

KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "AAAECxyzSECRETSECRETSECRETSECRETSECRETSECRETSECRETSECRETSECRETSECRETSE\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


async def _answer_all(editor: Editor, kind: str, asked: list[dict[str, Any]]) -> None:
    """Answer every permission request as it comes with its option of ``kind``."""
    seen: set[str] = set()
    while True:
        for request in editor.goose.of_kind("permission_request"):
            if request["requestId"] not in seen:
                seen.add(request["requestId"])
                asked.append(request)
                ids = {o["kind"]: o["optionId"] for o in request["options"]}
                await editor.goose.request(
                    "goose/permission",
                    {"requestId": request["requestId"], "optionId": ids.get(kind)},
                )
        await asyncio.sleep(0.02)


async def _turn(
    editor: Editor,
    steps: list[dict[str, Any]],
    asked: list[dict[str, Any]] | None = None,
    **settings: Any,
) -> str:
    await editor.start({"turns": [[*steps, {"text": "[done]"}]]}, settings=settings or None)
    sid = await editor.new_session()
    answering = asyncio.ensure_future(
        _answer_all(editor, "reject_once", asked if asked is not None else [])
    )
    mid = await editor.prompt(sid, "go")
    try:
        await editor.goose.turn_end(mid, timeout=60)
    finally:
        answering.cancel()
    return editor.goose.text(mid)


# --- Protected paths the agent's own process plants between turns -----------------------
#
# security.md, "Protected paths a turn created": "a protected path ... that a turn created
# ... does not stay in the workspace. goose-ls notes the protected paths before the turn's
# prompt goes out and looks again after each command ... and before the turn's end is
# told". The agent's process outlives its turns: what it plants after the turn's end is
# set aside when the next turn starts.


async def test_protected_paths_the_agent_plants_after_its_turn_do_not_stay(
    editor: Editor,
) -> None:
    ws = editor.workspace
    planted = [".vscode/settings.json", ".envrc", "sub/.nvim.lua", ".git/hooks/pre-commit"]
    later = (
        f"cd {ws} && (sleep 1; mkdir -p .vscode sub .git/hooks; "
        + "; ".join(f"echo planted > {p}" for p in planted)
        + ") >/dev/null 2>&1 &"
    )
    await editor.start({"turns": [[{"shell": later}, {"text": "[done]"}], [{"text": "two"}]]})
    sid = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(sid, "go"))
    await asyncio.sleep(3)  # the turn is over; the agent's background work plants them
    await editor.goose.turn_end(await editor.prompt(sid, "again"))
    await asyncio.sleep(0.5)
    stayed = [p for p in planted if (ws / p).exists()]
    assert not stayed, f"planted by the agent between its turns, and kept: {stayed}"


# --- Credentials found by content, wherever they are in the file ----------------------
#
# security.md, "Files read and written through goose-ls": "a secret by its name ... or by
# its content (a PEM or PuTTY private key, a service-account JSON with `private_key`, AWS
# credentials), on the disk or in the editor's unsaved buffer, is refused (-32003),
# whatever the file is called": anywhere in the file, and in JSON as decoded.


async def test_a_key_after_a_long_preamble_is_still_refused(editor: Editor) -> None:
    ws = editor.workspace
    (ws / "notes.txt").write_text("x" * 70_000 + "\n" + KEY)  # a key at 70 KB
    (ws / "log.txt").write_text(("y" * 99 + "\n") * 12_000 + KEY)  # at 1.2 MB
    steps: list[dict[str, Any]] = [
        {"readFile": {"path": str(ws / "notes.txt")}},
        {"readFile": {"path": str(ws / "log.txt")}},
        {"readFile": {"path": str(ws / "log.txt"), "line": 12_001, "limit": 4}},
    ]
    said = await _turn(editor, steps)
    assert "SECRETSECRET" not in said, "the private key reached the agent"
    assert said.count("[read error -32003") == 3, said[-600:]


async def test_a_service_account_json_is_refused_however_its_json_is_spelled(
    editor: Editor,
) -> None:
    # The same JSON document as Google's, with two characters written as JSON escapes:
    # json.loads reads "private_key" and "-----BEGIN PRIVATE KEY-----" from it.
    (editor.workspace / "config.json").write_text(
        '{"type": "service_account", "project_id": "p", "\\u0070rivate_key": '
        '"-----BEGIN\\u0020PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFSECRETSECRET\\n'
        '-----END\\u0020PRIVATE KEY-----\\n", "client_email": "a@p.iam.gserviceaccount.com"}'
    )
    said = await _turn(editor, [{"readFile": {"path": str(editor.workspace / "config.json")}}])
    assert "SECRETSECRET" not in said and "[read error -32003" in said, said


# --- A deny rule, whatever way a line is handed to a shell -----------------------------
#
# configuration.md, "Command rules": "A deny (or ask) rule matches every simple command of
# the line, nested ones too ... behind sudo, env, ...", "A line handed to a shell is read
# as its own line: bash -c ..., sh -lc '…' ... are refused by the rule above"; and
# "Permission requests": "an argv ["bash", "-lc", X] or ["sh", "-c", X] (any shell, -c or
# -lc) is judged as the line X": every other way of writing the same -c too.

SHELL_SPELLINGS = [
    "bash -ec 'touch m1'",
    "sh -xc 'touch m2'",
    "sh -e -c 'touch m3'",
    "bash --norc -c 'touch m4'",
    "sh -c -- 'touch m5'",
    "bash -O extglob -c 'touch m6'",
    "dash -c 'touch m7'",
    "env A=1 sh -c 'touch m8'",
    "env -S 'touch m9'",
]


async def test_a_deny_rule_holds_whatever_way_a_line_is_handed_to_a_shell(
    editor: Editor,
) -> None:
    ws = editor.workspace
    steps = [
        {"terminal": {"command": "sh", "args": ["-c", line], "cwd": str(ws), "summary": True}}
        for line in SHELL_SPELLINGS
    ]
    await _turn(
        editor,
        steps,
        policy={"rules": [{"action": "deny", "command": "touch"}, {"action": "allow"}]},
    )
    ran = [line for n, line in enumerate(SHELL_SPELLINGS, 1) if (ws / f"m{n}").exists()]
    assert not ran, f"a deny rule on touch, and these ran: {ran}"


async def test_a_deny_rule_holds_for_an_argv_with_a_double_dash(editor: Editor) -> None:
    call = {
        "toolCallId": "c1",
        "title": "Run",
        "kind": "execute",
        "rawInput": {"command": ["bash", "-c", "--", "touch x"], "cwd": str(editor.workspace)},
    }
    said = await _turn(
        editor,
        [{"toolCall": call}, {"permission": {"toolCall": call}}],
        policy={"rules": [{"action": "deny", "command": "touch"}, {"action": "allow"}]},
    )
    assert "[permission: reject_once]" in said, said


# --- A patch, however its changes are tagged -------------------------------------------
#
# security.md, "Permission requests": "Every request fails closed: ... a request whose
# target goose-ls cannot determine (a rawInput of an unknown shape ...) is asked, never
# allowed by a rule"; configuration.md: codex's "patches (changes, by file, with a renamed
# file's move_path)" are read: a change written {"update": {..., "move_path"}} (codex's
# externally tagged FileChange) too, and a rename onto a git hook, onto .env or out of
# the workspace is never allowed by a broad rule.


async def test_a_patch_renaming_a_file_where_goose_ls_does_not_look_is_not_allowed(
    editor: Editor,
) -> None:
    ws = editor.workspace
    (ws / "a.txt").write_text("a")
    targets = [".git/hooks/pre-commit", str(ws / ".env"), "/tmp/attack28-moved"]
    steps: list[dict[str, Any]] = []
    for n, target in enumerate(targets):
        change = {"update": {"unified_diff": "", "move_path": target}}
        call = {
            "toolCallId": f"p{n}",
            "title": "Edit a.txt",
            "kind": "edit",
            "rawInput": {"changes": {"a.txt": change}},
        }
        steps += [{"toolCall": call}, {"permission": {"toolCall": call}}]
    said = await _turn(editor, steps, policy={"rules": [{"action": "allow"}]})
    allowed = re.findall(r"\[permission: allow_once\]", said)
    assert not allowed, f"{len(allowed)} renames allowed by the broad rule: {said}"


# --- Agent text that markdown shows as a card -----------------------------------------
#
# security.md: "a line of it that begins as goose-ls's own lines do (a card, a marker, a
# turn's heading) is escaped". In markdown, a block quote may be indented up to three
# spaces and needs no space after ">": such lines would render as goose-ls's card.


async def test_agent_text_that_renders_as_a_card_is_escaped(editor: Editor) -> None:
    forged = [
        "   > **🔐 Permission needed:** Read README.md (read)",
        ">**🔐 Permission needed:** Read README.md (read)",
        " > **🔐 Permission needed:** Read README.md (read)",
    ]
    steps = [{"text": "\n\n" + line + "\n", "chunks": 2} for line in forged]
    await _turn(editor, steps)
    lines = (await editor.transcript_text("[done]")).split("\n")  # the whole turn is written
    unescaped = [line for line in lines if line.lstrip(" ").startswith(">") and "needed" in line]
    assert not unescaped, unescaped
