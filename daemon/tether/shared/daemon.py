"""The shared daemon's process: `python -m tether.shared.daemon --socket PATH [flags]`.

Owns: the listening Unix socket (0600 from birth, in the proxy's 0700 directory) and pid file,
serving each accepted window as a `ClientConnection` of the one `Daemon`, and its end: idle for
`shared_idle_timeout` or SIGTERM, the socket removed first, then turns stopped and stores closed.
Must not: be started but by `proxy.connect_or_start` (under its lock), or read a client's environment.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path

from ..config import ConfigError, load_settings
from ..server.app import connect, finish_requests
from ..server.audience import forget
from ..server.daemon_services import Daemon
from ..services.live_session import Audiences
from ..services.message_size import frame_limit
from .stream import ClientProtocol, SocketConnection

log = logging.getLogger("tether.shared")

_CLIENT_GRACE_S = 5.0


def _listen(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket file is born 0600: no window where others may connect
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _flags(argv: list[str]) -> tuple[str, dict[str, object]]:
    from ..daemon_start import add_setting_flags, setting_flags

    parser = argparse.ArgumentParser(prog="tether.shared.daemon")
    parser.add_argument("--socket", required=True)
    add_setting_flags(parser)
    args = parser.parse_args(argv)
    return args.socket, setting_flags(args)


def main(argv: list[str] | None = None) -> int:
    path, flags = _flags(sys.argv[1:] if argv is None else argv)
    from ..sandbox.hardening import harden_process

    harden_process()
    sock = _listen(path)  # first: a window connecting now waits in the backlog, not on us
    pid_path = path[: -len(".sock")] + ".pid"
    with open(os.open(pid_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as pid_file:
        pid_file.write(f"{os.getpid()}\n")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s tether %(levelname)s %(name)s: %(message)s")
    try:
        settings = load_settings(None, flags=flags, env=os.environ)
    except ConfigError as exc:
        log.error("cannot start the shared daemon: %s", exc)
        os.unlink(path)
        return 2
    logging.getLogger("tether").setLevel(settings.log_level.upper())
    log.warning("shared daemon %d listening on %s", os.getpid(), path)
    try:
        return asyncio.run(_run(Daemon(settings, shared=True), flags, sock, path))
    finally:
        _remove_pid_file(pid_path)
        log.warning("shared daemon %d stopped", os.getpid())


def _remove_pid_file(pid_path: str) -> None:
    try:
        with open(pid_path) as pid_file:
            if pid_file.read().strip() == str(os.getpid()):
                os.unlink(pid_path)
    except (OSError, ValueError):
        pass


async def _run(daemon: Daemon, flags: dict[str, object], sock: socket.socket, path: str) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    bound = os.stat(path).st_ino
    clients: set[asyncio.Task[None]] = set()

    def accept(protocol: ClientProtocol, root: str, framing: str | None, rest: bytes) -> None:
        task = asyncio.ensure_future(_serve_client(daemon, flags, protocol, root, framing, rest))
        clients.add(task)
        task.add_done_callback(clients.discard)

    async with daemon.tasks.running(2.0):
        server = await loop.create_unix_server(lambda: ClientProtocol(accept), sock=sock)
        idle = asyncio.ensure_future(_until_idle(daemon, daemon.settings.shared_idle_timeout))
        await asyncio.wait([idle, asyncio.ensure_future(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        idle.cancel()
        _unlink_ours(path, bound)  # from now on a new window starts a new daemon
        server.close()
        while clients and not stop.is_set():  # accepted just before: served to the end
            await asyncio.wait(list(clients), timeout=1.0)
        for served in list(daemon.connections.values()):
            served.stop()
        if clients:
            await asyncio.wait(list(clients), timeout=_CLIENT_GRACE_S + 1)
        await daemon.stop_turns()
        await daemon.close()
    return 0


async def _until_idle(daemon: Daemon, idle_s: float) -> None:
    idle_since: float | None = None
    while True:
        await asyncio.sleep(min(1.0, idle_s / 4))
        if daemon.busy:
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= idle_s:
            log.warning("no client and no turn for %.0f s: exiting", idle_s)
            return


def _unlink_ours(path: str, inode: int) -> None:
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except FileNotFoundError:
        pass


async def _serve_client(daemon: Daemon, flags: dict[str, object], protocol: ClientProtocol, root: str,
                        framing: str | None, rest: bytes) -> None:
    transport = protocol.transport
    assert transport is not None
    workspace = Path(root if os.path.isabs(root) else "/")
    try:  # the window's settings: the daemon's layers with its workspace's config
        server = connect(daemon, load_settings(workspace, flags=flags), workspace)
    except ConfigError as exc:
        log.error("refused a window: %s", exc)
        transport.close()
        return
    conn = SocketConnection(transport, server.rpc.handle_message, server.stop, Audiences(daemon.registry.live),
                            "ndjson" if framing == "ndjson" else "lsp" if framing == "lsp" else None,
                            frame_limit(server.settings.max_message_mib))
    protocol.conn = conn
    server.attach(conn)
    try:
        await conn.start(rest)
        await server.stopped.wait()
        await finish_requests(server, conn, _CLIENT_GRACE_S)
        await server.close()
    finally:
        forget(server)
        conn.close()


if __name__ == "__main__":
    raise SystemExit(main())
