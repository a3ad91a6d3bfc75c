"""The daemon served in the process of its one client: `tether run` and `tether demo`.

Owns: `connect_in_process`: `tether serve`'s start (`start_daemon`), then `server.app.serve`
as a task over a pair of pipes (why it is as safe as stdio: docs/decisions/0014-clients.md).
Must not: render anything or read the terminal (that is `tether_client.cli`), or leave
a descriptor a command could inherit (the pipes are close-on-exec).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from tether.config import ConfigError, Settings
from tether.daemon_start import setting_flags, start_daemon
from tether.start_up import resume_collector
from tether_client import DaemonStartError, TetherClient

from . import build_parser

if TYPE_CHECKING:
    from pathlib import Path

    from tether_protocol.peer import RequestCallback


async def connect_in_process(
    serve_args: list[str], workspace: Path, on_request: RequestCallback | None
) -> TetherClient:
    """A client connected to a daemon that ``serve_args`` (`tether serve`'s flags) configure,
    served by this process until the client closes the connection."""
    try:
        settings, root = _start(serve_args, workspace)
    finally:
        # start-up is over (the turn's modules are imported): what it made stays out of the
        # collector's passes, which resume (`tether_cli` paused them for the start); the
        # class code cache saves once the turn has made its classes too (`end_start_up`)
        resume_collector(class_code_made=False)
    from tether.server.app import serve
    from tether.transport.stdio import ProtocolFds

    to_daemon_r, to_daemon_w = os.pipe()  # close-on-exec (PEP 446)
    to_client_r, to_client_w = os.pipe()

    async def run() -> int:
        try:
            fds = ProtocolFds(to_daemon_r, to_client_w)
            code = await serve(fds, settings, root, framing="lsp", warm_up=False)
        finally:
            os.close(to_client_w)  # the client reads EOF: the daemon is gone
        # served to the end: the reading thread has seen EOF and reads no more (a cancelled
        # serve leaves the descriptor to the process's exit: the thread may still read it)
        os.close(to_daemon_r)
        return code

    served = asyncio.get_running_loop().create_task(run(), name="tether-daemon")
    return await TetherClient.over_fds(to_client_r, to_daemon_w, on_request=on_request, served=served)


def _start(serve_args: list[str], workspace: Path) -> tuple[Settings, Path]:
    """What `tether serve` does before it serves (`start_daemon`); then the server's and
    the turn's modules (a one-shot turn needs them all, and now)."""
    args = build_parser(daemon_only=True).parse_args(["serve", *serve_args])
    try:
        settings, root = start_daemon(args.workspace or str(workspace), setting_flags(args))
    except ConfigError as exc:
        raise DaemonStartError(f"tether: {exc}", 2) from None
    from tether.handlers import prompt  # noqa: F401  (the turn behind session/prompt)
    from tether.server import app  # noqa: F401  (the server)

    return settings, root
