"""A dump file written by an older Tether (main before issue 32 item 1 merged the snapshot's two
descriptions: `fixtures/dump_by_main.json`, a session with tool calls, run reports, a rewind, its
checkpoints and rewound messages) restores through a real `tether serve`, and the restored
session dumps to the same bytes: the same records, keys, order and numbers (only what a restore
gives anew differs: the session's id, workspace (and its results' places in it), mode (the restoring daemon's) and time, the turns' ids, the time of the dump)."""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump_by_main.json"


def _as_the_fixture(text: str, old: dict, new: dict) -> str:
    """``text`` (the restored session's dump) with what a restore gives anew put back as ``old`` had it."""
    swaps = {
        json.dumps(new["session"]["id"]): json.dumps(old["session"]["id"]),
        json.dumps(new["session"]["workspace"]): json.dumps(old["session"]["workspace"]),
        f'"mode":{json.dumps(new["session"]["mode"])}': f'"mode":{json.dumps(old["session"]["mode"])}',
    }
    swaps |= {json.dumps(n["id"]): json.dumps(o["id"]) for n, o in zip(new["turns"], old["turns"], strict=True)}
    for key in ("exported_at", "updated_at"):
        source = old if key == "exported_at" else old["session"]
        text = re.sub(f'"{key}":[0-9.e+-]+', f'"{key}":{json.dumps(source[key])}', text, count=1)
    # its results' places moved into the new workspace (SPEC §3.29) are put back under the old one
    swaps[f'"{new["session"]["workspace"]}/'] = f'"{old["session"]["workspace"]}/'
    return re.sub("|".join(map(re.escape, swaps)), lambda m: swaps[m.group(0)], text)


async def test_a_dump_written_by_main_restores_and_dumps_the_same_bytes(spawn_daemon, workspace: Path, tmp_path: Path):
    fixture = FIXTURE.read_text(encoding="utf-8")
    old = json.loads(fixture)
    assert old["checkpoints"]["rewinds"] and [m for m in old["messages"] if "rewound" in m] and old["reports"]
    daemon = await spawn_daemon()

    restored = await daemon.client.request("_tether/session/restore", {"path": str(FIXTURE), "cwd": str(workspace)})
    again = tmp_path / "again.json"
    await daemon.client.request("_tether/session/dump", {"sessionId": restored["sessionId"], "path": str(again)})

    text = again.read_text(encoding="utf-8")
    new = json.loads(text)
    assert new["session"]["id"] == restored["sessionId"] != old["session"]["id"]
    assert _as_the_fixture(text, old, new) == fixture
