"""goose-ls: a language server that brings an ACP agent (goose by default) into any LSP editor."""

__version__ = "0.1.0"
