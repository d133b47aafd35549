"""The session floor: chats, their turns, their numbered events, and prompt context."""
