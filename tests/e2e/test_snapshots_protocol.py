"""Snapshots, forks, search and "latest" through a real `tether serve`."""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from daemon_harness import EXAMPLES, kinds
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

# Stored protocol data that itself looks like JSON-RPC messages: it must stay data.
NESTED = {
    "request": {"jsonrpc": "2.0", "id": 1, "method": "session/cancel", "params": {"sessionId": "x"}},
    "response": {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}},
    "error": {"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "no"}},
    "batch": [{"jsonrpc": "2.0", "method": "exit"}],
}


async def _turn(daemon, workspace: Path, prompt: str = "What does the README say?"):
    session = await daemon.client.new_session(workspace)
    turn = session.prompt(prompt)
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    return session


def _without_ids(snapshot: dict[str, Any]) -> dict[str, Any]:
    snap = copy.deepcopy(snapshot)
    del snap["exported_at"], snap["session"]["id"], snap["session"]["updated_at"]
    ids = {t["id"]: i for i, t in enumerate(snap["turns"])}
    for turn in snap["turns"]:
        turn["id"] = ids[turn["id"]]
    for entry in (*snap["messages"], *snap["reports"]):
        entry["turn_id"] = ids.get(entry["turn_id"])
    for entry in snap["reports"]:
        entry["report"].pop("sessionId", None)
        entry["report"].pop("turnId", None)
    return snap


async def test_dump_restore_load_replays_the_same_conversation(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})

    assert snapshot["tether_snapshot"] == 1
    assert snapshot["session"]["id"] == session.id and snapshot["session"]["workspace"] == str(workspace)
    assert snapshot["session"]["title"] == "What does the README say?"
    assert [m["role"] for m in snapshot["messages"]] == ["user", "assistant", "tool", "assistant"]
    (turn,) = snapshot["turns"]
    assert turn["status"] == "complete" and turn["stop_reason"] == "end_turn"
    assert snapshot["reports"][0]["turn_id"] == turn["id"]
    assert snapshot["reports"][0]["report"]["stepCount"] == 2
    assert snapshot["pending"] is None and snapshot["rules"] == []

    restored = await daemon.client.request("_tether/session/restore", {"snapshot": snapshot})
    new_id = restored["sessionId"]
    assert new_id != session.id and new_id.startswith("sess_")
    assert restored == {"sessionId": new_id, "cwd": str(workspace), "mode": "ask", "rules": []}
    again = await daemon.client.request("_tether/session/dump", {"sessionId": new_id, "cwd": str(workspace)})
    assert _without_ids(again) == _without_ids(snapshot)

    # a fresh daemon loads both and replays the same updates
    other = await spawn_daemon()
    original = await other.client.load_session(session.id, workspace)
    copied = await other.client.load_session(new_id, workspace)

    def replayed(updates: list) -> list:  # (the slash command list follows each load's answer)
        return [u for u in updates if u["sessionUpdate"] != "available_commands_update"]

    assert replayed(copied.updates) == replayed(original.updates)
    assert kinds(replayed(copied.updates)) == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    # and the restored session takes new turns
    turn = copied.prompt("hello again")
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    reports = await other.client.request("_tether/session/report", {"sessionId": new_id})
    assert len(reports["reports"]) == 2 and reports["reports"][0]["sessionId"] == new_id


