"""`tether chat`'s entry: the interactive chat on a terminal, `tether run` without one.

Owns: the chat's flags, choosing the app (stdin and stdout are terminals) or the headless
turn, and the exit code. Must not: import the daemon (`tether.*`), or anything but the
standard library at import (`tether chat` and `tether --help` build its parser).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

SERVE_FLAGS = (
    "provider",
    "model",
    "base_url",
    "script",
    "max_steps",
    "mode",
    "home",
    "log_level",
    "max_retries",
    "record",
    "cassette",
)


def add_chat_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="a first message (without a terminal: the one turn to run)")
    parser.add_argument("--resume", nargs="?", const="", metavar="ID", help="continue a stored session (no ID: pick)")
    parser.add_argument("--continue", dest="continue_last", action="store_true", help="continue the latest session")
    parser.add_argument("--json", action="store_true", help="without a terminal: one JSON object per event line")


def chat_main(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace or os.getcwd()).resolve()
    if not workspace.is_dir():
        print(f"tether chat: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _headless(args)
    import asyncio

    from .app import ChatApp
    from .daemon import history_file, serve_args
    from .render import colour_wanted
    from .sessions import start_with

    chat = ChatApp(
        serve_args(args, workspace, SERVE_FLAGS),
        workspace,
        color=colour_wanted(sys.stdout.isatty()),
        history=history_file(args),
    )
    if args.prompt:
        chat.queue.append(args.prompt)
    start = start_with(args.resume, continue_last=args.continue_last)
    try:
        return asyncio.run(chat.run(start))
    except KeyboardInterrupt:
        return 130


def _headless(args: argparse.Namespace) -> int:
    """No terminal: one turn, as `tether run` does it (the prompt from the argument or stdin)."""
    from tether_client.cli import run_main

    if args.resume is not None or args.continue_last:
        print("tether chat: --resume and --continue need a terminal", file=sys.stderr)
        return 2
    prompt = args.prompt
    if prompt is None and not sys.stdin.isatty():
        prompt = sys.stdin.read().strip()
    if not prompt:
        print('tether chat: no terminal to chat on; give the message: tether chat "..." (or on stdin)', file=sys.stderr)
        return 2
    args.prompt = prompt
    return run_main(args)
