"""Pausing Python's cyclic garbage collector while a large acyclic value is built.

Owns: `collector_paused()`, safe nested and across threads: the first of overlapping pauses stops
the collector, the last resumes it, and only if it was running (why: docs/decisions/0017).
Must not: pause it around work that can make reference cycles (JSON values make none).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
