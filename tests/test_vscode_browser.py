"""The VS Code extension in a real VS Code: code-server in headless Chromium, set up as
docs/editors/vscode.md says (the .vsix installed), driven by clicks and keys."""

from __future__ import annotations

import base64
import os
import re
import struct
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goose_ls.scripted.script import (
    edit_call,
    prompts,
    replace_in_file,
    scripted_agent_command,
    write_script,
)
from support.browser import SCREEN, Browser, CodeServer, missing, package_extension, wait_for
from support.harness import server_env
from support.turns import GOOSE_LABELS

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

APP = "def add(x, y):\n    return x + y\n\n\ndef sub(x, y):\n    return x - y\n"
EDITED = APP.replace("return x + y\n", "return x + y  # the sum\n")
QUESTION = "Could add say what it returns?"
FIRST = "Let me add a comment to add."
DONE = "Done: the comment is in app.py."
FOLLOW_UP = "And a long answer, please"
LONG = "".join(f"streamed line {n}\n" for n in range(1, 61))
MORE = "".join(f"another line {n}\n" for n in range(1, 61))


@pytest.fixture
def vscode(tmp_path: Path) -> Iterator[tuple[CodeServer, Browser]]:
    """code-server with this checkout's extension installed, and a browser (one at a
    time: each is a few processes and 300 MB)."""
    env = server_env(tmp_path)
    server = CodeServer(tmp_path)
    server.install(package_extension(tmp_path / "extension"), env)
    try:
        server.start(env)
        browser = Browser()
        try:
            yield server, browser
        finally:
            browser.stop()
    finally:
        server.stop()


def _chat(screen: dict[str, Any]) -> str:
    """The chat's lines in view (its tab is named after the session: not a file's)."""
    tabs = [e for e in screen["editors"] if e["tab"] != "app.py" and "change" not in e["tab"]]
    return next((e["text"] for e in tabs if e["text"]), "")


def _asks_to_edit(told: str) -> bool:
    """What allowing does, as goose-ls read it from the request, then the agent's title."""
    said = re.search(r"The agent is waiting for your approval: (.*) \(it calls this “(.*)”\)", told)
    return said is not None and "app.py" in said[1] and said[2] == "Edit app.py"


def _send(browser: Browser, message: str) -> None:
    """Goose: Send a message, from the command palette."""
    browser.run(
        """await page.keyboard.press("Control+Shift+P");
        await page.keyboard.type("Goose: Send a message");
        await page.locator(".quick-input-list .monaco-list-row", {hasText: "Goose: Send a message"}).first().waitFor();
        await page.keyboard.press("Enter");"""
    )
    wait_for(browser, lambda s: s["quickInput"] and s["quickInput"]["items"] == [], "no input box")
    browser.run("await page.keyboard.type(args.text)", text=message)
    browser.run("""await page.keyboard.press("Enter")""")


def _editor(screen: dict[str, Any], tab: str) -> str:
    return next((e["text"] for e in screen["editors"] if e["tab"] == tab), "")


