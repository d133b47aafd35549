"""The workspace floor: what the agent may read, write and run, and how."""
