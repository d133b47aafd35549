"""The agent floor: finding, starting, talking to and stopping the ACP agent process."""