# Packaging, code-server and Chromium take about 50 s of it on 2 idle cores.
@pytest.mark.timeout(360)
def test_ask_about_a_selection_see_the_reply_stream_approve_the_edit(
    vscode: tuple[CodeServer, Browser], tmp_path: Path
) -> None:
    """A person in VS Code is told where to say goose-ls's path when it is not found,
    selects two lines, asks about them, reads the reply while the agent waits for approval,
    reads every choice in full, allows the edit once and saves the file. Nothing else is
    asked of them on the way (no warning about a setting of the extension's own)."""
    server, browser = vscode
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    source = workspace / "app.py"
    source.write_text(APP)
    record = tmp_path / "agent.jsonl"
    record.touch()  # there before the agent: its sandbox lets it write no new file here
    script = {
        "record": str(record),
        "turns": [
            [
                {"text": FIRST, "chunks": 6, "delay": 0.05},
                {"permission": {"toolCall": edit_call(source, APP, EDITED)}},
                {"writeFile": {"path": str(source), "content": EDITED}},
                {"text": DONE},
            ],
            [{"text": LONG, "chunks": 30, "delay": 0.02}],
            [
                {"text": MORE, "chunks": 30, "delay": 0.02},
                {"permission": {"toolCall": {"toolCallId": "t3", "title": "shell · ls"}}},
                {"text": "Listed."},
            ],
        ],
    }
    settings = {
        # Where goose-ls is not: VS Code starts it with the PATH of a login shell, which
        # may not have it. The user is told so, and where to say it.
        "goose.serverPath": str(tmp_path / "nowhere" / "goose-ls"),
        "goose.agent.command": scripted_agent_command(
            write_script(tmp_path / "script.json", script)
        ),
        "workbench.startupEditor": "none",
    }
    server.settings(settings)
    shot = tmp_path / "failed.png"
    browser.run("await page.goto(args.url)", url=f"{server.url}?folder={workspace}")
    wait_for(
        browser,
        lambda s: (
            "goose: goose-ls not started" in s["status"]
            and any(
                "could not start goose-ls" in t and "goose.serverPath" in t for t in s["toasts"]
            )
        ),
        "a goose-ls that cannot start is not told",
        60,
        shot,
    )
    # Its full path, then Reload Window.
    server.settings(
        {**settings, "goose.serverPath": str(Path(sys.executable).with_name("goose-ls"))}
    )
    browser.run("await page.reload()")
    wait_for(browser, lambda s: "goose: idle" in s["status"], "goose-ls did not start", 60, shot)

    browser.run("""await page.getByRole("treeitem", {name: "app.py"}).click()""")
    wait_for(browser, lambda s: "def sub(x, y):" in _editor(s, "app.py"), "no app.py", shot=shot)
    # The first two lines, picked whole with Shift+Down: the selection ends at line 3's start.
    browser.run(
        """await page.locator(".monaco-editor .view-lines").first().click();
        for (const key of ["Control+Home", "Shift+ArrowDown", "Shift+ArrowDown", "Control+Alt+g"])
          await page.keyboard.press(key);"""
    )
    wait_for(
        browser,
        lambda s: s["quickInput"] and "Ask goose" in s["quickInput"]["message"],
        "Ctrl+Alt+G did not ask",
        shot=shot,
    )
    browser.run("await page.keyboard.type(args.text)", text=QUESTION)
    asked = time.monotonic()
    browser.run("""await page.keyboard.press("Enter")""")
    screen = wait_for(browser, lambda s: FIRST[:3] in _chat(s), "no reply on screen", shot=shot)
    print(f"first reply text on screen {time.monotonic() - asked:.2f} s after Enter")
    assert "📎 app.py:1-2" in _chat(screen), "lines 1 and 2, not 3, named from the workspace"

    # The reply streamed in while the turn waits for the approval; the request stays in
    # the status bar when its notification has hidden itself.
    screen = wait_for(
        browser,
        lambda s: (
            FIRST in _chat(s)
            and any(_asks_to_edit(t) for t in s["toasts"])
            and "goose: waits for your approval" in s["status"]
        ),
        "the reply and the approval request are not on screen",
        shot=shot,
    )
    assert DONE not in _chat(screen)
    browser.run(
        """await page.locator(".notification-toast").getByRole("button", {name: "Choose…"}).click()"""
    )
    screen = wait_for(
        browser,
        lambda s: s["quickInput"] and s["quickInput"]["items"],
        "Choose… offered no choices",
        shot=shot,
    )
    change = "Show the change to app.py"
    assert screen["quickInput"]["items"] == [change, *GOOSE_LABELS], "every choice, in full"
    # The change first, in the diff editor; then the choices again.
    browser.run(
        """await page.locator(".quick-input-list .monaco-list-row", {hasText: args.change}).click()""",
        change=change,
    )
    screen = wait_for(
        browser,
        lambda s: s["diffs"] and s["quickInput"] and s["quickInput"]["items"],
        "the change is not shown, or the choices not offered again",
        shot=shot,
    )
    (diff,) = screen["diffs"]
    assert "    return x + y  # the sum" in diff["modified"].split("\n"), diff
    assert "    return x + y" in diff["original"].split("\n"), diff
    if folder := os.environ.get("GOOSE_LS_SCREENS"):
        browser.screenshot(Path(folder) / "vscode-permission.png")
    browser.run(
        """await page.locator(".quick-input-list .monaco-list-row", {hasText: "Allow once"}).click()"""
    )
    browser.run(
        """await page.locator(".tab").filter({has: page.locator(".label-name", {hasText: /^app\\.py$/})}).click()"""
    )
    screen = wait_for(
        browser,
        lambda s: (
            DONE in _chat(s)
            and "goose: idle" in s["status"]
            and "# the sum" in _editor(s, "app.py")
        ),
        "the edit did not land in app.py, or the turn did not end",
        shot=shot,
    )
    assert source.read_text() == APP, "the editor's buffer is edited; saving is the user's"
    browser.run(
        """await page.locator(".editor-group-container").first().locator(".view-lines").first().click();
        await page.keyboard.press("Control+s");"""
    )
    deadline = time.monotonic() + 30
    while source.read_text() != EDITED:
        assert time.monotonic() < deadline, "Ctrl+S did not save the edit"
        time.sleep(0.05)

    # A long reply to a follow-up: the chat, whose end was in view, follows it.
    _send(browser, FOLLOW_UP)
    wait_for(
        browser,
        lambda s: "streamed line 60" in _chat(s) and "goose: idle" in s["status"],
        "the end of the long reply is not in view: the chat did not follow it",
        shot=shot,
    )
    # Scrolled up to read, the chat stays there while the next reply streams in.
    browser.run(
        """await page.locator(".editor-group-container").nth(1).locator(".view-lines").first().click();
        await page.keyboard.press("Control+Home");"""
    )
    wait_for(browser, lambda s: QUESTION in _chat(s), "the chat's start is not in view")
    _send(browser, FOLLOW_UP)
    screen = wait_for(
        browser,
        lambda s: "goose: waits for your approval" in s["status"],
        "the third reply did not come to its question",
        shot=shot,
    )
    assert QUESTION in _chat(screen) and "another line" not in _chat(screen), _chat(screen)
    # Its notification aside, the status bar offers the choices too.
    browser.run(
        """await page.locator(".statusbar-item", {hasText: "goose: waits for your approval"}).click()"""
    )
    screen = wait_for(browser, lambda s: s["quickInput"] and s["quickInput"]["items"], "no choices")
    assert screen["quickInput"]["items"] == GOOSE_LABELS
    browser.run(
        """await page.locator(".quick-input-list .monaco-list-row", {hasText: "Reject"}).first().click()"""
    )
    wait_for(
        browser, lambda s: "goose: idle" in s["status"], "the third turn did not end", shot=shot
    )

    (attached,) = [block for block in prompts(record)[0] if block["type"] == "resource"]
    assert attached["resource"]["text"] == "def add(x, y):\n    return x + y\n", attached
    # The notifications not yet dismissed: none about the extension's own settings.
    browser.run("""await page.locator('[id="status.notifications"]').click()""")
    told = browser.run("""return await page.locator(".notifications-center").innerText()""")
    assert "unknown setting" not in told, told


