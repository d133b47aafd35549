"""What the agent asks of the user: permission requests and questions, what waits for an
answer, and what an answer allows for the rest of the turn."""
