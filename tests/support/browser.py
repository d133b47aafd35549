"""A real VS Code for tests: code-server with the extension installed from its .vsix, in
the system's headless Chromium, driven through playwright-core as a person clicks and
types. ``scripts/fetch-vscode.sh`` fetches code-server, playwright-core and vsce into
``~/.cache/goose-ls/vscode``; the browser is Debian's ``chromium``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

CHECKOUT = Path(__file__).resolve().parent.parent.parent
CACHE = Path(os.environ.get("GOOSE_LS_VSCODE", Path.home() / ".cache" / "goose-ls" / "vscode"))
CODE_SERVER = CACHE / "bin" / "code-server"
VSCE = CACHE / "bin" / "vsce"
PLAYWRIGHT = CACHE / "lib" / "playwright-core"
CHROMIUM = shutil.which("chromium")
NPM = shutil.which("npm")
DRIVER = Path(__file__).with_name("browser.js")


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    lacking = [
        name
        for name, there in (
            ("code-server", CODE_SERVER.exists()),
            ("playwright-core", PLAYWRIGHT.exists()),
            ("vsce", VSCE.exists()),
            ("chromium", CHROMIUM is not None),
            ("npm", NPM is not None),
        )
        if not there
    ]
    if not lacking:
        return None
    return (
        f"{', '.join(lacking).upper()} MISSING: the VS Code browser tests did not run "
        "(scripts/fetch-vscode.sh; apt-get install chromium)"
    )


def package_extension(folder: Path) -> Path:
    """The extension of this checkout, built in ``folder`` (a copy: the node tests build
    in the checkout meanwhile) and packaged as a .vsix, as docs/editors/vscode.md says."""
    assert NPM is not None
    source = CHECKOUT / "editors" / "vscode"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"))
    for step in (
        [NPM, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        [NPM, "run", "compile"],
        [str(VSCE), "package", "--allow-missing-repository", "--skip-license"],
    ):
        done = subprocess.run(
            step, cwd=folder, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"{step}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    (vsix,) = folder.glob("*.vsix")
    return vsix


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CodeServer:
    """One code-server on a port of its own, its user data, settings and extensions in
    ``home`` (the test's folder)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.user_data = home / "code-user-data"
        self.extensions = home / "code-extensions"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def _command(self, *args: str) -> list[str]:
        return [
            str(CODE_SERVER),
            "--config", str(self.home / "code-server.yaml"),
            "--user-data-dir", str(self.user_data),
            "--extensions-dir", str(self.extensions),
            *args,
        ]  # fmt: skip

    def install(self, vsix: Path, env: Mapping[str, str]) -> None:
        """Install an extension, as Extensions → Install from VSIX does."""
        done = subprocess.run(
            self._command("--install-extension", str(vsix)),
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr

    def settings(self, settings: Mapping[str, Any]) -> None:
        """The user's settings.json."""
        folder = self.user_data / "User"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")

    def start(self, env: Mapping[str, str]) -> None:
        """Serve, with ``env`` (each window's extension host gets it, less PATH: VS Code
        takes that from a login shell)."""
        self._log = (self.home / "code-server.log").open("wb")
        self._process = subprocess.Popen(
            self._command(
                "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}",
                "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
            ),
            env=dict(env), stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "healthz", timeout=5):
                    return
            except (urllib.error.URLError, ConnectionError):
                assert self._process.poll() is None, self.log()
                assert time.monotonic() < deadline, "code-server did not answer; " + self.log()
                time.sleep(0.1)

    def log(self) -> str:
        path = self.home / "code-server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        """End code-server and every process it started (extension hosts, goose-ls)."""
        if self._process is not None and self._process.poll() is None:
            os.killpg(self._process.pid, 15)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, 9)
                self._process.wait()
        if self._log is not None:
            self._log.close()


class Browser:
    """A headless Chromium page; :meth:`run` runs JavaScript with ``page`` (playwright's)
    and ``args`` in scope and returns its result."""

    def __init__(self) -> None:
        assert CHROMIUM is not None
        self._node = subprocess.Popen(
            ["node", str(DRIVER), str(PLAYWRIGHT), CHROMIUM],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._asked = 0

    def run(self, code: str, /, **args: Any) -> Any:
        assert self._node.stdin is not None and self._node.stdout is not None
        self._asked += 1
        self._node.stdin.write(json.dumps({"id": self._asked, "code": code, "args": args}) + "\n")
        self._node.stdin.flush()
        line = self._node.stdout.readline()
        assert line, f"the browser driver exited ({self._node.wait()})"
        answer = json.loads(line)
        if "error" in answer:
            raise AssertionError(answer["error"])
        return answer["value"]

    def in_page(self, body: str) -> Any:
        """The result of ``body``, a function's body run in the page."""
        return self.run("return await page.evaluate(args.code)", code=f"(() => {{{body}}})()")

    def screenshot(self, path: Path) -> None:
        """The page as drawn: after two animation frames, so what changed is painted."""
        self.run(
            """await page.evaluate(() => new Promise((painted) =>
              requestAnimationFrame(() => requestAnimationFrame(painted))));
            await page.screenshot({path: args.path});""",
            path=str(path),
        )

    def stop(self) -> None:
        if self._node.stdin is not None:
            self._node.stdin.close()
        try:
            self._node.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._node.kill()
            self._node.wait()


SCREEN = """
const text = (node) => (node ? node.innerText : "").replace(/\\u00a0/g, " ");
const shown = (node) => node !== null && node.offsetParent !== null;
// An editor's lines as drawn (Monaco keeps them in no order in the page: each by its top).
const lines = (editor) => [...editor.querySelectorAll(".view-line")]
  .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
  .map(text).join("\\n");
const quickInput = document.querySelector(".quick-input-widget");
return {
  editors: [...document.querySelectorAll(".editor-group-container")].map((group) => {
    const editor = group.querySelector(".monaco-editor");
    return { tab: text(group.querySelector(".tab.active .label-name")), text: editor ? lines(editor) : "" };
  }),
  diffs: [...document.querySelectorAll(".monaco-diff-editor")].filter(shown).map((diff) => ({
    original: lines(diff.querySelector(".editor.original")),
    modified: lines(diff.querySelector(".editor.modified")),
  })),
  toasts: [...document.querySelectorAll(".notification-toast")].filter(shown).map(text),
  quickInput: shown(quickInput) ? {
    title: text(quickInput.querySelector(".quick-input-title")),
    placeholder: quickInput.querySelector("input")?.getAttribute("placeholder") ?? "",
    message: text(quickInput.querySelector(".quick-input-message")),
    items: [...quickInput.querySelectorAll(".monaco-list-row")].map((row) => row.getAttribute("aria-label")),
  } : null,
  status: text(document.querySelector(".statusbar")),
};
"""
"""What a person sees of the VS Code window (run in the page), as JSON: each editor
group's active tab and its lines, the diff editors' two sides, the notifications, the
quick input, the status bar."""


def wait_for(
    browser: Browser, seen: Any, what: str, timeout: float = 30, shot: Path | None = None
) -> dict[str, Any]:
    """The screen (:data:`SCREEN`) once ``seen`` holds for it; else fail, showing it (and
    keeping a screenshot at ``shot``)."""
    deadline = time.monotonic() + timeout
    screen: dict[str, Any] = browser.in_page(SCREEN)
    while not seen(screen):
        if time.monotonic() > deadline:
            if shot is not None:
                browser.screenshot(shot)
            raise AssertionError(f"{what}; the screen:\n{json.dumps(screen, indent=1)}")
        time.sleep(0.05)
        screen = browser.in_page(SCREEN)
    return screen
