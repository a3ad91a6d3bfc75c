"""Decoding a large message pauses the garbage collector (a 10,000-message snapshot
decoded up to 6x slower with it running) and leaves it as it found it."""

from __future__ import annotations

import gc
import threading

import pytest
from tether_protocol import collector_paused, dumps, loads


def test_the_collector_runs_again_after_overlapping_pauses_and_an_error() -> None:
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the other pause still holds
    second.__exit__(None, None, None)
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0
    assert gc.isenabled()


def test_pauses_from_threads_leave_it_running() -> None:
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        for _ in range(200):
            with collector_paused():
                pass

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        big = dumps([{"n": i, "text": "x" * 40} for i in range(10_000)])
        assert len(big) > 1 << 18  # large enough to pause
        assert loads(big)[-1] == {"n": 9_999, "text": "x" * 40}
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert loads(big)[0]["n"] == 0
    assert gc.isenabled()
