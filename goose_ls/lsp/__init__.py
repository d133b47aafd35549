"""The LSP floor: what the editor sees. The server core wires these feature modules."""
