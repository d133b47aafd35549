"""Chats on top of the agent: what the LSP layer may use of the layers below.

The LSP layer imports from here, never from a module of this package nor from
``goose_ls.agent`` (import-linter holds both): :class:`SessionManager` is the one entry,
the agent's state is reported through :class:`AgentStatus`, its failures raise
:mod:`goose_ls.errors`.
"""

from goose_ls.agent.status import AgentState, AgentStatus
from goose_ls.sessions.asking.elicitations import QuestionAnswers, choices
from goose_ls.sessions.asking.permissions import PermissionAnswers
from goose_ls.sessions.changes import Change, in_workspace, review, unified_diff
from goose_ls.sessions.context import ContextItem, PromptImage, path_of
from goose_ls.sessions.images import KEPT_IMAGE, is_pasted, named_image, safe_name
from goose_ls.sessions.journal.records import EventRow, events_of
from goose_ls.sessions.journal.retention import Pruned
from goose_ls.sessions.journal.search import Hit
from goose_ls.sessions.live import Conflict, OpenFiles
from goose_ls.sessions.manager import Forked, SessionListener, SessionManager
from goose_ls.sessions.session import IndexedEvent, Session

__all__ = [
    "KEPT_IMAGE",
    "AgentState",
    "AgentStatus",
    "Change",
    "Conflict",
    "ContextItem",
    "EventRow",
    "Forked",
    "Hit",
    "IndexedEvent",
    "OpenFiles",
    "PermissionAnswers",
    "PromptImage",
    "Pruned",
    "QuestionAnswers",
    "Session",
    "SessionListener",
    "SessionManager",
    "choices",
    "events_of",
    "in_workspace",
    "is_pasted",
    "named_image",
    "path_of",
    "review",
    "safe_name",
    "unified_diff",
]
