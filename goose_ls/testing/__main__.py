"""``python -m goose_ls.testing SCRIPT.json``: the scripted agent on stdio, or with
``--serve`` as goose serve serves goose (see :mod:`.serve`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from goose_ls.testing import sign_in
from goose_ls.testing.agent import serve
from goose_ls.testing.script import load_script


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m goose_ls.testing",
        description="A scripted ACP agent on stdio, or served as goose serve serves goose.",
    )
    parser.add_argument("script", help="the script (JSON)")
    parser.add_argument("--serve", metavar="[HOST:]PORT", help="serve ACP over WebSocket")
    parser.add_argument("--tls-cert-path", type=Path, help="serve TLS with this certificate")
    parser.add_argument("--tls-key-path", type=Path, help="and this key")
    # Arguments after the script (a test's agent.args) are ignored, unless they are one of
    # its terminal sign-ins' own (see sign_in.py).
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    script = load_script(args.script)
    if sign_in.asked(script, extra):  # run as a terminal sign-in: the sign-in, not ACP
        return sign_in.run(script, extra)
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if args.serve is None:
            asyncio.run(serve(script))
        else:
            from goose_ls.testing.serve import serve_script  # websockets: only when served

            host, _, port = args.serve.rpartition(":")
            asyncio.run(
                serve_script(
                    script, host or "127.0.0.1", int(port), args.tls_cert_path, args.tls_key_path
                )
            )
    return 0


raise SystemExit(main())
