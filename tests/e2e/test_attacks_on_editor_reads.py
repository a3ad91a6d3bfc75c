"""A hostile repository against the frame limit (SPEC §1.2) through an ACP editor that reads
files for Tether (`fs/read_text_file`): a 70 MB file in the workspace, which the model is
made to read. The editor's answer would be over the daemon's limit on one message (skipped
unread: the tool would wait for it for ever), so the file is read from the disk, a page at a
time, and the turn ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether_client import TetherClient


async def test_a_file_too_large_for_the_editors_answer_is_read_from_disk(spawn_daemon, workspace: Path) -> None:
    line = "a line of the large readme\n"
    (workspace / "README.md").write_text(line * (70 * 1024 * 1024 // len(line)))
    daemon = await spawn_daemon(initialize=False)
    client: TetherClient = daemon.client
    asked: list[str] = []

    async def editor(method: str, params: dict):
        asked.append(method)
        if method == "fs/read_text_file":  # the whole file, as an editor answers
            return {"content": Path(params["path"]).read_text()}
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    client.peer.on_request = editor
    await client.initialize(
        clientCapabilities={"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": False}
    )
    session = await client.new_session(workspace)
    turn = session.prompt("read the readme")
    answer = await asyncio.wait_for(turn.wait(), 60)
    assert answer["stopReason"] == "end_turn"
    read = [u for u in turn.updates if u.get("toolCallId") == "call_read" and u.get("status") == "completed"]
    assert read and "     1\ta line of the large readme" in read[-1]["content"][0]["content"]["text"]
    assert "fs/read_text_file" not in asked
    # a small file is still the editor's to give
    (workspace / "README.md").write_text("small\n")
    await asyncio.wait_for(session.prompt("read the readme").wait(), 60)
    assert asked == ["fs/read_text_file"]
