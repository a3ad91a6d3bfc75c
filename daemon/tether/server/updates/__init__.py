"""The server's update layer: everything a client is shown as `session/update`.

Owns: rendering the agent's typed events to the wire (`acp_v1.py`: ACP v1, the only
wire version today; a v2 renderer, with updates as upserts by id, would be a sibling
module passed to `SessionUpdates`), sending them in order with text deltas merged
(`emitter.py`), and replaying stored history as the same updates (`replay.py`).
Must not: decide anything about a turn. Nothing outside this package builds
`session/update` JSON for a turn.
"""

from .emitter import SessionUpdates, frame
from .replay import INTERRUPTED, PagedReplay, replay_frames, replay_updates

__all__ = [
    "INTERRUPTED",
    "PagedReplay",
    "SessionUpdates",
    "frame",
    "replay_frames",
    "replay_updates",
]
