"""``python -m goose_ls.scripted SCRIPT.json``: the scripted agent on stdio (whatever
follows the script, as goose's ``acp``), or with ``serve --host HOST --port PORT`` after
the script, as ``goose serve`` serves goose, spelled as goose spells it (see
:mod:`.serve`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from goose_ls.scripted import sign_in
from goose_ls.scripted.agent import serve
from goose_ls.scripted.script import load_script


def _serve_arguments(words: list[str]) -> argparse.Namespace:
    """goose serve's flags (others, such as ``--with-builtin``, are ignored)."""
    parser = argparse.ArgumentParser(prog="python -m goose_ls.scripted SCRIPT serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3284)
    parser.add_argument("--tls-cert-path", type=Path, help="serve TLS with this certificate")
    parser.add_argument("--tls-key-path", type=Path, help="and this key")
    return parser.parse_known_args(words)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m goose_ls.scripted",
        description="A scripted ACP agent on stdio, or served as goose serve serves goose.",
    )
    parser.add_argument("script", help="the script (JSON)")
    # Arguments after the script (goose's `acp`, a test's agent.args) are ignored, unless
    # they are `serve ...` or one of its terminal sign-ins' own (see sign_in.py).
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    script = load_script(args.script)
    if sign_in.asked(script, extra):  # run as a terminal sign-in: the sign-in, not ACP
        return sign_in.run(script, extra)
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if extra[:1] != ["serve"]:
            asyncio.run(serve(script))
        else:
            from goose_ls.scripted.serve import serve_script  # websockets: only when served

            served = _serve_arguments(extra[1:])
            asyncio.run(
                serve_script(
                    script, served.host, served.port, served.tls_cert_path, served.tls_key_path
                )
            )
    return 0


raise SystemExit(main())
