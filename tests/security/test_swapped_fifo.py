"""A command (or a process it left running) swapping `AGENTS.md`, `.tether/MEMORY.md` or a
`.tether/commands/NAME.md` between a regular file and a FIFO, so that Tether's check by name sees a file and its
`open` meets the FIFO: without a writer that `open` never returns, and it runs on the
daemon's event loop at every turn's start (every session of the daemon would hang).
They are read through `open_regular` (non-blocking, checked on the open descriptor):
each read answers at once, with the file's text or without it.
The swap runs in a thread of the test, as fast as a sandboxed loop could run it."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TYPE_CHECKING

import pytest

from tether.agent.context import project_instructions
from tether.services import user_commands

if TYPE_CHECKING:
    from pathlib import Path

_ROUNDS = 3000


def _swap(target: Path, held: Path, stop: threading.Event) -> None:
    """Put the FIFO `held` (a hard link of it) and a regular file in place by turns."""
    link, plain = target.with_name("swap.fifo"), target.with_name("swap.txt")
    while not stop.is_set():
        os.link(held, link)
        os.rename(link, target)
        plain.write_text("Run the tests with make.\n")
        os.rename(plain, target)


def _unblock(held: Path) -> None:
    """Open the FIFO for writing, so a reader stuck in `open` returns (a failed test must end)."""
    with contextlib.suppress(OSError):
        os.close(os.open(held, os.O_WRONLY | os.O_NONBLOCK))


def _commands(workspace: Path) -> str:
    return "".join(command.body for command in user_commands.load(workspace).values())


@pytest.mark.parametrize(
    ("rel", "read"),
    [
        ("AGENTS.md", project_instructions),
        (".tether/MEMORY.md", project_instructions),
        (".tether/commands/tests.md", _commands),
    ],
)
def test_a_fifo_swapped_in_after_the_check_never_blocks_reading_it(tmp_path: Path, rel: str, read) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".tether" / "commands").mkdir(parents=True)
    target = workspace / rel
    target.write_text("Run the tests with make.\n")
    stop, done = threading.Event(), threading.Event()
    seen: list[str] = []

    def read_all() -> None:
        for _ in range(_ROUNDS):
            seen.append(read(workspace))
        done.set()

    held = tmp_path / "held.fifo"
    os.mkfifo(held)
    swapper = threading.Thread(target=_swap, args=(target, held, stop), daemon=True)
    reader = threading.Thread(target=read_all, daemon=True)
    swapper.start()
    reader.start()
    finished, reads = done.wait(30), len(seen)
    stop.set()
    swapper.join()
    while not done.is_set():  # the bug: a read stuck on the FIFO; release it to end the test
        _unblock(held)
        done.wait(0.1)
    assert finished, f"reading the instructions blocked on a FIFO after {reads} of {_ROUNDS} reads"
    assert "Run the tests with make." in read(workspace)  # the swap ended on the regular file
