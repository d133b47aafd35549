"""The workspace layer: what the agent may read, write and run, and how."""
