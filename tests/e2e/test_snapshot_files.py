"""`_tether/session/dump` to a file and `_tether/session/restore` from one, through a real
`tether serve` on a real history: a session larger than a page of the dump and a batch of
the import goes there and back the same; a file cut short, damaged or wrong stores nothing
and says where; ids and files already there are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.store import HistoryStore, MessageRecord, database_path
from tether_client import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_snapshots_protocol import _without_ids

BIG = "sess_big"
TURNS = 400  # 1,600 messages: two pages of the dump, four batches of the import


async def _big_session(home: Path, workspace: Path) -> None:
    async with await HistoryStore.open(database_path(workspace, home)) as store:
        await store.create_session(BIG, str(workspace), "ask", title="big")
        for t in range(TURNS):
            call = f"call_{t}"
            await store.begin_turn(
                BIG,
                f"turn_{t}",
                MessageRecord(
                    "user", {"role": "user", "content": [{"type": "text", "text": f'question {t}: é 😀 "q" \\ \u2028'}]}
                ),
            )
            await store.append_messages(
                BIG,
                f"turn_{t}",
                [
                    MessageRecord(
                        "assistant",
                        {
                            "role": "assistant",
                            "text": f"Reading {t}.",
                            "tool_calls": [{"id": call, "name": "read_file", "arguments": {"path": f"src/p{t}.py"}}],
                        },
                    ),
                    MessageRecord(
                        "tool",
                        {
                            "role": "tool",
                            "tool_call_id": call,
                            "name": "read_file",
                            "content": f"def p{t}():\n" * 20,
                            "is_error": False,
                        },
                    ),
                    MessageRecord("assistant", {"role": "assistant", "text": f"Part {t} is fine."}),
                ],
            )
            await store.finish_turn(f"turn_{t}", "complete", "end_turn")


async def _request_error(daemon: Any, method: str, params: dict[str, Any]) -> str:
    with pytest.raises(ClientError) as caught:
        await daemon.client.request(method, params)
    assert caught.value.code == -32602, caught.value.message
    return str(caught.value.message)


async def test_a_large_session_dumped_to_a_file_and_restored_from_it_is_the_same(
    spawn_daemon, workspace: Path, tether_home: Path, tmp_path: Path
) -> None:
    await _big_session(tether_home, workspace)
    daemon = await spawn_daemon()
    (tmp_path / "dumps").mkdir()
    path = tmp_path / "dumps" / "big.json"

    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": BIG, "path": str(path)})
    whole = await daemon.client.request("_tether/session/dump", {"sessionId": BIG})

    assert dumped == {"path": str(path), "messages": 4 * TURNS, "bytes": path.stat().st_size}
    assert path.stat().st_mode & 0o077 == 0  # the whole conversation: its owner's only
    from_file = json.loads(path.read_text(encoding="utf-8"))
    assert {**from_file, "exported_at": 0} == {**whole, "exported_at": 0}
    assert [p.name for p in path.parent.iterdir()] == ["big.json"]  # nothing left beside it

    restored = await daemon.client.request("_tether/session/restore", {"path": str(path), "cwd": str(workspace)})
    copy = await daemon.client.request("_tether/session/dump", {"sessionId": restored["sessionId"]})
    assert restored["sessionId"] != BIG and len(copy["messages"]) == 4 * TURNS
    assert _without_ids(copy) == _without_ids(whole)

    replays = []
    for session_id in (BIG, restored["sessionId"]):
        loaded = await daemon.client.load_session(session_id, workspace)
        replays.append([u for u in loaded.updates if u["sessionUpdate"] != "available_commands_update"])
    assert replays[0] == replays[1] and len(replays[0]) > 3 * TURNS


async def test_a_file_cut_short_or_damaged_stores_nothing_and_says_where(
    spawn_daemon, workspace: Path, tether_home: Path, tmp_path: Path
) -> None:
    await _big_session(tether_home, workspace)
    daemon = await spawn_daemon()
    path = tmp_path / "big.json"
    await daemon.client.request("_tether/session/dump", {"sessionId": BIG, "path": str(path)})
    text = path.read_text(encoding="utf-8")
    before = await daemon.client.list_sessions(workspace)
    original = await daemon.client.request("_tether/session/dump", {"sessionId": BIG})

    bad = tmp_path / "bad.json"
    late = text.index('{"seq":1500,')  # past the first batches the import has already inserted
    bad.write_text(text[: late + 40], encoding="utf-8")
    message = await _request_error(daemon, "_tether/session/restore", {"path": str(bad), "cwd": str(workspace)})
    assert message == (
        f"invalid snapshot: line 1, column {late + 41} (character {late + 40}): "
        "the file ends inside messages[1500]: it was cut short"
    )

    damaged = text[: late - 1] + ";" + text[late:]
    bad.write_text(damaged, encoding="utf-8")
    message = await _request_error(daemon, "_tether/session/restore", {"path": str(bad), "cwd": str(workspace)})
    assert message == (
        f"invalid snapshot: line 1, column {late} (character {late - 1}): "
        "expected ',' or ']' in \"messages\", found ';'"
    )

    wrong = json.loads(text)
    wrong["messages"][1500]["role"] = "robot"
    bad.write_text(json.dumps(wrong, indent=1), encoding="utf-8")  # any layout is read a record at a time
    message = await _request_error(daemon, "_tether/session/restore", {"path": str(bad), "cwd": str(workspace)})
    assert message.startswith("invalid snapshot: messages[1500].role must be one of"), message

    assert await daemon.client.list_sessions(workspace) == before
    after = await daemon.client.request("_tether/session/dump", {"sessionId": BIG})
    assert {**after, "exported_at": 0} == {**original, "exported_at": 0}
    hits = await daemon.client.request("_tether/session/search", {"query": "question", "cwd": str(workspace)})
    assert {hit["sessionId"] for hit in hits["hits"]} == {BIG}  # no half-imported copy in the index


async def test_ids_and_files_already_there_are_refused(
    spawn_daemon, workspace: Path, tether_home: Path, tmp_path: Path
) -> None:
    await _big_session(tether_home, workspace)
    daemon = await spawn_daemon()
    path = tmp_path / "big.json"
    await daemon.client.request("_tether/session/dump", {"sessionId": BIG, "path": str(path)})
    text = path.read_bytes()

    message = await _request_error(daemon, "_tether/session/restore", {"path": str(path), "keepId": True})
    assert message == (
        f"invalid snapshot: session {BIG!r} already exists in this workspace; restore it without keeping its id"
    )
    message = await _request_error(daemon, "_tether/session/dump", {"sessionId": BIG, "path": str(path)})
    assert message == (
        f"invalid params for _tether/session/dump: path {str(path)!r} already exists; "
        "name a new file (a dump never overwrites one)"
    )
    assert path.read_bytes() == text
    message = await _request_error(daemon, "_tether/session/dump", {"sessionId": BIG, "path": "big2.json"})
    assert "must be absolute" in message
    message = await _request_error(
        daemon, "_tether/session/dump", {"sessionId": BIG, "path": str(tmp_path / "nowhere" / "x.json")}
    )
    assert "no directory" in message and "create it first" in message
    message = await _request_error(daemon, "_tether/session/restore", {"path": str(tmp_path / "missing.json")})
    assert "cannot be read: No such file or directory" in message
    message = await _request_error(daemon, "_tether/session/restore", {"path": str(path), "snapshot": {}})
    assert message.endswith("is required, not both")
