"""The cyclic garbage collector and the class code cache while the daemon starts. Standard library only.

Owns: pausing the collector for start-up (`pause_collector`, the first thing `tether serve`,
`tether run` and `tether demo` do, which also installs `class_code_cache` there) and
resuming it once start-up is over (`resume_collector`), with what start-up made frozen out
of its later passes and the classes' code it compiled saved for the next start.
Must not: pause it for anything but start-up (a large value being built uses
`tether_protocol._gc.collector_paused`), or leave it paused past the end of start-up.

Why (bench/RESULTS.md, "Issue 17's last start-up goals"): start-up makes ~30,000 objects
the collector tracks (modules, classes, functions) and little garbage. Left running, the
collector made 63 young and 6 middle passes before `session/new` was answered: ~8.5 ms
of the 137 ms spawn -> `session/new` (measured with `gc.callbacks`). Frozen, start-up's
objects are skipped by every later full pass, the one at exit included: the daemon's
whole-process CPU fell by ~25 %. The price: the few thousand objects start-up left as
garbage stay (peak RSS +~1 MB); a `gc.collect()` before the freeze would free them but
cost 10-40 ms of one event-loop tick on this machine, and not lower the peak.
"""

from __future__ import annotations

import gc
from pathlib import Path

from . import class_code_cache, module_cache

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
