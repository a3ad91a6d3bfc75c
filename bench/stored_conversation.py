"""The stored conversation's own work, in process (issue 32 item 1; figures in
bench/RESULTS.md, "Issue 32: the stored formats on msgspec").

    .venv/bin/python bench/stored_conversation.py [--base /path/to/other/checkout]

CPU time (`time.process_time`, best of 9 rounds of 3; the wall clock on a shared machine
swings several-fold, CPU time far less) of four things done to 40,000 stored messages
(10,000 turns: a question, a tool call, its result, an answer):
1. `view`: the stored bodies (decoded JSON) -> typed messages (`messages_from_json`,
   what a session's model view runs on load);
2. `save`: typed messages -> the store's rows (`message_row`: validated, encoded, the
   search text);
3. `to_json`: typed messages -> stored JSON objects (`message_to_json`);
4. `snapshot_check`: a snapshot's message records checked (`check_messages`, restore).
With `--base`, the other checkout's interpreter runs the same code first, then this one,
alternating for three rounds; medians of the rounds are printed per tree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COUNT = 40_000


def bodies(count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(count // 4):
        out += [
            {"role": "user", "content": [{"type": "text", "text": f"question {t}: how does part {t} work?"}]},
            {"role": "assistant", "text": f"Let me look at part {t}.",
             "tool_calls": [{"id": f"c{t}", "name": "read_file", "arguments": {"path": f"src/part{t}.py"}}]},
            {"role": "tool", "tool_call_id": f"c{t}", "name": "read_file", "content": "x = 1\n" * 20,
             "is_error": False, "title": "Read", "kind": "read", "locations": [{"path": f"src/part{t}.py"}]},
            {"role": "assistant", "text": f"Part {t} sets x to 1."},
        ]
    return out


def measure(root: Path) -> dict[str, float]:
    sys.path[:0] = [str(root / "daemon"), str(root / "protocol")]
    from tether.store.records import MessageRecord, message_row
    from tether.store.snapshot_checks import check_messages
    from tether_protocol.conversation import message_to_json, messages_from_json

    stored = bodies(COUNT)
    typed = messages_from_json(stored)
    records = [{"seq": i, "turn_id": None, "role": b["role"], "status": "complete", "created_at": 1.0, "body": b}
               for i, b in enumerate(stored)]
    work = {
        "view_ms": lambda: messages_from_json(stored),
        "save_ms": lambda: [message_row(MessageRecord.of(m), 1.0) for m in typed],
        "to_json_ms": lambda: [message_to_json(m) for m in typed],
        "snapshot_check_ms": lambda: check_messages(records, set()),
    }
    return {
        name: round(min(timeit.Timer(fn, timer=time.process_time).repeat(number=3, repeat=9)) * 1000 / 3, 1)
        for name, fn in work.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="another checkout, measured first with its own .venv")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one or not args.base:
        print(json.dumps(measure(Path.cwd() if args.one else ROOT)))  # --one: the tree it runs in
        return
    trees = {"base": Path(args.base).resolve(), "this": ROOT}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(3):
        for name, tree in trees.items():
            script = tree / "bench" / "stored_conversation.py"
            if not script.exists():  # the base predates this script: run this one with its python
                script = Path(__file__).resolve()
            out = subprocess.run([str(tree / ".venv/bin/python"), str(script), "--one"], cwd=tree,
                                 capture_output=True, text=True, check=True)
            samples[name].append(json.loads(out.stdout))
    print(json.dumps({name: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
                      for name, runs in samples.items()}, indent=2))


if __name__ == "__main__":
    main()
