"""A daemon killed with SIGKILL mid-write loses only the step it had not committed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

import tether.store
from tether.store import HistoryStore

# Commits a session, a turn and one two-message step, says so, then keeps
# appending big steps so the kill lands while a transaction is in flight.
_WRITER = """
import asyncio, sys
from pathlib import Path
from tether.store import HistoryStore, MessageRecord

async def main(path):
    store = await HistoryStore.open(Path(path))
    await store.create_session("s1", "/w", "code")
    await store.begin_turn("s1", "t1", MessageRecord("user", {"text": "go"}))
    await store.append_messages("s1", "t1", [
        MessageRecord("assistant", {"text": "calling"}),
        MessageRecord("tool", {"content": "committed step"}),
    ])
    print("committed", flush=True)
    n = 0
    while True:
        n += 1
        await store.append_messages("s1", "t1", [
            MessageRecord("assistant", {"filler": n, "pad": "x" * 4000}),
            MessageRecord("tool", {"filler": n}),
        ])

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
async def test_sigkill_after_a_committed_step_keeps_it_and_the_file_intact(db_path: Path) -> None:
    daemon_dir = Path(tether.store.__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(daemon_dir), os.environ.get("PYTHONPATH", "")])}
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    ) as writer:
        try:
            line = writer.stdout.readline() if writer.stdout else ""
            assert line == "committed\n", writer.stderr.read() if writer.stderr else line
            time.sleep(0.2)  # let it get well into the filler writes
            assert writer.poll() is None, "the writer stopped on its own"
            writer.send_signal(signal.SIGKILL)
        finally:
            writer.kill()
            writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL

    async with await HistoryStore.open(db_path) as store:
        assert store.recovered_turns == 1
        messages = await store.load_messages("s1")
        [turn] = await store.list_turns("s1")

    with closing(sqlite3.connect(db_path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert [(m.role, m.body) for m in messages[:3]] == [
        ("user", {"text": "go"}),
        ("assistant", {"text": "calling"}),
        ("tool", {"content": "committed step"}),
    ]
    # every step is all-or-nothing: whole pairs of filler messages, no gaps in seq
    assert [m.seq for m in messages] == list(range(len(messages)))
    # and recovery marks where the turn stopped (nothing streamed was saved)
    marker = messages.pop()
    assert (marker.role, marker.body, marker.status) == ("assistant", {"role": "assistant", "text": ""}, "interrupted")
    assert len(messages) % 2 == 1 and len(messages) > 3
    assert turn.status == "interrupted"
