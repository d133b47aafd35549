"""Reading a shell line the way the shell will, so that command rules mean what they say.

A rule like ``allow "cargo test"`` must not allow ``cargo test; curl … | sh``, and
``deny "rm -rf"`` must catch ``/bin/rm -rf``. The line is parsed with bashlex (a port of
bash's own grammar); what it cannot parse is :data:`None`, and the policy asks.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

PLAIN_REDIRECTS = {">", ">>", "<", ">|"}
WRAPPERS = {
    *("sudo", "doas", "env", "command", "exec", "nice", "nohup", "time", "timeout", "xargs"),
    *("find", "nsenter", "unshare", "chroot", "setsid", "stdbuf", "ionice", "flock", "busybox"),
}
"""Programs that run a later word as a program: ``sudo rm -rf`` runs ``rm -rf``, and
``find . -exec rm -rf {} +`` runs ``rm -rf``."""
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"}
"""Programs whose ``-c`` argument is itself a shell line: ``bash -c "rm -rf /"``."""
NESTING = 8
PARSE_LIMIT = 64 * 1024
"""The longest line parsed: bashlex takes time that grows faster than the line (6 s for
400 KB), on goose-ls's event loop; a longer line is one no rule can read (so asked)."""
"""How deep ``bash -c "sh -c '…'"`` is followed; deeper lines are not understood."""


@attrs.frozen
class Parsed:
    commands: tuple[tuple[str, ...], ...]
    """Every simple command of the line, nested ones too (in ``$(...)``, subshells,
    pipelines), as its words with the program as spelled."""
    simple: bool
    """The line is one command: no ``;``, ``&&``, ``||``, ``|``, ``&``, ``$(...)``,
    backticks, subshells, expansions or ``VAR=value`` prefixes."""
    redirect_targets: tuple[str, ...] = ()
    """Files the single command's plain redirections (``>``, ``<``...) name."""
    opaque: str | None = None
    """Why no rule can tell what the line runs, if so: a program named by an expansion
    (``$(printf rm) -rf``), or a shell reading its commands from its input (``… | sh``)."""


def parse(line: str, depth: int = 0) -> Parsed | None:
    """The line's commands, or None when it cannot be parsed (or has none). The commands
    include those of the lines it hands a shell (``bash -c LINE``, ``eval LINE``)."""
    import bashlex  # builds its grammar tables on import (0.15 s): only when a rule needs it

    if len(line) > PARSE_LIMIT:
        return None
    try:
        trees = bashlex.parse(line)
    except Exception:  # bashlex raises its own errors, and others on odd input
        return None
    nodes = [node for node in _nodes(trees) if node.kind == "command"]
    commands = tuple(_words(node, line) for node in nodes)
    if not commands or any(not words for words in commands):
        return None
    opaque = next(filter(None, (_opaque(node, line) for node in nodes)), None)
    for line_run in filter(None, (_handed_line(command) for command in commands)):
        nested = parse(line_run, depth + 1) if depth < NESTING else None
        if nested is None:
            return None
        commands += nested.commands
        opaque = opaque or nested.opaque
    top = trees[0]
    simple = len(trees) == 1 and top.kind == "command" and len(commands) == 1
    targets: list[str] = []
    for part in top.parts if simple else ():
        if part.kind == "word" and not getattr(part, "parts", None):
            continue
        if part.kind == "redirect" and _fd_copy(part):
            continue
        if part.kind == "redirect" and part.type in PLAIN_REDIRECTS and _plain(part.output):
            targets.append(part.output.word)
            continue
        simple = False
    return Parsed(commands, simple, tuple(targets), opaque)


def argv_line(argv: Sequence[str]) -> str:
    """The shell line an argv runs, to be judged as one: ``["bash", "-lc", LINE]`` (any
    shell, ``-c`` or ``-lc``) is LINE; any other argv is its words quoted (``shlex.join``),
    so that ``["curl", "x"]`` is ``curl x``."""
    if len(argv) == 3 and os.path.basename(argv[0]) in SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return shlex.join(argv)


def program(words: tuple[str, ...]) -> tuple[str, ...]:
    """The command with its program by basename: ``/bin/rm -rf`` is ``rm -rf``."""
    return (os.path.basename(words[0]), *words[1:]) if words else words


