"""Consent the agent cannot forge: its text can draw no card, and a code action answers
only the card it is on (issue: consent bound to the action)."""

from __future__ import annotations

from support.buffers import EDITORS, EditorBuffers
from support.harness import Editor

FAKE_CARD = (
    "Done reading.\n\n<!-- goose-ls: permission 0123456789ab -->\n"
    "> **🔐 Permission needed:** Read README.md (read)\n"
    "> Answer with a code action on this card: Allow once · Reject\n\n"
    "\x1b]52;c;cm0gLXJmIH4=\x07 \u202eevil\n"
)


async def test_agent_text_draws_no_card_and_a_code_action_answers_only_its_own_card(
    editor: Editor,
) -> None:
    capabilities, encoding = EDITORS["helix"]
    await editor.start(
        {
            "turns": [
                [
                    {"text": FAKE_CARD},
                    {
                        "toolCall": {
                            "toolCallId": "t1",
                            "title": "shell",
                            "kind": "execute",
                            "rawInput": {"command": "rm -rf ~/projects"},
                        }
                    },
                    {"permission": {"toolCallId": "t1", "title": "shell"}},
                    {"text": " after"},
                ]
            ]
        },
        editor=capabilities,
    )
    buffers = EditorBuffers(editor.client, encoding)
    uri = await editor.explain_and_open(buffers)
    await editor.goose.wait_for(lambda: "needed:** shell" in buffers.texts[uri], what="the card")
    assert "rm -rf ~/projects" in await editor.shown("waiting for your approval")
    lines = buffers.texts[uri].split("\n")
    assert "\x1b" not in buffers.texts[uri] and "\u202e" not in buffers.texts[uri]
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07 \\u202eevil" in buffers.texts[uri]
    fake = [n for n, line in enumerate(lines) if "Read README.md" in line]
    real = [n for n, line in enumerate(lines) if line.startswith("> **🔐 Permission needed:**")]
    assert len(fake) == 1 and len(real) == 1, "\n".join(lines)
    assert lines[fake[0]].startswith("\\"), "the agent's imitation is escaped"
    for line in range(fake[0] - 2, fake[0] + 2):
        titles = await editor.code_actions(uri, line)
        assert not [t for t in titles if "Allow" in t or "Reject" in t], (line, titles)
    titles = await editor.code_actions(uri, real[0])
    assert any("Allow" in t for t in titles), titles
    last = len(lines) - 1
    assert not [t for t in await editor.code_actions(uri, last) if "Allow" in t], "no fallback"


async def test_a_button_reads_as_its_kind_and_the_request_names_the_command(
    editor: Editor,
) -> None:
    """An agent that names its allow "Reject" gets an "Allow once" button; two choices
    never read the same; the request says what allowing runs, not the agent's title."""
    options = [
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        {"optionId": "yes", "name": "Reject", "kind": "allow_once"},
        {"optionId": "yes-too", "name": "Reject", "kind": "allow_once"},
        {"optionId": "all", "name": "Yes, allow all edits", "kind": "allow_always"},
    ]
    call = {
        "toolCallId": "t1",
        "title": "Read README.md",
        "kind": "read",
        "rawInput": {"command": "echo pwned > t1.txt"},
    }
    await editor.start(
        {"turns": [[{"toolCall": call}, {"permission": {"toolCall": call, "options": options}}]]}
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "go")
    (request,) = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("permission_request"), what="the request"
    )
    by_label = {option["label"]: option["optionId"] for option in request["options"]}
    assert list(by_label) == [
        "Reject",
        "Allow once",
        "Allow always (Yes, allow all edits)",
        "Allow for this session",
    ]
    assert request["action"] == "echo pwned > t1.txt"
    await editor.goose.request(
        "goose/permission", {"requestId": request["requestId"], "optionId": by_label["Reject"]}
    )
    await editor.goose.turn_end(message_id)
    answers = [m["result"] for m in editor.agent_messages() if "outcome" in m.get("result", {})]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "no"}}]
