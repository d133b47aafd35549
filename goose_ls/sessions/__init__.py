"""Chats on top of the agent: what the LSP floor may use of the floors below.

The LSP floor imports from here, never from ``goose_ls.agent``: the agent's state is
reported through :class:`AgentStatus`, its failures raise :mod:`goose_ls.errors`.
"""

from goose_ls.agent.status import AgentState, AgentStatus
from goose_ls.sessions.checkpoints import Change, in_workspace, review, unified_diff
from goose_ls.sessions.context import ContextItem, path_of
from goose_ls.sessions.elicitations import Elicitations, choices
from goose_ls.sessions.live import Conflict
from goose_ls.sessions.manager import SessionListener, SessionManager
from goose_ls.sessions.permissions import Permissions
from goose_ls.sessions.records import EventRow, events_of
from goose_ls.sessions.retention import Pruned
from goose_ls.sessions.search import Hit
from goose_ls.sessions.session import IndexedEvent, Session

__all__ = [
    "AgentState",
    "AgentStatus",
    "Change",
    "Conflict",
    "ContextItem",
    "Elicitations",
    "EventRow",
    "Hit",
    "IndexedEvent",
    "Permissions",
    "Pruned",
    "Session",
    "SessionListener",
    "SessionManager",
    "choices",
    "events_of",
    "in_workspace",
    "path_of",
    "review",
    "unified_diff",
]
