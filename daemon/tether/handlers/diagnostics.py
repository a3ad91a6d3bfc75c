"""`_tether/daemon/stats` (extension): the daemon's own counters, for health checks.

Owns: counting running requests, background tasks, abandoned replies, writes, asyncio tasks,
threads, open fds, watches and stores, so a health check or bench/soak.py sees leaks.
Must not: change anything it counts.
"""

from __future__ import annotations

import asyncio
import os
import resource
import threading
from typing import Literal, cast

from tether_protocol import DaemonStats

from .. import __version__
from ..server.context import ClientConnection


async def daemon_stats(ctx: ClientConnection, _params: object) -> DaemonStats:
    rpc, conn = ctx.rpc, ctx.conn
    return DaemonStats(
        version=__version__,
        running_requests=rpc.running_requests - 1,  # not counting this one
        background_tasks=len(rpc._background),
        outgoing_requests=len(rpc._outgoing),
        unknown_responses=rpc.unknown_responses,
        live_sessions=len(ctx.daemon.registry.live),
        frames_written=conn.frames_written if conn else 0,
        writes=conn.writes if conn else 0,
        framing=cast(Literal["lsp", "ndjson"], conn.framing) if conn else None,
        max_rss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        tasks=len(asyncio.all_tasks()) - 1,  # not counting this request's own
        threads=threading.active_count(),
        open_fds=_open_fds(),
        watched_workspaces=len(ctx.daemon.registry.watchers),
        open_stores=ctx.daemon.registry.open_stores,
    )


def _open_fds() -> int | None:
    """The process's open file descriptors (/proc), None where there is no /proc."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # not counting the listing's own
    except OSError:
        return None