NUMBERED = "".join(f"x{n} = {n}\n" for n in range(30))
BY_AGENT = NUMBERED.replace("x10 = 10\n", "x10 = 'agent'\n")
AGAIN = BY_AGENT.replace("x20 = 20\n", "x20 = 'agent'\n")


def _palette(browser: Browser, command: str) -> None:
    """Run a command from the command palette."""
    browser.run(
        """await page.keyboard.press("Control+Shift+P");
        await page.keyboard.type(args.command);
        await page.locator(".quick-input-list .monaco-list-row", {hasText: args.command}).first().waitFor();
        await page.keyboard.press("Enter");""",
        command=command,
    )


def _dirty(browser: Browser) -> list[str]:
    """The names of the tabs marked unsaved."""
    return list(
        browser.in_page(
            "return [...document.querySelectorAll('.tab.dirty .label-name')].map(t => t.innerText)"
        )
    )


def _in_app(browser: Browser, *keys: str) -> None:
    """Keys in app.py's editor (the first group)."""
    browser.run(
        """await page.locator(".editor-group-container").first().locator(".view-lines").first().click();
        for (const key of args.keys) await page.keyboard.press(key);""",
        keys=list(keys),
    )


def _newer(screen: dict[str, Any]) -> list[str]:
    return [t for t in screen["toasts"] if "newer" in t]


