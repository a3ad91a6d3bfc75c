"""`_tether/session/queue` and `_tether/session/dequeue` (extensions): a session's waiting prompts.

Owns: listing the queue (live entries, then those a stopped daemon left, `notRun`) and
withdrawing one by `queueId` (-32602 names a prompt that is not queued).
Must not: queue, steer or run a prompt (`tether.services.queue` owns the queue).
"""

from __future__ import annotations

from tether_protocol import DequeueParams, EmptyResult, InvalidParams, QueuedPrompt, QueueParams, QueueResult

from ..server.context import ClientConnection
from ..services.queue import queue_of
from ..store import queue as stored


async def session_queue(ctx: ClientConnection, params: QueueParams) -> QueueResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    dead = await stored.not_run(session.store, session.id)
    gone = [QueuedPrompt(r.id, r.preview, r.queued_at, "notRun") for r in dead]
    return QueueResult(gone + queue_of(ctx, session).listed())


async def session_dequeue(ctx: ClientConnection, params: DequeueParams) -> EmptyResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    queue = queue_of(ctx, session)
    for entry in queue.entries:
        if entry.queue_id == params.queue_id:
            queue.withdraw(entry)
            return EmptyResult()
    if any(r.id == params.queue_id for r in await stored.not_run(session.store, session.id)):
        await stored.remove(session.store, [params.queue_id])
        return EmptyResult()
    raise InvalidParams(
        f"invalid params for _tether/session/dequeue: no prompt {params.queue_id!r} is queued in session "
        f"{session.id!r} (it may have started already); _tether/session/queue lists the queue"
    )
