"""How messages reach the agent: its pipes as a child process, or a server at
``agent.url`` over a WebSocket or streamable HTTP."""
