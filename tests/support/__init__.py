"""What the tests share, imported as ``support`` (pytest puts tests/ on ``sys.path``):
the harness (a real goose-ls and an LSP client per test), fake model APIs for the real
agents, a wire tap, tmux and browser drivers for the real editors. It imports pytest and
pytest-lsp, and is not installed: the product ships only the scripted agent
(:mod:`goose_ls.scripted`)."""
