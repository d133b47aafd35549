"""The pieces of a transcript block, as markdown: a message's content, the paths a tool
call names, an excerpt of its output, the diff of an edit."""

from __future__ import annotations

import html
import json
import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goose_ls import events
from goose_ls.inert import inert, inert_line
from goose_ls.sessions import choices, in_workspace, path_of, unified_diff

NOTHING_CHANGED = "\n"
"""The body of a diff block whose old and new text are the same."""
EXCERPT_LINES = 12
EXCERPT_CHARS = 1200
TerminalOutput = Callable[[str], "str | None"]
"""A terminal's output so far, by its id (None once it is gone)."""


OWN_OPENERS = (
    "# ",
    "<!--",
    "**🔧",
    "> **🔐",
    "> **❓",
    "> **Note:**",
    "> 📋",
    "### 🤖",
    "_🤖",
    "> **💾",
    "> **⚠",
    "> ⚠",
    "> 📎",
    "> Answer with",
    "> Allowing",
    "> Open:",
    "> Agent sandbox",
    "> _",
    "_Permission",
    "_Question",
    "_Turn",
)
"""How goose-ls's own lines begin (titles, markers, tool blocks, cards, notes, context,
answers): a line of agent text that begins so is escaped (see :func:`imitates`)."""
OPENER_LENGTH = max(len(opener) for opener in OWN_OPENERS) + 40
"""How much of a line decides whether it imitates (a heading with a long name too)."""


def imitates(line: str, speakers: tuple[str, ...]) -> bool:
    """Whether a line of agent text begins as goose-ls's own lines do (``speakers``: the
    names goose-ls heads turns with, ``## You`` and the agent's), as markdown shows it:
    up to three spaces before it, and quote markers with or without a space, nested or
    not, read the same."""
    line = _as_shown(line)
    if line.startswith(OWN_OPENERS):
        return True
    if line.startswith("## "):
        name = line[3:]
        return any(name.startswith(speaker) for speaker in speakers)
    return False


_HTML_AS_MARKDOWN = (
    (re.compile(r"<\s*blockquote\b[^>]*>", re.IGNORECASE), "> "),
    (re.compile(r"<\s*/?\s*(?:strong|b)\b[^>]*>", re.IGNORECASE), "**"),
    (re.compile(r"<\s*/?\s*(?:em|i)\b[^>]*>", re.IGNORECASE), "_"),
    (re.compile(r"<(?!!--)[^>]*>"), ""),  # a comment stays: goose-ls's markers are ones
)
"""HTML a markdown view renders as these marks: a line written in it reads as one
written in markdown."""


def _as_shown(line: str) -> str:
    """``line`` with what markdown does not tell apart removed: character references and
    HTML for their markdown (``&#x1F4BE;``, ``<strong>``, ``<blockquote>``), other spaces
    as spaces (a no-break space looks like one), an indent of up to three spaces, and
    the space after a quote marker (``>x`` and `` > x`` read as ``> x``). A quote inside
    a quote (``> > x``) shows as one, so it stays as it is."""
    line = html.unescape(line)
    for tag, mark in _HTML_AS_MARKDOWN:
        line = tag.sub(mark, line)
    line = unicodedata.normalize("NFKC", line).replace("\t", " ")
    indent = len(line) - len(line.lstrip(" "))
    if indent <= 3:
        line = line[indent:]
    if line.startswith(">") and not line.startswith("> "):
        return "> " + line[1:].lstrip(" ")
    return line


def quoted(line: str) -> str:
    """A line of agent text to put after ``> ``, escaped if it would then begin as
    goose-ls's own quoted lines do."""
    return "\\" + line if imitates("> " + line, ()) else line


def content_text(content: events.Json) -> str:
    kind = content.get("type")
    if kind == "text":
        return str(content.get("text", ""))
    if kind == "resource_link":
        return f"[{content.get('name', content.get('uri', ''))}]({content.get('uri', '')})"
    if kind == "resource":
        resource = content.get("resource", {})
        uri = str(resource.get("uri", ""))
        text = resource.get("text")
        body = f"\n{fenced(text)}\n" if isinstance(text, str) and text else ""
        return f"📎 `{describe_uri(uri)}`{body}"
    return f"[{kind or 'content'}]"


IMAGE_KINDS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


def image(content: events.Json, target: str | None) -> str:
    """An image of the chat as a line: the image itself (``target``: where the link to the
    copy goose-ls kept points), or why it is not shown."""
    refused = content.get("refused")
    if target is None or refused is not None:
        why = refused if isinstance(refused, str) else "goose-ls kept no copy of it"
        return f"> ⚠ Image not shown: {inert_line(why)}.\n"
    kind = IMAGE_KINDS.get(str(content.get("mimeType")), "image")
    size = content.get("size")
    about = f", {size_text(size)}" if isinstance(size, int) else ""
    return f"![{kind} image{about}]({target})\n"


