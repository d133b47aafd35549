"""The ``goose-ls`` command: serve LSP (stdio or TCP), ``doctor``, ``demo``, ``--version``."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
from typing import Any

from goose_ls import __version__, logs

log = logging.getLogger(__name__)


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="goose-ls",
        description="A language server that brings the goose agent (or any ACP agent) to your editor.",
    )
    p.add_argument("--version", action="version", version=f"goose-ls {__version__}")
    p.add_argument(
        "--tcp", metavar="HOST:PORT", type=_host_port, help="serve LSP on TCP instead of stdio"
    )
    p.add_argument(
        "--log-level", choices=logs.LEVELS, default="info", help="log file level (default info)"
    )
    p.add_argument("--log-file", help="log to this file instead of the user log dir")
    # The same options after a subcommand, without resetting what came before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level", choices=logs.LEVELS, default=argparse.SUPPRESS)
    common.add_argument("--log-file", default=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command")
    doctor = sub.add_parser(
        "doctor",
        parents=[common],
        help="check the agent (binary and version, or server and token) and its handshake",
    )
    doctor.add_argument("--settings", help="settings as JSON (as initializationOptions would be)")
    doctor.add_argument(
        "--url",
        help="check goose serve at this URL (ws://, wss://) instead: reachable, token, handshake",
    )
    doctor.add_argument(
        "--goosed",
        help="check Goose Desktop's goosed at this URL (https://127.0.0.1:PORT) instead",
    )
    doctor.add_argument(
        "--find-goosed",
        nargs="?",
        const=0,
        type=int,
        metavar="PID",
        help="find your running Goose Desktop's goosed (the newest, or the one with this "
        "process id), keep its secret, and check it",
    )
    demo = sub.add_parser(
        "demo", parents=[common], help="run one chat turn through goose-ls as an editor would"
    )
    demo.add_argument("question", nargs="?", help="what to ask (default: a question about a file)")
    demo.add_argument(
        "--file", help="a file to attach as a selection (default: this package's cli.py)"
    )
    demo.add_argument(
        "--scripted", action="store_true", help="use the scripted agent even if goose is installed"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logs.setup(args.log_level, args.log_file)
    if args.command == "doctor":
        from goose_ls.doctor import run_doctor

        return run_doctor(args.settings, args.url, args.goosed, args.find_goosed)
    if args.command == "demo":
        from goose_ls.demo import run_demo

        return run_demo(args.question, args.file, args.scripted)
    return serve(args.tcp)


def serve(tcp: tuple[str, int] | None) -> int:
    # Start-up makes some 100,000 objects (lsprotocol's classes, goose-ls's modules) that
    # live as long as goose-ls: the collector walking them again and again while they are
    # made cost 20-30 ms of the time to answer initialize. Made, they are frozen (never
    # walked again) and collection goes on as usual.
    gc.disable()
    try:
        from goose_ls.lsp.app import create_server
        from goose_ls.workspace import reaper

        server = create_server()
    finally:
        gc.freeze()
        gc.enable()
    # Whatever the agent or its commands start, even with setsid or a double fork, stays
    # below goose-ls and is killed when it stops.
    reaper.become_subreaper()

    def last_words() -> None:
        server.stop_now()
        reaper.kill_all_descendants()

    def on_signal(signum: int, _: Any) -> None:
        # pygls reads stdin in a worker thread that a SystemExit would wait for (until the
        # editor closes the pipe): stop the agent, keep what is known, and leave now.
        log.info("goose-ls stopped by signal %d", signum)
        last_words()
        logging.shutdown()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    if hasattr(signal, "SIGHUP"):  # the editor's terminal closed
        signal.signal(signal.SIGHUP, on_signal)
    where = f"tcp {tcp[0]}:{tcp[1]}" if tcp else "stdio"
    log.info("goose-ls %s serving LSP on %s", __version__, where)
    try:
        if tcp:
            server.start_tcp(*tcp)
        else:
            server.start_io()
    finally:
        # The editor left (exit, closed pipe or a signal): no agent may outlive us.
        last_words()
        log.info("goose-ls stopped")
    return server.exit_code


if __name__ == "__main__":
    sys.exit(main())
