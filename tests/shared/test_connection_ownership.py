"""What the shared daemon's split guarantees (issue 32 item 2): a window's settings and the
provider they choose are its own, and a window that leaves takes its place in a session's
audience with it while the session goes on for the others. Real shared daemon, real windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether_client import ClientError


def _said(updates: list[dict]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


async def _answer(window, workspace: Path, text: str) -> str:
    session = await window.new_session(workspace)
    turn = session.prompt(text)
    await turn.wait()
    assert turn.stop_reason == "end_turn", turn.updates
    return _said(turn.updates)


async def test_a_windows_own_script_answers_it_and_no_other_window(windows, workspace: Path, tmp_path: Path):
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"model": "scripted-own", "replies": [{"text": "From this window's own script."}]}))
    daemons = await windows.open()  # the daemon's script, before and after the other window
    mine = await windows.open(initialize=False)
    await mine.initialize(initializationOptions={"script": str(own)})
    assert "Nothing scripted for that." in await _answer(daemons, workspace, "hello")
    assert "From this window's own script." in await _answer(mine, workspace, "hello")
    assert "Nothing scripted for that." in await _answer(daemons, workspace, "hello again")
    later = await windows.open()
    assert "Nothing scripted for that." in await _answer(later, workspace, "hello")
    assert len(windows.daemon_pids()) == 1


async def test_a_window_that_leaves_takes_its_audience_entry_with_it(windows, workspace: Path):
    first = await windows.open()
    second = await windows.open()
    session = await first.new_session(workspace)
    await second.load_session(session.id, workspace)
    await second.close()  # the window leaves (its process ends): only the first sees the session
    turn = session.prompt("hello")
    await turn.wait()  # the session goes on for the window that stays
    assert turn.stop_reason == "end_turn" and "Nothing scripted for that." in _said(turn.updates)
    # closing it in the last window that sees it ends it: no audience entry of the window that left is
    # left to keep it live (a session another window still sees stays live: test_one_session_two_windows.py)
    await session.close()
    with pytest.raises(ClientError) as err:
        await first.request("session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}]})
    assert "unknown session" in str(err.value)
