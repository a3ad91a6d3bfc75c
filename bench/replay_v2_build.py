"""The replays' own CPU cost in one process: building the updates and encoding them (replay32).

    .venv/bin/python bench/replay_v2_build.py [--tree /work/main] [--repeats 12]

40,000 updates of 10,000 generated turns (a question, a read and its result, an answer), as
v1's `replayed` + the protocol's encoder and as v2's `ReplayV2.updates` + its encoder (orjson
for a tree whose v2 replay builds dicts); CPU time (`time.process_time`, the least of the
repeats, gc off as in the daemon's replay), so other processes' load hardly moves it. Run it
once per tree (`--tree`, default this one) to compare trees.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path
from typing import Any


def history(turns: int) -> list[tuple[dict[str, Any], str, str, int]]:
    random.seed(1)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()

    def said(n: int) -> str:
        return " ".join(random.choice(words) for _ in range(n))

    out: list[tuple[dict[str, Any], str, str, int]] = []
    for i in range(turns):
        turn, seq, read = f"turn_{i}", 4 * i, {"path": f"src/f{i}.py"}
        out += [
            ({"role": "user", "content": [{"type": "text", "text": said(20)}]}, "complete", turn, seq),
            ({"role": "assistant", "text": said(30), "tool_calls": [{"id": f"c{i}", "name": "read_file", "arguments": read}]},
             "complete", turn, seq + 1),
            ({"role": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": said(200), "title": f"Read {read['path']}",
              "kind": "read", "locations": [{"path": f"/w/{read['path']}"}]}, "complete", turn, seq + 2),
            ({"role": "assistant", "text": said(60)}, "complete", turn, seq + 3),
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--repeats", type=int, default=12)
    args = parser.parse_args()
    sys.path[:0] = [str(args.tree / "daemon"), str(args.tree / "protocol")]
    import orjson

    from tether.rendering.replay import replayed
    from tether.rendering.replay_v2 import ReplayV2
    from tether_protocol import ENCODER

    stored = history(10_000)
    v1 = [(body, status) for body, status, _turn, _seq in stored]
    gc.disable()
    spent: dict[str, list[float]] = {"v1_build": [], "v1_encode": [], "v2_build": [], "v2_encode": []}
    for _ in range(args.repeats):
        for name, build in (("v1", lambda: list(replayed(v1))), ("v2", lambda: ReplayV2("sess_bench").updates(stored))):
            t0 = time.process_time()
            updates = build()
            t1 = time.process_time()
            encode = orjson.dumps if isinstance(updates[0], dict) else ENCODER.encode
            for update in updates:
                encode(update)
            spent[f"{name}_build"].append(t1 - t0)
            spent[f"{name}_encode"].append(time.process_time() - t1)
    print(json.dumps({"tree": str(args.tree), **{k: round(min(v) * 1000, 1) for k, v in spent.items()}}))


if __name__ == "__main__":
    main()