async def test_nested_jsonrpc_objects_stay_data_both_ways(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    snapshot["messages"][0]["body"]["_meta"] = {"tether": NESTED}
    snapshot["messages"][0]["body"]["content"].append({"type": "text", "text": '{"jsonrpc":"2.0","id":9}'})
    snapshot["session"]["metadata"] = {"raw": NESTED["request"]}
    snapshot["reports"][0]["report"]["raw"] = NESTED

    new_id = (await daemon.client.request("_tether/session/restore", {"snapshot": snapshot}))["sessionId"]
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": new_id})

    assert dumped["messages"][0]["body"]["_meta"] == {"tether": NESTED}
    assert dumped["messages"][0]["body"]["content"][-1]["text"] == '{"jsonrpc":"2.0","id":9}'
    assert dumped["session"]["metadata"] == {"raw": NESTED["request"]}
    assert dumped["reports"][0]["report"]["raw"] == NESTED
    stats = await daemon.client.request("_tether/daemon/stats")
    assert stats.get("unknownResponses", 0) == 0
    assert daemon.client.notifications == []  # nothing nested was taken for a message


async def test_restore_errors(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})

    cases = [
        (
            {"snapshot": {**snapshot, "tether_snapshot": 7}},
            "invalid snapshot: snapshot version 7 is not supported (written by a newer tether; upgrade tether); "
            "this tether reads versions 1",
        ),
        ({"snapshot": {**snapshot, "messages": [{"seq": 0}]}}, "invalid snapshot: messages[0].role must be one of"),
        ({"snapshot": "nope"}, "invalid snapshot: a snapshot must be a JSON object, not a string"),
        ({}, "snapshot (an object from _tether/session/dump) or path (a file it wrote) is required, not both"),
        ({"snapshot": snapshot, "keepId": "yes"}, "keepId must be a boolean"),
        ({"snapshot": snapshot, "keepId": True}, f"session {session.id!r} is live in this daemon"),
        (
            {"snapshot": {**snapshot, "session": {**snapshot["session"], "mode": "yolo"}}},
            "invalid snapshot: session.mode must be one of read-only, ask, auto-edit, full-auto, not 'yolo'",
        ),
    ]
    for params, message in cases:
        with pytest.raises(ClientError) as caught:
            await daemon.client.request("_tether/session/restore", params)
        assert caught.value.code == -32602
        assert message in caught.value.message, caught.value.message

    other = await spawn_daemon()  # not live there, but stored: keepId finds the existing one
    with pytest.raises(ClientError) as caught:
        await other.client.request("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
    assert caught.value.code == -32602
    assert f"session {session.id!r} already exists in this workspace" in caught.value.message


async def test_restore_chooses_the_workspace_and_imports_rules_only_when_asked(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    # moved away (its results' places with it): the default root is used
    snapshot = json.loads(json.dumps(snapshot).replace(str(workspace), str(tmp_path / "gone")))
    assert snapshot["session"]["workspace"] == str(tmp_path / "gone")
    snapshot["rules"] = [
        {"kind": "execute", "pattern": "npm test", "decision": "allow"},
        {"kind": "execute", "pattern": "  ", "decision": "allow"},
        {"kind": "teleport", "pattern": "x", "decision": "allow"},
    ]
    plain = await daemon.client.request("_tether/session/restore", {"snapshot": snapshot})
    assert plain["cwd"] == str(workspace)
    assert [r["imported"] for r in plain["rules"]] == [False, False, False]
    rules = await daemon.client.request("_tether/rules/list", {"sessionId": session.id})
    assert "npm test" not in [r["pattern"] for r in rules["rules"]]

    with_rules = await daemon.client.request("_tether/session/restore", {"snapshot": snapshot, "importRules": True})
    assert [r["imported"] for r in with_rules["rules"]] == [True, False, False]
    rules = await daemon.client.request("_tether/rules/list", {"sessionId": session.id})
    assert [(r["pattern"], r["source"]) for r in rules["rules"] if r["pattern"] == "npm test"] == [("npm test", "user")]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = await daemon.client.request("_tether/session/restore", {"snapshot": snapshot, "cwd": str(elsewhere)})
    assert moved["cwd"] == str(elsewhere.resolve())
    listed = await daemon.client.list_sessions(elsewhere)
    assert [(s["sessionId"], s["cwd"]) for s in listed] == [(moved["sessionId"], str(elsewhere.resolve()))]
    loaded = await daemon.client.load_session(moved["sessionId"], elsewhere)
    assert loaded.updates[0]["sessionUpdate"] == "user_message_chunk"


async def test_acp_fork_answers_a_live_session_with_modes(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    forked = await daemon.client.request(
        "session/fork", {"sessionId": session.id, "cwd": str(workspace), "mcpServers": []}
    )
    assert forked["sessionId"] != session.id
    assert forked["modes"]["currentModeId"] == session.info["modes"]["currentModeId"]
    assert {m["id"] for m in forked["modes"]["availableModes"]} >= {"ask"}

    # live at once: it can be prompted without session/load, and it remembers the conversation
    answer = await daemon.client.request(
        "session/prompt", {"sessionId": forked["sessionId"], "prompt": [{"type": "text", "text": "hello"}]}
    )
    assert answer["stopReason"] == "end_turn"
    snap = await daemon.client.request("_tether/session/dump", {"sessionId": forked["sessionId"]})
    assert snap["session"]["title"] == "What does the README say? (fork)"
    assert [m["role"] for m in snap["messages"]] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    original = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert len(original["messages"]) == 4


async def test_tether_fork_at_a_message(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await _turn(daemon, workspace)
    forked = await daemon.client.request("_tether/session/fork", {"sessionId": session.id, "messageSeq": 1})
    snap = await daemon.client.request("_tether/session/dump", {"sessionId": forked["sessionId"]})
    assert [m["seq"] for m in snap["messages"]] == [0, 1]
    assert len(snap["turns"]) == 1

    for params, message in [
        ({"sessionId": session.id, "messageSeq": 99}, f"session {session.id!r} has no message 99 to fork at"),
        ({"sessionId": session.id, "messageSeq": -1}, "messageSeq must be an integer at least 0"),
        ({"sessionId": session.id, "messageSeq": True}, "messageSeq must be an integer at least 0"),
        ({"messageSeq": 1}, "sessionId (a non-empty string) is required"),
    ]:
        with pytest.raises(ClientError) as caught:
            await daemon.client.request("_tether/session/fork", params)
        assert caught.value.code == -32602 and message in caught.value.message, caught.value.message


async def test_unknown_sessions_are_session_not_found(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    for method, params in [
        ("_tether/session/dump", {"sessionId": "sess_nope"}),
        ("_tether/session/dump", {"sessionId": "sess_nope", "cwd": str(workspace)}),
        ("session/fork", {"sessionId": "sess_nope", "cwd": str(workspace), "mcpServers": []}),
        ("_tether/session/fork", {"sessionId": "sess_nope"}),
    ]:
        with pytest.raises(ClientError) as caught:
            await daemon.client.request(method, params)
        assert caught.value.code == -32002, method
        assert "unknown session 'sess_nope'" in caught.value.message
    with pytest.raises(ClientError) as caught:
        await daemon.client.request("_tether/session/dump", {"sessionId": "sess_nope", "cwd": "relative"})
    assert caught.value.code == -32014


async def test_a_stored_session_is_found_by_cwd_in_another_daemon(spawn_daemon, workspace: Path, tmp_path: Path):
    first = await spawn_daemon()
    session = await _turn(first, workspace)
    second = await spawn_daemon()
    # the daemon's default root is the workspace: found without cwd too
    by_default = await second.client.request("_tether/session/dump", {"sessionId": session.id})
    by_cwd = await second.client.request("_tether/session/dump", {"sessionId": session.id, "cwd": str(workspace)})
    assert by_default["messages"] == by_cwd["messages"] and len(by_cwd["messages"]) == 4


async def test_search_and_latest(spawn_daemon, workspace: Path, tmp_path: Path):
    daemon = await spawn_daemon()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert await daemon.client.request("_tether/session/latest", {"cwd": str(empty)}) == {"sessionId": None}

    first = await _turn(daemon, workspace)
    second = await _turn(daemon, workspace, "just say hello")
    result = await daemon.client.request("_tether/session/search", {"query": "README"})
    hits = result["hits"]
    assert hits and {h["sessionId"] for h in hits} == {first.id}
    assert set(hits[0]) == {"sessionId", "sessionTitle", "messageSeq", "role", "snippet", "rank"}
    assert all("[[README]]" in h["snippet"] for h in hits)
    assert {h["role"] for h in hits} >= {"user", "assistant"}
    tool_hits = await daemon.client.request(
        "_tether/session/search", {"query": "sample workspace", "cwd": str(workspace), "limit": 1}
    )
    assert [(h["role"], h["messageSeq"]) for h in tool_hits["hits"]] == [("tool", 2)]
    assert (await daemon.client.request("_tether/session/search", {"query": '"unbalanced'}))["hits"] == []

    latest = await daemon.client.request("_tether/session/latest", {})
    assert latest["sessionId"] == second.id and latest["title"] == "just say hello"
    assert latest["updatedAt"].endswith("Z") and latest["cwd"] == str(workspace)

    for params, message in [
        ({}, "query (a non-empty string) is required"),
        ({"query": "x", "limit": 0}, "limit must be an integer between 1 and 200"),
        ({"query": "x", "cwd": 5}, "cwd must be a string"),
    ]:
        with pytest.raises(ClientError) as caught:
            await daemon.client.request("_tether/session/search", params)
        assert caught.value.code == -32602 and message in caught.value.message


async def test_a_restored_copy_of_a_session_waiting_for_approval_does_not_wait(spawn_daemon, workspace: Path):
    """Only the session itself (restored under its id) may resume the original's waiting turn:
    in a copy under a new id that turn is interrupted, as in a fork."""
    asked: dict[str, list[dict]] = {"first": [], "second": []}

    def never_answers(who: str):
        async def on_request(method: str, params: dict):
            asked[who].append(params)
            await asyncio.Event().wait()

        return on_request

    first = await spawn_daemon(script=EXAMPLES / "approvals.json")
    first.client.peer.on_request = never_answers("first")
    session = await first.client.new_session(workspace)
    session.prompt("edit the readme").start()
    async with asyncio.timeout(15):
        while not asked["first"]:
            await asyncio.sleep(0.02)
    snapshot = await first.client.request("_tether/session/dump", {"sessionId": session.id})
    assert snapshot["pending"]["approvals"]["calls"][0]["id"] == "call_edit"

    copy_id = (await first.client.request("_tether/session/restore", {"snapshot": snapshot}))["sessionId"]
    copied = await first.client.request("_tether/session/dump", {"sessionId": copy_id})
    (turn,) = copied["turns"]
    assert (turn["status"], "pending" in turn, copied["pending"]) == ("interrupted", False, None)
    assert turn["finished_at"] == copied["messages"][-1]["created_at"]

    second = await spawn_daemon(script=EXAMPLES / "approvals.json")
    second.client.peer.on_request = never_answers("second")
    loaded = await second.client.load_session(copy_id, workspace)
    assert [u["status"] for u in loaded.updates if u.get("toolCallId") == "call_edit"] == ["failed"]
    answer = loaded.prompt("anything else?")  # not busy with the original's turn
    await answer.wait()
    assert answer.stop_reason == "end_turn" and asked["second"] == []

    # restored under its own id (the original deleted first), the turn still waits: asked again
    await first.client.request("session/delete", {"sessionId": session.id})
    await second.client.request("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
    moved = await second.client.load_session(session.id, workspace)
    # (the replay: the turn, resumed, asks again right after the answer)
    assert [u["status"] for u in moved.replay if u.get("toolCallId") == "call_edit"] == ["pending"]
    async with asyncio.timeout(15):
        while not asked["second"]:
            await asyncio.sleep(0.02)
    assert [p["toolCall"]["toolCallId"] for p in asked["second"]] == ["call_edit"]


async def _dump_of_a_waiting_edit(spawn_daemon, workspace: Path):
    """A daemon whose session waits for the approval of its README edit (never answered),
    the session, and its snapshot."""
    asked: list[dict] = []

    async def never_answers(method: str, params: dict):
        asked.append(params)
        await asyncio.Event().wait()

    first = await spawn_daemon(script=EXAMPLES / "approvals.json")
    first.client.peer.on_request = never_answers
    session = await first.client.new_session(workspace)
    session.prompt("edit the readme").start()
    async with asyncio.timeout(15):
        while not asked:
            await asyncio.sleep(0.02)
    return first, session, await first.client.request("_tether/session/dump", {"sessionId": session.id})


async def test_a_session_waiting_for_an_edit_restored_into_another_folder_edits_there(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    """What the model has read is stored relative to the workspace: the session, restored
    under its id into a copy of the workspace elsewhere, resumes its waiting edit there."""
    _first, session, snapshot = await _dump_of_a_waiting_edit(spawn_daemon, workspace)
    original = (workspace / "README.md").read_text()
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(workspace, elsewhere)

    answered: list[str] = []

    async def allows(method: str, params: dict):
        answered.append(params["toolCall"]["toolCallId"])
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    second = await spawn_daemon(script=EXAMPLES / "approvals.json")
    second.client.peer.on_request = allows
    restored = await second.client.request(
        "_tether/session/restore", {"snapshot": snapshot, "keepId": True, "cwd": str(elsewhere)}
    )
    assert restored["sessionId"] == session.id
    loaded = await second.client.load_session(session.id, elsewhere)

    def ended() -> list[dict]:
        return [u for u in loaded.updates if u.get("_meta", {}).get("tether", {}).get("turnEnded")]

    async with asyncio.timeout(15):
        while not ended():
            await asyncio.sleep(0.02)
    assert answered == ["call_edit"]
    edit = [u for u in loaded.updates if u.get("toolCallId") == "call_edit"]
    assert edit[-1]["status"] == "completed", edit[-1]
    assert ended()[-1]["_meta"]["tether"]["turnEnded"]["stopReason"] == "end_turn"
    assert (elsewhere / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"
    assert (workspace / "README.md").read_text() == original  # the original folder untouched


async def test_a_snapshot_grants_no_looser_mode_than_the_daemon(spawn_daemon, workspace: Path):
    """A snapshot that says "full-auto" (edited, or from a looser machine) restored into a
    daemon whose sessions start in "ask" is in "ask": its waiting edit is asked again on
    load, not applied. A daemon that starts sessions in full-auto keeps it."""
    first, session, snapshot = await _dump_of_a_waiting_edit(spawn_daemon, workspace)
    snapshot["session"]["mode"] = "full-auto"
    await first.client.request("session/delete", {"sessionId": session.id})
    original = (workspace / "README.md").read_text()

    asked: list[dict] = []

    async def never_answers(method: str, params: dict):
        asked.append(params)
        await asyncio.Event().wait()

    second = await spawn_daemon(script=EXAMPLES / "approvals.json")
    second.client.peer.on_request = never_answers
    restored = await second.client.request("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
    assert restored["mode"] == "ask"
    loaded = await second.client.load_session(session.id, workspace)
    assert loaded.info["modes"]["currentModeId"] == "ask"
    async with asyncio.timeout(15):
        while not asked:
            await asyncio.sleep(0.02)
    assert [p["toolCall"]["toolCallId"] for p in asked] == ["call_edit"]
    assert (workspace / "README.md").read_text() == original

    loose = await spawn_daemon("--mode", "full-auto", script=EXAMPLES / "approvals.json")
    kept = await loose.client.request("_tether/session/restore", {"snapshot": snapshot})
    assert kept["mode"] == "full-auto"
