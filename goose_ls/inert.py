"""Text from the agent made inert before a person or a log sees it.

A prompt-injected agent controls every title, label, message and chunk it sends. Shown
as they are, some characters act instead of being read: ESC and the other C0 and C1
controls start terminal sequences (OSC 52 writes the clipboard of whoever ``cat``s the
log), ``\\r`` overwrites a line so a forged one takes its place, bidirectional overrides
reorder what a line seems to say, and zero-width characters hide text or make two
different strings look the same. Each is shown instead as its escape (``\\x1b``,
``\\u202e``), visible and never interpreted. Newlines and tabs stay where the text is a
block (a reply); on one line (a title, a label, a log record) they are escaped too.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
_SEPARATORS = "\u2028\u2029"
"""The Unicode line and paragraph separators: a line break to some readers, none to
others, so a line would read differently in each."""
_ACTING = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}{_SEPARATORS}]")
_ACTING_ON_A_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}{_SEPARATORS}]")
_JOINER = "\u200d"


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == _JOINER and _between_emoji(match.string, match.start()):
        return char  # 👩‍💻: one emoji drawn from several, nothing hidden
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _between_emoji(text: str, at: int) -> bool:
    return 0 < at < len(text) - 1 and _emoji(text[at - 1]) and _emoji(text[at + 1])


def _emoji(char: str) -> bool:
    code = ord(char)
    return code >= 0x1F000 or 0x2600 <= code <= 0x27BF or code == 0xFE0F


_ASCII_ACTING = [chr(code) for code in [*range(0x09), *range(0x0B, 0x20), 0x7F]]
"""What :data:`_ACTING` finds in ASCII text."""


def _acts(text: str) -> bool:
    """Whether ``text`` holds something :data:`_ACTING` finds. A long ASCII text (most of
    a streamed reply) is searched for each of the few characters that act in ASCII, each
    search a ``memchr``: 100 KB in 50 us, where the pattern took 1.6 ms."""
    if len(text) > 256 and text.isascii():
        return any(char in text for char in _ASCII_ACTING)
    return _ACTING.search(text) is not None


def inert(text: str) -> str:
    """A block of agent text (a reply, an output) with what would act shown escaped;
    newlines and tabs kept."""
    return _ACTING.sub(_escape, text) if _acts(text) else text


def inert_line(text: str) -> str:
    """One line of agent text (a title, a label, a popup's message, a log record): also
    its newlines and tabs escaped, so it cannot forge a line of its own."""
    return _ACTING_ON_A_LINE.sub(_escape, text) if _ACTING_ON_A_LINE.search(text) else text


def inert_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with every character that would act, or end a
    line for some readers (NEL, the Unicode line and paragraph separators), as its
    ``\\uXXXX`` escape: the same JSON, on one line, inert when printed."""
    return _IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_IN_JSON = re.compile(f"[\x00-\x1f\x7f-\x9f{_SEPARATORS}{_BIDI}{_INVISIBLE}]")


AGENT_NAME_LENGTH = 40
"""Characters of the agent's name shown: it labels headings, cards and messages."""


USER_LABELS = ("you", "me")
"""The words goose-ls labels the user's own messages with (``## You``, a fork summary's
``Me:``): a name that begins with one would head the agent's words as the user's."""


@functools.lru_cache(maxsize=64)  # asked for as chunks stream; a chat's agent rarely changes
def agent_name(name: str | None, unnamed: str = "agent") -> str:
    """The name the agent gave itself (``agentInfo.title``, else its name), inert, on one
    line and short: the agent chose it. ``unnamed`` when it gave none; one that reads as
    the user's own label (``You``) is shown as ``agent (You)``."""
    shown = inert_line(name or "").strip()[:AGENT_NAME_LENGTH]
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", shown).casefold())
    if words and words[0] in USER_LABELS:
        return f"agent ({shown})"[:AGENT_NAME_LENGTH]
    return shown or unnamed
