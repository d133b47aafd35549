"""The LSP layer: what the editor sees. The server core wires these feature modules."""