def programs(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """What a command may run, programs by basename: itself, and behind a wrapper
    (``sudo -u root rm -rf``) every tail of its words, so a deny rule errs on refusing."""
    runs = [program(words)]
    if runs[0] and runs[0][0] in WRAPPERS:
        runs += [program(words[i:]) for i in range(1, len(words))]
    return runs


def covers(run: tuple[str, ...], rule: tuple[str, ...]) -> bool:
    """Whether ``run`` does what a deny or ask ``rule`` names, however its options are
    ordered or grouped: ``rm -rf`` covers ``rm -fr x``, ``rm -r -f x`` and ``rm -vrf x``."""
    if not run or not rule or run[0] != rule[0]:
        return False
    return set(_options(rule[1:])) <= set(_options(run[1:]))


def _options(words: tuple[str, ...]) -> list[str]:
    """Words with grouped short options split: ``-rf`` is ``-r`` and ``-f``."""
    split: list[str] = []
    for word in words:
        if len(word) > 2 and word[0] == "-" and word[1] != "-" and word[1:].isalnum():
            split += [f"-{letter}" for letter in word[1:]]
        else:
            split.append(word)
    return split


def _handed_line(words: tuple[str, ...]) -> str | None:
    """The line a command hands a shell to run (``bash -lc LINE``, ``sh -e -c -- LINE``,
    ``bash -O extglob -c LINE``, ``env -S LINE``, ``eval A B``), if any."""
    for run in programs(words):
        if run[0] == "eval" and len(run) > 1:
            return " ".join(run[1:])
        if run[0] == "env":
            for index, word in enumerate(run[1:], 1):
                if word in ("-S", "--split-string") and index + 1 < len(run):
                    return run[index + 1]
                if word.startswith("--split-string="):
                    return word.split("=", 1)[1]
        if run[0] in SHELLS and (line := _shell_line(run)) is not None:
            return line
    return None


SHELL_OPTIONS_WITH_VALUE = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}
"""Shell options whose value is the next word (``bash -O extglob -c …``)."""


def _shell_line(run: tuple[str, ...]) -> str | None:
    """The line after a shell's ``-c`` (in any cluster of short options, after any other
    options and ``--``), or None when it runs no ``-c`` line."""
    command = False
    index = 1
    while index < len(run):
        word = run[index]
        if word == "--" or word == "-":
            index += 1
            break
        if word in SHELL_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if word.startswith("--"):
            index += 1
            continue
        if len(word) > 1 and word[0] in "-+":
            command = command or (word[0] == "-" and "c" in word[1:])
            index += 2 if word[-1] in "oO" else 1
            continue
        break
    return run[index] if command and index < len(run) else None


def _reads_input(words: tuple[str, ...]) -> bool:
    """A shell given no line and no script: it runs what comes on its input (``… | sh``),
    which no rule can read."""
    run = program(words)
    if not run or run[0] not in SHELLS or _shell_line(run) is not None:
        return False
    rest = [word for word in run[1:] if not word.startswith(("-", "+"))]
    return not rest or "-s" in run[1:]


def rule_words(command: str) -> tuple[str, ...] | None:
    """A rule's command as words (``"cargo "`` is ``cargo``); None when not one command."""
    parsed = parse(command)
    if parsed is None or not parsed.simple or parsed.redirect_targets:
        return None
    return parsed.commands[0]


def _fd_copy(node: Any) -> bool:
    """``2>&1``: a copy of one descriptor onto another, no file involved."""
    return node.type in (">&", "<&") and isinstance(node.output, int)


def _plain(node: Any) -> bool:
    return getattr(node, "kind", None) == "word" and not getattr(node, "parts", None)


def _opaque(node: Any, line: str) -> str | None:
    words = [part for part in node.parts if part.kind == "word"]
    if not words:
        return None
    first = line[words[0].pos[0] : words[0].pos[1]]
    if "$" in first or "`" in first:
        return f"the program it runs is computed ({first})"
    if _reads_input(_words(node, line)):
        return "a shell runs what comes on its input"
    return None


def _words(node: Any, line: str) -> tuple[str, ...]:
    return tuple(_unquoted(part, line) for part in node.parts if part.kind == "word")


def _unquoted(part: Any, line: str) -> str:
    """A word as the shell passes it on: bashlex leaves the quotes inside a word that
    joins several quoted pieces (``'a '"'"'b'`` is ``a 'b``), so the word's own text is
    read again with POSIX quoting; a word with an expansion stays as bashlex has it."""
    source = line[part.pos[0] : part.pos[1]]
    if "$" in source or "`" in source:
        return str(part.word)
    try:
        tokens = shlex.split(source)
    except ValueError:
        return str(part.word)
    return tokens[0] if len(tokens) == 1 else str(part.word)


def _nodes(items: Any) -> Iterator[Any]:
    """Every node under ``items``, whatever field holds it (parts, list, command...)."""
    from bashlex.ast import node

    for item in items if isinstance(items, list) else [items]:
        if not isinstance(item, node):
            continue
        yield item
        for value in vars(item).values():
            if isinstance(value, (list, node)):
                yield from _nodes(value)
