"""The cyclic garbage collector and the class code cache while the daemon starts (stdlib only).

Owns: `pause_collector` (the first thing `serve`, `run` and `demo` do; it also installs `class_code_cache`)
and `resume_collector` (start-up's objects frozen out of later passes, compiled code saved). Why: decision 0010.
Must not: pause it for anything but start-up (`tether_protocol._gc.collector_paused` serves large values),
or leave it paused past the end of start-up.
"""

from __future__ import annotations

import gc

from . import class_code_cache, module_cache

TYPE_CHECKING = False  # not `typing`'s: the start path does not load typing

if TYPE_CHECKING:
    from pathlib import Path

_paused = False


def pause_collector(code_cache: Path | None = None) -> None:
    """Pause the collector until `resume_collector` (if it runs: a caller that turned it
    off itself keeps it off); with ``code_cache``, classes made from now on compile their
    generated methods through the cache kept in that directory."""
    global _paused
    if code_cache is not None:
        class_code_cache.install(code_cache)
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector(*, class_code_made: bool = True) -> None:
    """Start-up is over: what it made is frozen (later passes skip it) and the collector
    runs again. Only the first call after `pause_collector` does anything to it. Unless
    more classes are yet to come (``class_code_made=False``: `tether run`, whose turn is
    next), the class code compiled so far is saved and the cache retired."""
    global _paused
    if class_code_made:
        class_code_cache.save()
        module_cache.save()
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
