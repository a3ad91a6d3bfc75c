"""AGENTS.md and MEMORY.md edited between two prompts of one session reach the model at the next
prompt, though the session keeps what it read while nothing changed (services/turn_setup.py): an
edit that keeps the file's size and mtime, a parent folder with an AGENTS.md that becomes the
repository's root, a file removed. A real daemon; the model is a local OpenAI-style server whose requests
are asserted."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply
from test_real_provider_turn import FAKE_KEY, KEY_ENV, serve_command, text_chunks

_OLD = 1_700_000_000  # an mtime long past: the session keeps what it read from the file


def _write_aged(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (_OLD, _OLD))


async def test_instruction_files_edited_between_prompts_are_read_at_the_next_prompt(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    agents, memory = workspace / "AGENTS.md", workspace / ".tether" / "MEMORY.md"
    _write_aged(agents, "Say alpha.\n")
    _write_aged(memory, "- The API is in src/one.\n")
    _write_aged(tmp_path / "AGENTS.md", "Say delta.\n")  # outside the workspace: read once a repository holds both
    edits = [
        lambda: None,
        lambda: None,  # nothing changed: as read
        lambda: _write_aged(agents, "Say bravo.\n"),  # same size, same mtime
        lambda: time.sleep(1.1),  # past the grain: the session keeps what it read (turn_setup._GRAIN_NS)
        lambda: (tmp_path / ".git").mkdir(),
        lambda: (agents.unlink(), _write_aged(memory, "- The API is in src/two.\n")),
    ]
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", "ok")) for _ in edits))
        daemon = await spawn_daemon(command=serve_command("openai", server), env={KEY_ENV["openai"]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        for edit in edits:
            edit()
            turn = session.prompt("hi")
            _ = [u async for u in turn]
            assert turn.stop_reason == "end_turn"
    systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert systems[3] == systems[2]  # the prompt after the pause: as the one before it
    del systems[3]
    assert len(systems) == 5
    assert all("Say alpha." in system and "src/one" in system for system in systems[:2])
    assert not any("Say delta." in system for system in systems[:3])
    assert "Say bravo." in systems[2] and "Say alpha." not in systems[2] and "Say delta." not in systems[2]
    assert systems[3].index("Say delta.") < systems[3].index("Say bravo.")  # the outer file first
    assert "Say bravo." not in systems[4] and "Say delta." in systems[4]
    assert "src/two" in systems[4] and "src/one" not in systems[4]
