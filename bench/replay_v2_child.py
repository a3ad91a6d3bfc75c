"""The v2 replay of a session whose sub-agent has a long history (issue 32 item 4: children paged).

    .venv/bin/python bench/replay_v2_child.py [--child-messages 20000] [--rounds 3] [--base /tmp/tree]

One stored parent session (a few generated turns, then a `delegate` call and its result) and
its child session (`--child-messages` messages of generated turns: bench/bighistory.py's rows,
its metadata naming the parent and the call), then for ``--rounds`` rounds, each in a fresh
`tether serve` past its start-up: v2's `session/resume` with `replayFrom: {type: "start"}` of
the parent (the child's replay comes after its call). Per request, as bench/replay_v2.py: the
answer's time, the daemon's CPU time, the updates sent and the daemon's peak RSS (median of the
rounds). With ``--base``, that tree's daemon in the same rounds, alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from bighistory import Words, add_session
from replay_v2 import SID, one
from tether_side import tether_env

CHILD, CALL = "sess_child", "call_delegate"


async def make_history(home: Path, ws: Path, child_messages: int) -> None:
    from tether.store import HistoryStore, database_path

    path = database_path(ws, home)
    await (await HistoryStore.open(path)).close()  # the schema, as the daemon makes it
    words = Words()
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        add_session(db, words, SID, ws, 25, 40, compact_at_end=False)
        add_session(db, words, CHILD, ws, child_messages // 4, 40, compact_at_end=False)
        db.execute(
            "UPDATE sessions SET metadata = ? WHERE id = ?",
            (json.dumps({"parentSessionId": SID, "parentCallId": CALL}), CHILD),
        )
        _add_delegate_call(db)
        db.execute("COMMIT")


def _add_delegate_call(db: sqlite3.Connection) -> None:
    """The parent's last turn: a `delegate` call and its result, after its stored messages."""
    turn_id, seq = db.execute("SELECT turn_id, MAX(seq) FROM messages WHERE session_id = ?", (SID,)).fetchone()
    call = {"id": CALL, "name": "delegate", "arguments": {"task": "Read the long history."}}
    rows = [
        {"role": "assistant", "text": "Asking a sub-agent.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": CALL, "name": "delegate", "content": "It read it.", "is_error": False},
    ]
    for offset, body in enumerate(rows, 1):
        db.execute(
            "INSERT INTO messages (session_id, turn_id, seq, role, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (SID, turn_id, seq + offset, body["role"], json.dumps(body), time.time()),
        )


async def run(child_messages: int, rounds: int, base: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        ws.mkdir()
        env = tether_env(dict(os.environ), home)
        await make_history(home, ws, child_messages)
        samples: dict[str, list[dict[str, Any]]] = {"this tree": [], **({"base": []} if base else {})}
        for _ in range(rounds):
            if base is not None:
                samples["base"].append(await one(sys.executable, env, ws, 2, base))
            samples["this tree"].append(await one(sys.executable, env, ws, 2))
        print(json.dumps(samples), file=sys.stderr)
        return {name: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for name, runs in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child-messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", type=Path, help="another tree measured in the same rounds")
    args = parser.parse_args()
    figures = asyncio.run(run(args.child_messages, args.rounds, args.base))
    print(json.dumps({"child_messages": args.child_messages, **figures}, indent=1))


if __name__ == "__main__":
    main()