def size_text(size: int) -> str:
    """A size in bytes as a person reads it: 812 bytes, 14 KB, 2.4 MB."""
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB"


def images_of(content: list[events.Json] | None) -> list[events.Json]:
    """The image blocks of a tool call's content."""
    return [
        item["content"]
        for item in content or []
        if item.get("type") == "content"
        and isinstance(item.get("content"), dict)
        and item["content"].get("type") == "image"
    ]


def describe_uri(uri: str) -> str:
    base, _, fragment = uri.partition("#")
    path = path_of(base)
    if fragment.startswith("L"):
        first, _, last = fragment[1:].partition("-L")
        if first.isdigit() and last.isdigit():
            return f"{path}:{line_range(int(first), int(last))}"
        return f"{path}:{fragment[1:].replace('-L', '-')}"
    return path


def describe_heading(heading: str, root: str | None) -> str:
    """A selection's heading (``path:8-12``, as the agent was sent it) as shown."""
    path, _, lines = heading.rpartition(":")
    first, _, last = lines.partition("-")
    if path and first.isdigit() and last.isdigit():
        return f"{shown_path(path, root)}:{line_range(int(first), int(last))}"
    return shown_path(heading, root)


def shown_path(path: str, root: str | None) -> str:
    """A path as the transcript shows it: relative to the chat's workspace folder
    ``root`` when inside it, else whole (the home folder as ``~``), so the reader always
    knows which file it is."""
    inside = in_workspace(path, root)
    if inside != path:
        return inside
    home = str(Path.home())
    if home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def line_range(first: int, last: int) -> str:
    """``8-12``, or ``16`` for one line."""
    return str(first) if first == last else f"{first}-{last}"


def target(raw_input: Any, locations: list[events.Json] | None, root: str | None) -> str:
    """What a tool call acts on: its command, URL or query as given, its paths as
    :func:`shown_path` shows them."""
    if isinstance(raw_input, dict):
        for key in ("command", "path", "file", "url", "query"):
            value = raw_input.get(key)
            if isinstance(value, str):
                shown = shown_path(value, root) if key in ("path", "file") else value
                return code_span(inert_line(shown))
    if locations:
        return ", ".join(
            code_span(inert_line(shown_path(str(loc.get("path", "")), root))) for loc in locations
        )
    return ""


