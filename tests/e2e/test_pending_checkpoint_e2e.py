"""The checkpoint of a turn's calls waiting for approval, as real daemons write and read
it (restart-safe approvals): the stored text is what earlier Tethers wrote, a checkpoint
they wrote is resumed the same way, and one that cannot be read is refused clearly."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from daemon_harness import EXAMPLES, User, left_waiting, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "approvals.json"
ORIGINAL = "# Sample\n\nHello from the sample workspace.\n"
EDIT = (
    '{"id":"call_edit","name":"edit_file","arguments":{"path":"README.md","edits":'
    '[{"old_text":"Hello from the sample workspace.","new_text":"Hello, edited by Tether."}]}'
)
# What the untyped journal stored for approvals.json's edit, asked at step 2
WAITING = '{"step":2,"calls":[' + EDIT + "}]}"
# ... and once that call was approved and had started (then the daemon was killed)
STARTED = '{"step":2,"calls":[' + EDIT + ',"started":true}]}'


def _pending(tether_home: Path, text: str | None = None) -> list[str | None]:
    """The turns' stored checkpoints (after setting the waiting one's to ``text``)."""
    (db,) = list(tether_home.rglob("history.sqlite3"))
    with closing(sqlite3.connect(db)) as conn:
        if text is not None:
            conn.execute("UPDATE turns SET pending = ? WHERE pending IS NOT NULL", (text,))
            conn.commit()
        return [row[0] for row in conn.execute("SELECT pending FROM turns ORDER BY seq")]


def _ended(updates: list[dict]) -> list[dict]:
    return [u["_meta"]["tether"]["turnEnded"] for u in updates if u.get("_meta", {}).get("tether", {}).get("turnEnded")]


async def test_the_checkpoint_is_stored_as_before_and_an_old_started_one_is_not_run_again(
    spawn_daemon, workspace: Path, tether_home: Path
):
    session_id = await left_waiting(spawn_daemon, workspace)
    assert _pending(tether_home) == [WAITING]  # byte for byte what earlier versions wrote

    # what an earlier version left when the approved edit had started as it was killed
    _pending(tether_home, STARTED)
    user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = user.on_request
    loaded = await second.client.load_session(session_id, workspace)
    await until(lambda: _ended(loaded.updates))

    assert _ended(loaded.updates)[-1]["stopReason"] == "end_turn"
    assert user.prompts == []  # not asked again: it may have run
    assert (workspace / "README.md").read_text() == ORIGINAL  # and not run a second time
    failed = [u for u in loaded.updates if u.get("toolCallId") == "call_edit" and u.get("status") == "failed"]
    assert failed and "may have run" in failed[-1]["content"][0]["content"]["text"]
    assert _pending(tether_home) == [None]


async def test_a_checkpoint_that_cannot_be_read_is_refused_naming_the_turn_the_field_and_a_way_on(
    spawn_daemon, workspace: Path, tether_home: Path
):
    session_id = await left_waiting(spawn_daemon, workspace)
    _pending(tether_home, '{"step":2,"calls":[{"name":"edit_file","arguments":{}}]}')
    user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = user.on_request

    with pytest.raises(ClientError) as refused:
        await second.client.load_session(session_id, workspace)
    assert refused.value.code == -32015
    assert "pending.calls[0].id is missing" in refused.value.message
    assert f"tether sessions delete {session_id}" in refused.value.message
    await asyncio.sleep(0.3)
    assert user.prompts == [] and (workspace / "README.md").read_text() == ORIGINAL