@pytest.mark.timeout(360)
def test_the_agent_writes_a_file_open_in_vs_code_which_reloads_it_and_a_conflict_is_settled(
    vscode: tuple[CodeServer, Browser], tmp_path: Path
) -> None:
    """The agent writes app.py in its own process while it is open and unchanged: VS
    Code reloads it (goose-ls sends no edit to race that reload), nothing left unsaved,
    no dialog; Ctrl+Z takes the agent's text back and Ctrl+Shift+Z brings it again. With
    unsaved changes of the user's, the agent's next write is a conflict: the chat says
    so, the light bulb's quick fixes offer the three choices, and taking the agent's
    version then saving asks nothing (no "The content of the file is newer")."""
    server, browser = vscode
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text(NUMBERED)
    script = {
        "turns": [
            # Open until cancelled: the reload, not the watch's end, brings the text.
            [replace_in_file(app, "x10 = 10\n", "x10 = 'agent'\n"), {"waitForCancel": True}],
            [replace_in_file(app, "x20 = 20\n", "x20 = 'agent'\n"), {"text": "Changed x20."}],
        ]
    }
    server.settings(
        {
            "goose.serverPath": str(Path(sys.executable).with_name("goose-ls")),
            "goose.agent.command": scripted_agent_command(
                write_script(tmp_path / "script.json", script)
            ),
            "workbench.startupEditor": "none",
            "workbench.editor.enablePreview": False,
            "files.autoSave": "off",  # VS Code's own default (code-server saves after a delay)
        }
    )
    shot = tmp_path / "failed.png"
    browser.run("await page.goto(args.url)", url=f"{server.url}?folder={workspace}")
    wait_for(browser, lambda s: "goose: idle" in s["status"], "goose-ls did not start", 60, shot)
    browser.run("""await page.getByRole("treeitem", {name: "app.py"}).click()""")
    wait_for(browser, lambda s: "x1 = 1" in _editor(s, "app.py"), "no app.py", shot=shot)

    _send(browser, "Change x10")
    screen = wait_for(
        browser,
        lambda s: "x10 = 'agent'" in _editor(s, "app.py"),
        "app.py's editor does not show the agent's text",
        shot=shot,
    )
    assert app.read_text() == BY_AGENT
    assert _dirty(browser) == [] and not screen["toasts"], "reloaded: nothing unsaved, asked"
    _palette(browser, "Goose: Cancel the turn")
    wait_for(browser, lambda s: "goose: idle" in s["status"], "the turn did not end", shot=shot)
    _in_app(browser, "Control+z")
    wait_for(
        browser,
        lambda s: "x10 = 10" in _editor(s, "app.py") and _dirty(browser) == ["app.py"],
        "Ctrl+Z did not take the agent's text back",
        shot=shot,
    )
    _in_app(browser, "Control+Shift+z")
    wait_for(
        browser,
        lambda s: "x10 = 'agent'" in _editor(s, "app.py") and _dirty(browser) == [],
        "Ctrl+Shift+Z did not bring it again",
        shot=shot,
    )

    # Unsaved changes meet the agent's next write: a conflict.
    _in_app(browser, "Control+Home")
    browser.run("await page.keyboard.type('# mine\\n')")
    wait_for(browser, lambda s: _dirty(browser) == ["app.py"], "the typing is not unsaved")
    _send(browser, "Change x20")
    screen = wait_for(
        browser,
        lambda s: "app.py changed on disk while your buffer of it has unsaved changes" in _chat(s),
        "the chat does not tell the conflict",
        shot=shot,
    )
    assert "# mine" in _editor(screen, "app.py") and "x20 = 20" in _editor(screen, "app.py")
    assert app.read_text() == AGAIN, "both kept: the agent's on disk, the user's in the editor"
    _in_app(browser, "Control+.")
    rows = ".action-widget .monaco-list-row"
    wait_for(
        browser,
        lambda s: browser.in_page(f"return document.querySelectorAll('{rows}').length") > 0,
        "no quick fixes",
        shot=shot,
    )
    items = browser.in_page(
        f"return [...document.querySelectorAll('{rows}')].map(r => r.innerText)"
    )
    choices = [
        "Goose: Take the agent's version",
        "Goose: Keep my version",
        "Goose: Compare with the agent's version",
    ]
    assert items[: len(choices) + 1] == ["Quick Fix", *choices], items
    browser.run("await page.keyboard.press('Enter')")  # the first: take the agent's version
    screen = wait_for(
        browser,
        lambda s: "x20 = 'agent'" in _editor(s, "app.py") and "# mine" not in _editor(s, "app.py"),
        "the agent's version was not taken",
        shot=shot,
    )
    _in_app(browser, "Control+s")
    deadline = time.monotonic() + 30
    while _dirty(browser):
        assert time.monotonic() < deadline, "Ctrl+S did not save"
        time.sleep(0.05)
    assert app.read_text() == AGAIN
    assert not _newer(browser.in_page(SCREEN)), "no dialog that the file is newer"
    copies = list((tmp_path / "xdg-data" / "goose-ls" / "conflicts").rglob("yours-app.py"))
    assert [c.read_text() for c in copies] == ["# mine\n" + BY_AGENT], "the user's text kept"


