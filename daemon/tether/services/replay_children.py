"""Sub-agents on a v2 `session/resume`'s replay: the children it shows.

Owns: reading a session's children and their transcripts for its v2 replay (SPEC §12.9): whole
(a running session's replay), or a page at a time where a mark stands for the child's replay.
Must not: render a message (`rendering/replay_v2.py` does), run or stop a child, or tell a
joining window what runs now (`joining_v2.py`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..rendering.replay_v2 import ChildShown, ReplayV2
from ..store.children import child_sessions

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Iterator

    from ..store import HistoryStore, TurnMessageView

# A frame that stands for a child's replay (then its session id): no JSON frame starts so.
_CHILD_MARK = b"\x00child "


async def children_shown(
    store: HistoryStore, session_id: str, workspace: str | None, *, paged: bool = False
) -> dict[str, ChildShown]:
    """Each child of the session with its own replay, by its `delegate` call's id; `paged`:
    a mark in its place (`marked_child`), its replay read where it stands (`child_pages`)."""
    shown: dict[str, ChildShown] = {}
    for call_id, child in (await child_sessions(store, session_id)).items():
        if paged:
            shown[call_id] = ChildShown(child, [_CHILD_MARK + child.session_id.encode()])
            continue
        messages = await store.load_messages(child.session_id)
        replay = ReplayV2(child.session_id, workspace=workspace)
        stored = [(m.json_body(), m.status, m.turn_id, m.seq) for m in messages]
        shown[call_id] = ChildShown(child, [replay.frame(u) for u in replay.updates(stored)])
    return shown


def marked_child(frame: bytes) -> str | None:
    """The child whose replay this frame stands for (None: a frame to send as it is)."""
    return frame[len(_CHILD_MARK) :].decode() if frame.startswith(_CHILD_MARK) else None


async def child_pages(
    pages_of: AsyncGenerator[list[TurnMessageView], None], child_id: str, workspace: str | None
) -> AsyncIterator[Iterator[bytes]]:
    """A child's replay, a page of its messages at a time (`pages_of`: read as the parent's
    are), so a long child is never in memory whole."""
    replay = ReplayV2(child_id, workspace=workspace)
    async with contextlib.aclosing(pages_of) as pages:
        async for page in pages:
            yield replay.feed([(body, status, turn, seq) for _role, body, status, turn, seq in page])
    yield replay.finish()
