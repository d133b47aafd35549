"""The journal: what goose-ls keeps of every chat across restarts, in one SQLite file."""