FORK_TURNS = [
    [{"text": "First answer.", "messageId": "msg_01"}],
    [{"text": "Second answer.", "messageId": "msg_02"}],
]


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A PNG of one pixel, base64."""


def _one_pixel(png: str) -> bytes:
    """The colour (RGB) of a one-pixel PNG, base64: its first row's one pixel, whatever
    the filter (none to the left or above it, so every filter stores it as it is)."""
    data = base64.b64decode(png)
    assert data[16:24] == struct.pack(">II", 1, 1), "one pixel"
    at, compressed = 8, b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            compressed += data[at + 8 : at + 8 + length]
        at += 12 + length
    return zlib.decompress(compressed)[1:4]


def _paste_image(browser: Browser, png: str, shot: Path) -> None:
    """Copy a PNG (to the browser's clipboard), run Goose: Paste an image, press Ctrl+V in
    its panel; the extension says it is attached, and the panel closes."""
    browser.run(
        """await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await page.evaluate(async (png) => {
          const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
          const blob = new Blob([bytes], {type: "image/png"});
          await navigator.clipboard.write([new ClipboardItem({"image/png": blob})]);
        }, args.png);
        await page.keyboard.press("Control+Shift+P");
        await page.keyboard.type("Goose: Paste an image");
        await page.locator(".quick-input-list .monaco-list-row", {hasText: "Goose: Paste an image"}).first().waitFor();
        await page.keyboard.press("Enter");
        const area = async () => {
          for (const frame of page.frames()) {
            const found = frame.locator("#area");
            if (await found.count().catch(() => 0)) return found;
          }
          return null;
        };
        for (const deadline = Date.now() + 30000; ; await page.waitForTimeout(100)) {
          const found = await area();
          if (found) {
            await found.click();
            await page.keyboard.press("Control+V");
            break;
          }
          if (Date.now() > deadline) throw new Error(`no paste panel in ${page.frames().map((f) => f.url())}`);
        }""",
        png=png,
    )
    wait_for(
        browser,
        lambda s: any("1 image(s) attached" in t for t in s["toasts"]),
        "the pasted image not attached",
        shot=shot,
    )


def _lenses(browser: Browser) -> list[str]:
    """The CodeLenses shown, by their text."""
    return list(
        browser.in_page(
            "return [...document.querySelectorAll('.codelens-decoration a')].map(a => a.innerText)"
        )
    )


def test_fork_chat_here_over_the_first_turn_then_paste_an_image_into_the_fork(
    vscode: tuple[CodeServer, Browser], tmp_path: Path
) -> None:
    """Two turns (goose's shape: a fork it does not advertise): each is headed by a "Fork
    chat here" CodeLens once it has ended; a click on the first one's opens the new chat,
    with that turn only, where the next message goes, with an image the user copied and
    pasted (Ctrl+V in the paste panel: the browser's clipboard, as a person's)."""
    server, browser = vscode
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    record = tmp_path / "agent.jsonl"
    record.touch()  # there before the agent: its sandbox lets it write no new file here
    script = {"record": str(record), "turns": [*FORK_TURNS, [{"text": "Reply in the fork."}]]}
    server.settings(
        {
            "goose.serverPath": str(Path(sys.executable).with_name("goose-ls")),
            "goose.agent.command": scripted_agent_command(
                write_script(tmp_path / "script.json", script)
            ),
            "workbench.startupEditor": "none",
        }
    )
    shot = tmp_path / "failed.png"
    browser.run("await page.goto(args.url)", url=f"{server.url}?folder={workspace}")
    wait_for(browser, lambda s: "goose: idle" in s["status"], "goose-ls did not start", 60, shot)
    _send(browser, "first question")
    # The first turn waits for the agent and the editor to settle while the rest of the suite
    # starts beside it (npm, tsc, other editors): 30 s was once too short there.
    wait_for(browser, lambda s: "First answer." in _chat(s), "no first reply", 60, shot)
    _send(browser, "second question")
    wait_for(
        browser,
        lambda s: "Second answer." in _chat(s) and _lenses(browser) == ["Fork chat here"] * 2,
        "no lens over each ended turn",
        shot=shot,
    )
    browser.run(
        """await page.locator(".codelens-decoration a", {hasText: "Fork chat here"}).first().click()"""
    )
    screen = wait_for(browser, lambda s: "Forked from" in _chat(s), "the fork not shown", shot=shot)
    chat = _chat(screen)
    assert "first question" in chat and "First answer." in chat, chat
    assert "second question" not in chat and "Second answer." not in chat, chat
    _paste_image(browser, PIXEL, shot)
    _send(browser, "go on")
    wait_for(
        browser, lambda s: "Reply in the fork." in _chat(s), "the fork did not answer", shot=shot
    )
    forks = [line for line in record.read_text().splitlines() if '"session/fork"' in line]
    assert len(forks) == 1, forks
    *_, (text, image) = prompts(record)
    assert text == {"type": "text", "text": "go on"}
    # The browser's clipboard gives the image again as a PNG of its own making: the same
    # one red pixel, not the same bytes.
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert _one_pixel(image["data"]) == _one_pixel(PIXEL) == b"\xff\x00\x00"
