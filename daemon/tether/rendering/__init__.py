"""Rendering: everything a client is shown as `session/update`, v1 and v2.

Owns: rendering typed events to the wire (`acp_v1.py`, `acp_v2.py`), sending them in order
(`emitter.py`), replaying stored history as updates (`replay.py`, `replay_v2.py`).
Must not: decide anything about a turn, or import handlers, services or a connection's state;
nothing outside it builds a turn's `session/update`.
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
