"""_tether/session/dump|restore|fork|search|latest and the rules methods, in-process; the
restore policy as `tether sessions restore` applies it too (one sessions service)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
from server_harness import Answered, running, settings_for
from tether.config import Settings
from tether_cli.sessions import sessions_main
from tether_protocol import dumps

RULES = [
    {"kind": "execute", "pattern": "npm test", "decision": "allow", "created_at": 1.0},
    {"kind": "telepathy", "pattern": "x", "decision": "allow", "created_at": 1.0},
    {"kind": "edit", "pattern": "  ", "decision": "allow", "created_at": 1.0},
]


async def _snapshot(daemon, workspace: Path) -> tuple[str, dict]:
    session_id = await daemon.new_session(workspace)
    await daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]})
    return session_id, await daemon.call("_tether/session/dump", {"sessionId": session_id})


async def test_restore_keeps_the_mode_no_looser_and_imports_known_rules_only(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, mode="ask"), workspace) as daemon:
        session_id, snapshot = await _snapshot(daemon, workspace)
        snapshot["session"]["mode"] = "full-auto"
        snapshot["rules"] = RULES
        plain = await daemon.call("_tether/session/restore", {"snapshot": snapshot})
        assert plain["sessionId"] != session_id and plain["cwd"] == str(workspace) and plain["mode"] == "ask"
        assert [r["imported"] for r in plain["rules"]] == [False, False, False]
        ruled = await daemon.call("_tether/session/restore", {"snapshot": snapshot, "importRules": True})
        assert [r["imported"] for r in ruled["rules"]] == [True, False, False]
        listed = await daemon.call("_tether/rules/list", {"sessionId": session_id})
        assert [(r["pattern"], r["source"]) for r in listed["rules"] if r["pattern"] == "npm test"] == [("npm test", "user")]
        with pytest.raises(Answered) as live:
            await daemon.call("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
        assert live.value.code == -32602
        assert live.value.message == (
            f"invalid snapshot: session {session_id!r} is live in this daemon; restore it without keepId"
        )


async def test_the_cli_restores_by_the_same_policy(tmp_path: Path, workspace: Path, capsys):
    settings = settings_for(tmp_path)
    async with running(settings, workspace) as daemon:
        _session_id, snapshot = await _snapshot(daemon, workspace)
    snapshot["session"]["mode"] = "full-auto"
    snapshot["rules"] = RULES
    file = tmp_path / "snap.json"
    file.write_bytes(dumps(snapshot))
    args = argparse.Namespace(
        action="restore", workspace=None, home=settings.home, file=str(file), keep_id=False, import_rules=True
    )
    capsys.readouterr()
    # the CLI runs its own event loop: in a thread, as `tether sessions` runs alone
    code = await asyncio.to_thread(sessions_main, args)
    out, err = capsys.readouterr()
    assert code == 0 and "restored in 'ask'" in err
    new_id = out.strip()
    async with running(settings, workspace) as daemon:
        loaded = await daemon.call("session/load", {"sessionId": new_id, "cwd": str(workspace)})
        assert loaded["modes"]["currentModeId"] == "ask"
        rules = await daemon.call("_tether/rules/list", {"sessionId": new_id})
        assert [r["pattern"] for r in rules["rules"] if r["source"] == "user"] == ["npm test"]


async def test_restore_and_dump_errors(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        for params, message in [
            ({}, "invalid params for _tether/session/restore: snapshot (an object from _tether/session/dump) or path (a file it wrote) is required, not both"),
            ({"snapshot": {}, "keepId": "yes"}, "invalid params for _tether/session/restore: keepId must be a boolean"),
            ({"snapshot": {"version": 1}}, "invalid snapshot: "),
        ]:
            with pytest.raises(Answered) as bad:
                await daemon.call("_tether/session/restore", params)
            assert bad.value.code == -32602 and bad.value.message.startswith(message)
        with pytest.raises(Answered) as no_id:
            await daemon.call("_tether/session/dump", {})
        assert no_id.value.message == "invalid params for _tether/session/dump: sessionId (a non-empty string) is required"
        with pytest.raises(Answered) as unknown:
            await daemon.call("_tether/session/dump", {"sessionId": "sess_gone"})
        assert unknown.value.code == -32002
        assert unknown.value.message.endswith("pass the workspace it belongs to as cwd")


async def test_fork_search_and_latest(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id, _snapshot_ = await _snapshot(daemon, workspace)
        fork = await daemon.call("session/fork", {"sessionId": session_id})
        assert fork["sessionId"] != session_id and fork["modes"]["currentModeId"] == "ask"
        early = await daemon.call("_tether/session/fork", {"sessionId": session_id, "messageSeq": 1})
        assert early["sessionId"] not in (session_id, fork["sessionId"])
        with pytest.raises(Answered) as negative:
            await daemon.call("_tether/session/fork", {"sessionId": session_id, "messageSeq": -1})
        assert negative.value.message == "invalid params for _tether/session/fork: messageSeq must be an integer at least 0"
        hits = (await daemon.call("_tether/session/search", {"query": "scripted"}))["hits"]
        assert {h["sessionId"] for h in hits} >= {session_id}
        with pytest.raises(Answered) as limit:
            await daemon.call("_tether/session/search", {"query": "x", "limit": 500})
        assert limit.value.message == "invalid params for _tether/session/search: limit must be an integer between 1 and 200"
        latest = await daemon.call("_tether/session/latest", {})
        assert latest["sessionId"] in (session_id, fork["sessionId"], early["sessionId"])
        assert latest["cwd"] == str(workspace)


async def test_rules_methods_check_their_params(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        with pytest.raises(Answered) as no_session:
            await daemon.call("_tether/rules/list", {})
        assert no_session.value.message == "invalid params for _tether/rules/list: sessionId (a string from session/new) is required"
        with pytest.raises(Answered) as no_id:
            await daemon.call("_tether/rules/remove", {"sessionId": session_id, "id": True})
        assert no_id.value.message == "invalid params for _tether/rules/remove: id (an integer from _tether/rules/list) is required"
        with pytest.raises(Answered) as builtin:
            await daemon.call("_tether/rules/remove", {"sessionId": session_id, "id": 10_000})
        assert builtin.value.code == -32002 and builtin.value.message.startswith("no rule #10000")
