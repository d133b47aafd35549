"""Goose Desktop's goosed (goose 1.16 to 1.40): REST and server-sent events, spoken to the
layers above as ACP, so that sessions, permissions and the chat work as with any agent."""