def code_span(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds (CommonMark: a longer run of
    backticks around it, padded with spaces when it starts or ends with one)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, info: str = "") -> str:
    """``text`` as a fenced block no line of it can close: the fence is longer than any
    run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


_WHOLE_FENCE = re.compile(r"\A(`{3,}|~{3,})[^\n`]*\n(?P<body>.*)\n\1[ \t]*\Z", re.DOTALL)


def unwrapped(output: str) -> str:
    """A tool's output without the one fence some agents put around all of it (Claude's
    adapter does), so it is not shown as a block inside a block."""
    match = _WHOLE_FENCE.match(output.strip())
    return match.group("body") if match else output


def output(
    content: list[events.Json] | None, raw_output: Any, terminal_output: TerminalOutput
) -> str:
    """What a tool call printed: its text content and terminals, else its raw output."""
    pieces = [
        item["content"].get("text", "")
        for item in content or []
        if item.get("type") == "content" and isinstance(item.get("content"), dict)
    ]
    pieces += [
        terminal_output(str(item.get("terminalId"))) or ""
        for item in content or []
        if item.get("type") == "terminal"
    ]
    if not pieces and raw_output is not None:
        pieces = [raw_output if isinstance(raw_output, str) else json.dumps(raw_output)]
    return "\n".join(p for p in pieces if p)


def excerpt(output: str) -> str:
    text = unwrapped(output).strip()
    if not text:
        return ""
    lines = text.splitlines()
    cut = "\n".join(lines[:EXCERPT_LINES])[:EXCERPT_CHARS]
    return cut + ("\n…" if cut != text else "")


def diffs(content: list[events.Json] | None, root: str | None = None) -> str:
    """The diffs of a tool call, each file named from ``root`` (the chat's workspace)."""
    out = ""
    for item in content or []:
        if item.get("type") != "diff":
            continue
        name = in_workspace(str(item.get("path", "")), root)
        old, new = item.get("oldText"), item.get("newText") or ""
        diff = unified_diff(old or "", new, name, created=old is None)  # ACP: null is new
        out += "\n" + fenced(inert(diff or NOTHING_CHANGED).removesuffix("\n"), "diff") + "\n"
    return out


def disk_changes(event: events.DiskChanges, tool: str | None, root: str | None) -> str:
    """What a tool call really changed on disk, as goose-ls found it: a line naming the
    files (by the tool call's title, which the agent chose: inert), then their diffs."""
    by = f" by {code_span(inert_line(tool))}" if tool else " during the turn"
    named = []
    for file in event.files:
        name = code_span(inert_line(in_workspace(str(file.get("path", "")), root)))
        state = str(file.get("state", "changed"))
        shown = file.get("diff") or state == "removed"
        counts = f" +{file.get('added', 0)} -{file.get('removed', 0)}" if shown else " (not shown)"
        named.append(f"{name} {inert_line(state)}{counts}")
    text = f"> **💾 Changed on disk**{by}: {', '.join(named)}\n"
    for file in event.files:
        if diff := str(file.get("diff") or ""):
            text += "\n" + fenced(inert(diff).removesuffix("\n"), "diff") + "\n"
    return text


def question(event: events.ElicitationRequested, agent: str, tool: str | None = None) -> list[str]:
    """An agent's question as quoted lines: its message, the tool call that asks (its
    title), then the page to open or each field of its form (its type, whether
    required, its choices)."""
    lines = [f"> **❓ {agent} asks:** {inert_line(event.message)}"]
    if tool:
        lines.append(f"> For the tool call {code_span(inert_line(tool))}")
    if event.url is not None:
        return [*lines, f"> Open: <{inert_line(event.url)}>"]
    schema = event.requested_schema or {}
    required = set(schema.get("required") or [])
    for name, prop in (schema.get("properties") or {}).items():
        about = [str(prop.get("type", "?")), *(["required"] if name in required else [])]
        label = prop.get("title") or prop.get("description") or ""
        values = choices(prop) or []
        offered = f": {', '.join(map(str, values))}" if values else ""
        field = f"> - **{name}** ({', '.join(about)}) {label}{offered}".rstrip()
        lines.append(inert_line(field))
    return lines


def plan(title: str, entries: list[events.Json]) -> str:
    """A plan as a checklist under its title."""
    return f"**{title}**\n" + _checklist(entries)


def _checklist(entries: list[events.Json]) -> str:
    return "".join(
        f"- [{'x' if entry.get('status') == 'completed' else ' '}] "
        f"{inert_line(str(entry.get('content', '')))}\n"
        for entry in entries
    )


def plan_document(update: events.PlanUpdate, root: str | None = None) -> str:
    """One plan of several (ACP's plan operations): a checklist, markdown (and the file
    it names, if it does), or a file; a plan of another kind by what it carries of
    those. ``root``: the chat's workspace folder."""
    body = update.plan
    kind = body.get("type")
    entries = body.get("entries")
    checklist = (
        [entry for entry in entries if isinstance(entry, dict)]
        if isinstance(entries, list)
        else None
    )
    if kind == "items":
        return plan("Plan", checklist or [])
    if kind == "file":
        return f"**Plan**: {plan_file(body.get('uri'), root)}\n"
    head = "**Plan**"
    if kind != "markdown":
        head += f" of a kind goose-ls does not know: {code_span(inert_line(str(kind)))}"
    if isinstance(path := body.get("path") or body.get("uri"), str):
        head += f" · {plan_file(path, root)}"
    if kind != "markdown" and checklist is not None:
        return f"{head}\n{_checklist(checklist)}"
    content = body.get("content")
    if not isinstance(content, str) or not content.strip():
        return head + "\n"
    lines = inert(content.strip()).split("\n")  # the agent's text: quoted, as a summary
    return head + "\n" + "".join(f"\n> {quoted(line)}" for line in lines) + "\n"


def plan_file(location: object, root: str | None) -> str:
    """The file a plan names (a path or a ``file://`` URI): a link when it is in the
    workspace folder ``root``, else its path as text. The agent chose it: a link to
    anywhere else would put whatever file it named one click from being opened."""
    text = str(location or "")
    path = path_of(text) if text.startswith("file:") else text
    if not os.path.isabs(path):
        return code_span(inert_line(text or "?"))
    path = os.path.normpath(path)
    shown = code_span(inert_line(shown_path(path, root)))
    if root and _inside(path, root):
        return f"[{shown}]({Path(path).as_uri()})"
    return shown


def _inside(path: str, root: str) -> bool:
    """Whether ``path`` is in the folder ``root`` as named and as the disk resolves it (a
    link in the workspace may lead anywhere)."""
    named = in_workspace(path, os.path.normpath(root)) != path
    resolved = os.path.realpath(path)
    return named and in_workspace(resolved, os.path.realpath(root)) != resolved


COMPACTION_WORDS = {
    "in_progress": "🗜 Compacting the conversation…",
    "completed": "🗜 The conversation was compacted.",
    "cancelled": "🗜 Compacting the conversation was cancelled.",
}


def compaction(event: events.Compaction) -> str:
    """Where a compaction stands, and the summary the agent kept once it is done."""
    if event.status == "failed":
        why = inert_line(event.error or "no reason given")
        return f"> ⚠ **Compacting the conversation failed:** {why}\n"
    text = f"_{COMPACTION_WORDS.get(event.status, f'🗜 Compaction: {event.status}')}_\n"
    summary = "".join(content_text(block) for block in event.summary or [])
    if summary.strip():
        lines = inert(summary.strip()).split("\n")
        text += "".join(f"\n> {quoted(line)}" for line in lines) + "\n"
    return text
