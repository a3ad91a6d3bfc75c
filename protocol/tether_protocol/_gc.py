"""Pausing Python's cyclic garbage collector while a large acyclic value is built.

Decoding a 2.7 MB snapshot makes ~100,000 dicts and lists; each one counts towards the
collector's thresholds, so it runs many times during the decode, and its full passes
walk every object made so far: measured here, `loads` of a 10,000-message snapshot took
9 ms with the collector paused and 11-59 ms with it running (bench/RESULTS.md). JSON
values hold no reference cycles, so there is nothing for it to find in them; it runs as
usual once the work is done.

Nesting and threads are safe: the collector is paused by the first of any overlapping
pauses and resumed by the last, and only if it was running when the first began (a
caller that turned it off itself keeps it off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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
