"""The ACP conversation with the agent: JSON-RPC messages, the SDK client and connection,
the requests goose-ls makes and the updates it reads past the SDK."""
