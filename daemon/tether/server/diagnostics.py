"""`_tether/daemon/stats` (extension): the daemon's own counters, for health checks.

Lets a plugin's health check (and our regression tests) see that nothing accumulates in
a long-running daemon: running requests, background tasks, abandoned replies, writes.
Must not: change anything it counts.
"""

from __future__ import annotations

import resource
from typing import Literal, cast

from tether_protocol._extensions import DaemonStats

from .. import __version__
from .context import ServerContext


async def daemon_stats(ctx: ServerContext, _params: object) -> DaemonStats:
    rpc, conn = ctx.rpc, ctx.conn
    return DaemonStats(
        version=__version__,
        running_requests=rpc.running_requests - 1,  # not counting this one
        background_tasks=len(rpc._background),
        outgoing_requests=len(rpc._outgoing),
        unknown_responses=rpc.unknown_responses,
        live_sessions=len(ctx.registry.live),
        frames_written=conn.frames_written if conn else 0,
        writes=conn.writes if conn else 0,
        framing=cast(Literal["lsp", "ndjson"], conn.framing) if conn else None,
        max_rss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    )
