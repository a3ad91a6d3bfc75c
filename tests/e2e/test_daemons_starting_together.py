"""Many daemons starting at once on one new (or old) history database all work.

avante.nvim starts two agents on its first chat; before the store serialised its open,
one of them failed ``session/new`` with "database is locked" at the switch to WAL.
Each daemon here is a real ``tether acp`` process on stdio, as an editor starts it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from contextlib import closing
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from daemon_harness import BASIC_SCRIPT
from tether.store import migrations, schema
from tether.store.paths import database_path

if TYPE_CHECKING:
    from pathlib import Path

DAEMONS = 10
ROUNDS = 3


async def _call(proc: asyncio.subprocess.Process, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send one request and read lines until its answer (notifications are skipped)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + b"\n")
    await proc.stdin.drain()
    while True:
        line = await proc.stdout.readline()
        assert line, f"the daemon exited before answering {method}"
        message = orjson.loads(line)
        if message.get("id") == rid and "method" not in message:
            return dict(message)


async def _one_editor(
    workspace: Path, env: dict[str, str], stderr: Path, ready: asyncio.Barrier
) -> tuple[str, dict[str, Any]]:
    """initialize + session/new + one prompt, as an editor's first chat does. The
    daemons open the database at their first session/new: every one sends it once all
    are initialized, so the opens meet."""
    with open(stderr, "wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tether",
            "acp",
            "--provider",
            "scripted",
            "--script",
            str(BASIC_SCRIPT),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            cwd=workspace,
            env=env,
        )
        try:
            init = await _call(proc, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            assert "result" in init, init
            await ready.wait()
            new = await _call(proc, 2, "session/new", {"cwd": str(workspace), "mcpServers": []})
            assert "result" in new, f"session/new failed: {new}\n{stderr.read_text(errors='replace')}"
            session_id = str(new["result"]["sessionId"])
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "read the README"}]}
            answer = await _call(proc, 3, "session/prompt", prompt)
            return session_id, answer
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            await asyncio.wait_for(proc.wait(), 30)


async def _start_together(tmp_path: Path, workspace: Path, env: dict[str, str], held: Path | None = None) -> list[str]:
    """With ``held``, another program is in a write transaction on that (new) database file
    while the daemons open it, and ends it two seconds after they asked (Tether waits up to five)."""
    ready = asyncio.Barrier(DAEMONS + 1)
    runs = [_one_editor(workspace, env, tmp_path / f"daemon-{n}.stderr", ready) for n in range(DAEMONS)]
    started = asyncio.ensure_future(asyncio.gather(*runs))
    other = sqlite3.connect(held, isolation_level=None) if held else None
    if other is not None:
        other.execute("BEGIN IMMEDIATE")
    try:
        await asyncio.wait_for(ready.wait(), 60)
        await asyncio.sleep(2)
    finally:
        if other is not None:
            other.execute("COMMIT")
            other.close()
    results = await asyncio.wait_for(started, 120)
    for _session_id, answer in results:
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    return [session_id for session_id, _answer in results]


def _stored(home: Path, workspace: Path) -> tuple[set[str], list[int], str]:
    with closing(sqlite3.connect(database_path(workspace, home))) as conn:
        sessions = {row[0] for row in conn.execute("SELECT id FROM sessions")}
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        ((mode,),) = conn.execute("PRAGMA journal_mode").fetchall()
    return sessions, versions, str(mode)


@pytest.mark.parametrize("round_", range(ROUNDS))
async def test_ten_daemons_creating_one_new_database_all_work(
    round_: int, tmp_path: Path, tether_home: Path, workspace: Path, daemon_env: dict[str, str]
) -> None:
    home = tether_home  # fresh for each round, as is the workspace
    started = await _start_together(tmp_path, workspace, daemon_env)
    sessions, versions, mode = _stored(home, workspace)
    assert sessions == set(started) and len(started) == DAEMONS
    assert versions == list(range(1, schema.latest_version() + 1))  # each migration applied once
    assert mode == "wal"


async def test_ten_daemons_wait_for_another_program_holding_the_new_databases_write_lock(
    tmp_path: Path, tether_home: Path, workspace: Path, daemon_env: dict[str, str]
) -> None:
    """The sqlite3 shell, a backup tool, or an older Tether (which does not take the open
    lock) in the database while the daemons switch it to WAL: they wait, they do not fail."""
    started = await _start_together(tmp_path, workspace, daemon_env, held=database_path(workspace, tether_home))
    sessions, versions, mode = _stored(tether_home, workspace)
    assert sessions == set(started) and len(started) == DAEMONS
    assert versions == list(range(1, schema.latest_version() + 1))
    assert mode == "wal"


async def _old_database(path: Path, version: int) -> None:
    """The database as schema ``version`` left it, in the rollback journal (as v1 made it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(schema._VERSION_TABLE)
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (1, 0)")
        for statement in migrations._V1_STATEMENTS:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at) "
            "VALUES ('old', '/w', 'Old talk', 'ask', 1, 1)"
        )
    assert version == 1


@pytest.mark.parametrize("round_", range(2))
async def test_ten_daemons_migrating_one_old_database_all_work(
    round_: int, tmp_path: Path, tether_home: Path, workspace: Path, daemon_env: dict[str, str]
) -> None:
    home = tether_home  # fresh for each round, as is the workspace
    await _old_database(database_path(workspace, home), 1)
    started = await _start_together(tmp_path, workspace, daemon_env)
    sessions, versions, mode = _stored(home, workspace)
    assert sessions == {"old", *started} and len(started) == DAEMONS
    assert versions == list(range(1, schema.latest_version() + 1))
    assert mode == "wal"
