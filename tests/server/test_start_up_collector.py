"""The start-up's pause of the garbage collector (`tether.start_up`): it ends, once, with
start-up's objects frozen, and never turns on a collector its caller had turned off."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

import pytest

from tether import start_up

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    start_up._paused = False
    gc.unfreeze()
    (gc.enable if was_enabled else gc.disable)()


def test_the_pause_ends_with_start_ups_objects_frozen() -> None:
    gc.enable()
    gc.unfreeze()
    start_up.pause_collector()
    assert not gc.isenabled()
    start_up.resume_collector()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc.disable()  # a later resume (the server's, after `tether run` resumed) changes nothing
    start_up.resume_collector()
    assert not gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    start_up.pause_collector()
    start_up.resume_collector()
    assert not gc.isenabled()
