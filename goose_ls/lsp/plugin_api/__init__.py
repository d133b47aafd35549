"""The plugin protocol: the goose/* requests and notifications the editor plugins speak
(the contract is docs/protocol.md)."""
