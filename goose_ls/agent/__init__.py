"""The agent layer: finding, starting, talking to and stopping the ACP agent process."""
