"""The stored conversation's own work, in process (issue 32 item 1; figures in
bench/RESULTS.md, "Issue 32: the stored formats on msgspec").

    .venv/bin/python bench/stored_conversation.py [--base /path/to/other/checkout]

CPU time (`time.process_time`, best of 9 rounds of 3; the wall clock on a shared machine
swings several-fold, CPU time far less) of five things done to 40,000 stored messages
(10,000 turns: a question, a tool call, its result, an answer):
1. `view`: the stored bodies (decoded JSON) -> typed messages (`messages_from_json`,
   what a session's model view runs on load);
2. `save`: typed messages -> the store's rows (`message_row`: validated, encoded, the
   search text);
3. `to_json`: typed messages -> stored JSON objects (`message_to_json`);
4. `snapshot_check`: a snapshot's message records checked (`check_messages`, restore);
5. `snapshot_stream_check`: the same one record at a time (`check_message`, a restore read
   from a file or text, record by record).
With `--base`, the other checkout's interpreter runs this code first, then this one,
alternating for three rounds; medians of the rounds are printed per tree.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path
from typing import Any

COUNT = 40_000


def bodies(count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(count // 4):
        out += [
            {"role": "user", "content": [{"type": "text", "text": f"question {t}: how does part {t} work?"}]},
            {
                "role": "assistant",
                "text": f"Let me look at part {t}.",
                "tool_calls": [{"id": f"c{t}", "name": "read_file", "arguments": {"path": f"src/part{t}.py"}}],
            },
            {
                "role": "tool",
                "tool_call_id": f"c{t}",
                "name": "read_file",
                "content": "x = 1\n" * 20,
                "is_error": False,
                "title": "Read",
                "kind": "read",
                "locations": [{"path": f"src/part{t}.py"}],
            },
            {"role": "assistant", "text": f"Part {t} sets x to 1."},
        ]
    return out


def measure(root: Path) -> dict[str, float]:
    sys.path[:0] = [str(root / "daemon"), str(root / "protocol")]
    from tether.store.records import MessageRecord, message_row
    from tether.store.snapshot_checks import check_message, check_messages
    from tether_protocol.conversation import message_to_json, messages_from_json

    def one_at_a_time(records: list[dict[str, Any]]) -> None:
        last = -1
        for i, record in enumerate(records):
            last = check_message(record, i, last, ())

    stored = bodies(COUNT)
    typed = messages_from_json(stored)
    records = [
        {"seq": i, "turn_id": None, "role": b["role"], "status": "complete", "created_at": 1.0, "body": b}
        for i, b in enumerate(stored)
    ]
    work = {
        "view_ms": lambda: messages_from_json(stored),
        "save_ms": lambda: [message_row(MessageRecord.of(m), 1.0) for m in typed],
        "to_json_ms": lambda: [message_to_json(m) for m in typed],
        "snapshot_check_ms": lambda: check_messages(records, set()),
        "snapshot_stream_check_ms": lambda: one_at_a_time(records),
    }
    return {
        name: round(min(timeit.Timer(fn, timer=time.process_time).repeat(number=3, repeat=9)) * 1000 / 3, 1)
        for name, fn in work.items()
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from two_trees import compare

    compare("stored_conversation.py", __doc__ or "", measure)
