"""session/new|load|list|close|delete|set_mode, called in-process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from server_harness import Answered, running

from tether.store import database_path

if TYPE_CHECKING:
    from tether.config import Settings


async def test_a_new_session_answers_its_id_and_modes_and_is_listed(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        answer = await daemon.call("session/new", {"cwd": str(workspace)})
        assert answer["sessionId"].startswith("sess_")
        assert answer["modes"]["currentModeId"] == "ask"
        assert [m["id"] for m in answer["modes"]["availableModes"]] == ["read-only", "ask", "auto-edit", "full-auto"]
        # never prompted: listed only when asked for, and with no title at all (not null)
        assert await daemon.call("session/list", {"cwd": str(workspace)}) == {"sessions": []}
        listed = await daemon.call("session/list", {"cwd": str(workspace), "_meta": {"tether": {"includeEmpty": True}}})
        assert listed["sessions"] == [
            {"sessionId": answer["sessionId"], "cwd": str(workspace), "updatedAt": listed["sessions"][0]["updatedAt"]}
        ]
        assert listed["sessions"][0]["updatedAt"].endswith("Z") and "nextCursor" not in listed


async def test_bad_params_and_bad_workspaces_are_answered_as_errors(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        with pytest.raises(Answered) as wrong_type:
            await daemon.call("session/new", {"cwd": 3})
        assert wrong_type.value.code == -32602 and "cwd" in wrong_type.value.message
        with pytest.raises(Answered) as relative:
            await daemon.call("session/new", {"cwd": "ws"})
        assert relative.value.code == -32014
        assert relative.value.message == "cwd 'ws' must be an absolute path to a directory"
        with pytest.raises(Answered) as cursor:
            await daemon.call("session/list", {"cwd": str(workspace), "cursor": "nonsense"})
        assert cursor.value.code == -32602
        assert cursor.value.message.startswith("invalid params for session/list: params.cursor:")
        with pytest.raises(Answered) as mode:
            await daemon.call("session/set_mode", {"sessionId": "sess_x", "modeId": "yolo"})
        assert mode.value.code == -32602 and "modeId" in mode.value.message


async def test_unknown_sessions_are_answered_with_what_to_do(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        for method in ("session/close", "session/set_mode", "session/prompt"):
            params = {"sessionId": "sess_nope", "modeId": "ask", "prompt": [{"type": "text", "text": "hi"}]}
            with pytest.raises(Answered) as unknown:
                await daemon.call(method, params)
            assert unknown.value.code == -32002
            assert unknown.value.message.startswith("unknown session 'sess_nope': create one with session/new")
        with pytest.raises(Answered) as stored:
            await daemon.call("session/load", {"sessionId": "sess_nope", "cwd": str(workspace)})
        assert stored.value.code == -32002
        assert "session/list shows the sessions stored for a workspace" in stored.value.message


async def test_set_mode_is_kept_and_a_deleted_session_is_gone(settings: Settings, workspace: Path, tmp_path: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        assert await daemon.call("session/set_mode", {"sessionId": session_id, "modeId": "read-only"}) == {}
    async with running(settings, workspace) as daemon:  # another daemon, the same history
        loaded = await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace)})
        assert loaded["modes"]["currentModeId"] == "read-only"
        assert await daemon.call("session/delete", {"sessionId": session_id}) == {}
        with pytest.raises(Answered) as gone:
            await daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        assert gone.value.code == -32002
        with pytest.raises(Answered) as unknown:
            await daemon.call("session/delete", {"sessionId": session_id})
        assert unknown.value.code == -32002
        assert (await daemon.call("session/list", {"cwd": str(workspace)}))["sessions"] == []


async def test_close_ends_the_session_here_but_keeps_it_stored(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        assert await daemon.call("session/close", {"sessionId": session_id}) == {}
        with pytest.raises(Answered) as closed:
            await daemon.call("session/set_mode", {"sessionId": session_id, "modeId": "ask"})
        assert closed.value.code == -32002
        resumed = await daemon.call("session/resume", {"sessionId": session_id, "cwd": str(workspace)})
        assert set(resumed) == {"modes", "configOptions"} and resumed["modes"]["currentModeId"] == "ask"


async def test_a_history_that_cannot_be_opened_is_a_storage_failure(settings: Settings, workspace: Path):
    db = database_path(workspace, Path(settings.home))
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a SQLite database, just some text " * 100)
    async with running(settings, workspace) as daemon:
        with pytest.raises(Answered) as failed:
            await daemon.call("session/new", {"cwd": str(workspace)})
        assert failed.value.code == -32015
        assert failed.value.data == {"path": str(db)}
        assert str(db) in failed.value.message
