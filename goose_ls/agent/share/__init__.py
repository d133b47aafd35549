"""``agent.share``: one ``goose serve`` for all of a user's goose-ls processes."""
