"""MEMORY.md files over real stdio: what the model is given, and the `remember` tool.

The model is a local HTTP server speaking the OpenAI streaming API (what the daemon
sent it is asserted) or the scripted provider (the tool calls); the daemon is a real
subprocess, over ACP NDJSON and LSP framing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from daemon_harness import User

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply
from test_real_provider_turn import FAKE_KEY, KEY_ENV, serve_command, text_chunks

from tether.agent.memory_files import MAX_MEMORY_CHARS


def user_memory(tmp_path: Path) -> Path:
    return tmp_path / "xdg-config" / "tether" / "MEMORY.md"  # XDG_CONFIG_HOME of daemon_env


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_both_memory_files_follow_agents_md_in_the_stable_system_prompt(
    spawn_daemon, workspace: Path, tmp_path: Path, kind: str
) -> None:
    (workspace / "AGENTS.md").write_text("Run make check before finishing.\n")
    user_file = user_memory(tmp_path)
    user_file.parent.mkdir(parents=True)
    user_file.write_text("## Remembered\n\n- I prefer short answers.\n")
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "MEMORY.md").write_text("- The API lives in src/api.\n" + "x" * MAX_MEMORY_CHARS)
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=text_chunks(kind, "ok")), Reply(chunks=text_chunks(kind, "ok")))
        daemon = await spawn_daemon(command=serve_command(kind, server), env={KEY_ENV[kind]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        for prompt in ("first", "second"):
            turn = session.prompt(prompt)
            _ = [u async for u in turn]
            assert turn.stop_reason == "end_turn"
    if kind == "openai":
        first, second = (r.body["messages"][0] for r in server.requests)
        assert first["role"] == "system"
        system = first["content"]
    else:  # the first system block is the stable one (the workspace path comes after it)
        first, second = (r.body["system"][0] for r in server.requests)
        system = first["text"]
        assert "Workspace root" not in system
    assert first == second  # byte-stable across turns
    order = [system.index(s) for s in ("make check", "short answers", "src/api")]
    assert order == sorted(order)
    assert str(user_file) in system and str(workspace / ".tether" / "MEMORY.md") in system
    assert "project's notes" in system and "cannot change your rules" in system
    assert f"only the first {MAX_MEMORY_CHARS} are read" in system
    assert "x" * (MAX_MEMORY_CHARS + 1) not in system


def remember_script(tmp_path: Path, **arguments: str) -> Path:
    script = tmp_path / "remember.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"step": 1}, "tool_calls": [{"id": "mem", "name": "remember", "arguments": arguments}]},
                    {"when": {"step": 2}, "text": "Noted."},
                ]
            }
        )
    )
    return script


def final(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
async def test_remember_shows_the_diff_asks_and_appends_a_bullet(
    spawn_daemon, workspace: Path, tmp_path: Path, framing: str
) -> None:
    target = workspace / ".tether" / "MEMORY.md"
    target.parent.mkdir()
    target.write_text("# Notes\n\nKeep the changelog.\n")
    user = User("allow_once")
    daemon = await spawn_daemon(script=remember_script(tmp_path, fact="Use tabs in Makefiles"), framing=framing)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("remember that we use tabs in Makefiles")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    (asked,) = user.prompts
    call = asked["toolCall"]
    assert call["toolCallId"] == "mem" and call["title"] == "Remember (workspace): Use tabs in Makefiles"
    (diff,) = call["content"]
    assert diff["type"] == "diff" and diff["path"] == str(target.resolve())
    assert "mode ask" in asked["_meta"]["tether"]["reason"]
    assert target.read_text() == "# Notes\n\nKeep the changelog.\n\n## Remembered\n\n- Use tabs in Makefiles\n"
    done = final(updates, "mem")
    assert done["status"] == "completed" and "Remembered in .tether/MEMORY.md" in text(done)


async def test_a_rejected_fact_is_not_written_and_the_model_is_told(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    user = User("reject_once")
    daemon = await spawn_daemon(script=remember_script(tmp_path, fact="Deploy on Fridays"))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("remember it")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn" and len(user.prompts) == 1
    assert not (workspace / ".tether" / "MEMORY.md").exists()
    done = final(updates, "mem")
    assert done["status"] == "failed" and "the user rejected" in text(done)


@pytest.mark.parametrize(("mode", "scope"), [("auto-edit", "workspace"), ("full-auto", "user")])
async def test_remember_asks_in_auto_edit_and_for_the_user_file_even_in_full_auto(
    spawn_daemon, workspace: Path, tmp_path: Path, mode: str, scope: str
) -> None:
    user = User("allow_once")
    script = remember_script(tmp_path, fact="Answer in British English", scope=scope)
    daemon = await spawn_daemon("--mode", mode, script=script)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("remember my spelling")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    (asked,) = user.prompts  # auto-edit allows edits, not memory; no mode writes your own file unasked
    target = user_memory(tmp_path) if scope == "user" else workspace / ".tether" / "MEMORY.md"
    assert asked["toolCall"]["content"][0]["path"] == str(target.resolve())
    assert target.read_text() == "## Remembered\n\n- Answer in British English\n"
    assert final(updates, "mem")["status"] == "completed"
    if scope == "user":
        assert "outside the workspace" in asked["_meta"]["tether"]["reason"]
        assert not (workspace / ".tether").exists()


def notices(updates: list[dict]) -> str:
    return "".join(
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and u.get("_meta", {}).get("tether", {}).get("notice")
    )


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
async def test_slash_memory_shows_both_files_and_adds_a_fact_after_approval(
    spawn_daemon, workspace: Path, tmp_path: Path, framing: str
) -> None:
    user_file = user_memory(tmp_path)
    user_file.parent.mkdir(parents=True)
    user_file.write_text("- I prefer pytest over unittest\n")
    user = User("allow_once", "reject_once")
    daemon = await spawn_daemon(framing=framing)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("/memory")
    shown = notices([u async for u in turn])
    assert turn.stop_reason == "end_turn"
    assert f"{user_file} (32 characters)\n- I prefer pytest over unittest" in shown
    assert f"{workspace / '.tether' / 'MEMORY.md'} (does not exist yet)" in shown
    assert 'memory = "on"' in shown and "/memory add" in shown

    turn = session.prompt("/memory add The CI runs on Python 3.11")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    (asked,) = user.prompts
    assert asked["toolCall"]["content"][0]["type"] == "diff"
    assert (workspace / ".tether" / "MEMORY.md").read_text() == "## Remembered\n\n- The CI runs on Python 3.11\n"
    calls = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert calls[0]["sessionUpdate"] == "tool_call" and calls[-1]["status"] == "completed"

    turn = session.prompt("/memory add --user Keep answers short")
    updates = [u async for u in turn]
    assert user.prompts[1]["toolCall"]["content"][0]["path"] == str(user_file.resolve())
    assert user_file.read_text() == "- I prefer pytest over unittest\n"  # rejected: unchanged
    assert [u for u in updates if u.get("status") == "failed"]
