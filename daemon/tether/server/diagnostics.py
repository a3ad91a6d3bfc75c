"""`_tether/daemon/stats` (extension): the daemon's own counters, for health checks.

Lets a plugin's health check (and our regression tests) see that nothing accumulates in
a long-running daemon: running requests, background tasks, abandoned replies, writes.
Must not: change anything it counts.
"""

from __future__ import annotations

import resource
from typing import Any

from .. import __version__
from .context import ServerContext


async def daemon_stats(ctx: ServerContext, _params: Any) -> dict[str, Any]:
    rpc, conn = ctx.rpc, ctx.conn
    return {
        "version": __version__,
        "runningRequests": rpc.running_requests - 1,  # not counting this one
        "backgroundTasks": len(rpc._background),
        "outgoingRequests": len(rpc._outgoing),
        "unknownResponses": rpc.unknown_responses,
        "liveSessions": len(ctx.registry.live),
        "framesWritten": conn.frames_written if conn else 0,
        "writes": conn.writes if conn else 0,
        "framing": conn.framing if conn else None,
        "maxRssKb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
