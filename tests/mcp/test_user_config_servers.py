"""A server from the user's config provides tools to a turn over real stdio, with approvals."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING

from mcp_harness import (
    SCRIPT,
    User,
    final,
    new_session,
    notices,
    programs,
    run,
    text,
    trouble_marking_cancels,
    trouble_table,
    user_config,
)

from daemon_harness import host_pids, until

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_configured_server_asks_then_an_always_rule_covers_it(spawn_daemon, workspace, tmp_path: Path):
    server_dir = tmp_path / "server-dir"
    server_dir.mkdir()
    user_config(tmp_path, trouble_table(extra=f'cwd = "{server_dir}"\nwritable = ["{server_dir}"]'))
    user = User("allow_always")
    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = user.on_request
    session = await new_session(daemon, workspace)
    turn, updates = await run(session, "note this")
    assert turn.stop_reason == "end_turn"
    (prompt,) = user.prompts
    call = prompt["toolCall"]
    assert call["title"] == "trouble: note"
    assert call["rawInput"] == {"text": "hello from the model"}
    shown = call["content"][0]["content"]["text"]
    assert "MCP server: trouble" in shown and "tool: note" in shown and "hello from the model" in shown
    assert "mode ask asks before calling MCP tool trouble: note" in prompt["_meta"]["tether"]["reason"]
    done = final(updates, "call_note")
    assert done["status"] == "completed" and "noted in" in text(done)
    assert (server_dir / "notes.txt").read_text() == "hello from the model\n"
    rules = (await daemon.client.request("_tether/rules/list", {"sessionId": session.id}))["rules"]
    assert ("mcp", "mcp__trouble__note", "allow") in {(r["kind"], r["pattern"], r["decision"]) for r in rules}
    # the next call is allowed by the rule, unasked
    turn, updates = await run(session, "note again")
    assert len(user.prompts) == 1
    running = [u for u in updates if u.get("toolCallId") == "call_note" and u.get("status") == "in_progress"]
    assert "mcp__trouble__note" in running[0]["_meta"]["tether"]["approvedBy"]
    assert (server_dir / "notes.txt").read_text().count("hello from the model") == 2


async def test_a_read_only_tool_is_not_asked_and_the_server_gets_no_secrets(spawn_daemon, workspace, tmp_path: Path):
    user_config(tmp_path, trouble_table(extra='[mcp_servers.trouble.env]\nTROUBLE_GIVEN = "yes"'))
    user = User()
    daemon = await spawn_daemon(script=SCRIPT, env={"OPENAI_API_KEY": "sk-never-seen", "DAEMON_ONLY_VAR": "x"})
    daemon.client.peer.on_request = user.on_request
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "env names")
    assert user.prompts == []  # readOnlyHint: a read
    names = text(final(updates, "call_env")).split("\n")
    assert "TROUBLE_GIVEN" in names and "PATH" in names
    assert "OPENAI_API_KEY" not in names and "DAEMON_ONLY_VAR" not in names


async def test_a_deny_rule_in_the_config_refuses_the_tool_unasked(spawn_daemon, workspace, tmp_path: Path):
    user_config(tmp_path, 'deny_commands = ["mcp__trouble__*"]\n' + trouble_table())
    user = User()
    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = user.on_request
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "note this")
    assert user.prompts == []
    done = final(updates, "call_note")
    assert done["status"] == "failed" and "refused by config rule" in text(done)
    assert not (workspace / "notes.txt").exists()


async def test_failing_servers_are_notices_and_the_turn_goes_on(spawn_daemon, workspace, tmp_path: Path):
    user_config(
        tmp_path,
        "".join(
            [
                trouble_table("crashing", "crash"),
                trouble_table("hanging", "hang", extra="startup_timeout_sec = 1.5"),
                trouble_table(),
            ]
        ),
    )
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    turn, updates = await run(session, "huge output please")
    assert turn.stop_reason == "end_turn"
    said = notices(updates)
    assert "MCP server crashing" in said and "the database is missing" in said
    assert "MCP server hanging" in said and "did not start within 1.5 s" in said
    assert "tool bad_schema is not offered to the model: its input schema is not valid" in said
    huge = text(final(updates, "call_huge"))
    assert "line 0 " in huge and "line 4999 " in huge and "lines (" in huge and "elided" in huge
    assert len(huge.encode()) < 20_000
    assert "unknown tool 'mcp__trouble__bad_schema'" in text(final(updates, "call_bad"))
    wrong = final(updates, "call_wrong")
    assert wrong["status"] == "failed" and "lines: 'many' is not of type 'integer'" in text(wrong)
    # told once per session: the next turn does not repeat it
    _turn, updates = await run(session, "huge again")
    assert "MCP server crashing" not in notices(updates)


async def test_a_cancelled_call_cancels_the_request_at_the_server(spawn_daemon, workspace, tmp_path: Path):
    marker = trouble_marking_cancels(tmp_path)
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    turn = session.prompt("never answer")
    updates = []

    async def cancel_once_it_runs() -> None:
        while not (marker.exists() and marker.read_text() == "started"):  # the server has the request
            await asyncio.sleep(0.02)
        await session.cancel()

    async def read() -> None:
        async for update in turn:
            updates.append(update)

    await asyncio.wait_for(asyncio.gather(read(), cancel_once_it_runs()), 60)
    assert turn.stop_reason == "cancelled"
    await until(lambda: marker.exists() and marker.read_text() == "cancelled", timeout=30)


async def test_a_call_past_its_timeout_fails_and_is_cancelled(spawn_daemon, workspace, tmp_path: Path):
    marker = tmp_path / "marks" / "cancelled.txt"  # a path the server's config makes writable
    marker.parent.mkdir()
    user_config(
        tmp_path,
        trouble_table(
            extra=f'tool_timeout_sec = 3\nwritable = ["{marker.parent}"]\n[mcp_servers.trouble.env]\nTROUBLE_MARKER = "{marker}"'
        ),
    )
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    turn, updates = await run(session, "never answer")
    assert turn.stop_reason == "end_turn"
    done = final(updates, "call_never")
    assert done["status"] == "failed" and "did not answer never within 3 s" in text(done)
    await until(lambda: marker.exists() and marker.read_text() == "cancelled", timeout=30)


async def test_a_changed_tool_list_is_seen_at_the_next_step(spawn_daemon, workspace, tmp_path: Path):
    user_config(tmp_path, trouble_table())
    daemon = await spawn_daemon("--mode", "full-auto", script=SCRIPT)
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "grow the tools")
    assert final(updates, "call_grow")["status"] == "completed"
    late = final(updates, "call_late")
    assert late["status"] == "completed" and "late tool answered" in text(late)


async def test_no_server_process_outlives_the_daemon(spawn_daemon, workspace, tmp_path: Path):
    token = f"tether-mcp-orphan-{tmp_path.name}"
    user_config(tmp_path, trouble_table("first", token) + trouble_table("second", token))
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    await run(session, "env names")
    python = os.path.basename(os.path.realpath(sys.executable))
    assert programs(host_pids(token)).count(python) == 2  # one process each (inside its sandbox)
    await daemon.client.close()
    await until(lambda: host_pids(token) == [], timeout=30)


async def test_a_server_prompt_is_a_slash_command(spawn_daemon, workspace, tmp_path: Path):
    user_config(tmp_path, trouble_table())
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    await run(session, "env names")  # the servers start at the session's first prompt
    turn, updates = await run(session, "/trouble:review error handling")
    assert turn.stop_reason == "end_turn"
    (listed,) = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    review = next(c for c in listed["availableCommands"] if c["name"] == "trouble:review")
    assert review["description"] == "[MCP trouble] Review the code with a focus." and review["input"]["hint"] == "focus"
    # the model got the prompt the server made of the argument (the script answers only that)
    assert "Reviewing, as the MCP prompt asked." in notices(updates)


async def test_a_call_left_waiting_by_a_killed_daemon_is_asked_again_after_load(spawn_daemon, workspace, tmp_path):
    import os
    import signal

    from daemon_harness import User as Never

    server_dir = tmp_path / "server-dir"
    server_dir.mkdir()
    user_config(tmp_path, trouble_table(extra=f'cwd = "{server_dir}"\nwritable = ["{server_dir}"]'))
    waiting = Never(never=True)
    first = await spawn_daemon(script=SCRIPT)
    first.client.peer.on_request = waiting.on_request
    session = await new_session(first, workspace)
    session.prompt("note this").start()
    await until(lambda: waiting.prompts)
    os.kill(first.pid, signal.SIGKILL)
    await first.client.process.wait()

    user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = user.on_request
    loaded = await second.client.load_session(session.id, workspace)
    await until(
        lambda: any(u.get("toolCallId") == "call_note" and u.get("status") == "completed" for u in loaded.updates),
        timeout=30,
    )
    assert [p["toolCall"]["toolCallId"] for p in user.prompts] == ["call_note"]
    assert (server_dir / "notes.txt").read_text() == "hello from the model\n"


async def test_a_server_that_dies_in_a_call_is_a_notice_and_the_turn_goes_on(spawn_daemon, workspace, tmp_path):
    user_config(tmp_path, trouble_table())
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    turn, updates = await run(session, "die now")
    assert turn.stop_reason == "end_turn"
    died = final(updates, "call_die")
    assert died["status"] == "failed" and "MCP server trouble stopped answering" in text(died)
    assert "MCP server trouble (stdio: " in notices(updates) and "is not available" in notices(updates)
    after = final(updates, "call_after")  # the next step: its tools are gone
    assert after["status"] == "failed" and "unknown tool 'mcp__trouble__env_names'" in text(after)


async def test_a_linked_server_resource_reaches_the_model_as_an_attachment(spawn_daemon, workspace, tmp_path):
    user_config(tmp_path, trouble_table())
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    link = {"type": "resource_link", "uri": "trouble://notes/today", "name": "today"}
    missing = {"type": "resource_link", "uri": "trouble://notes/none", "name": "none"}
    turn = session.prompt([{"type": "text", "text": "read the note"}, link, missing])
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert "could not read" not in notices(updates)  # a link no server serves stays a link, quietly
    dump = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    (user,) = [m for m in dump["messages"] if m["role"] == "user"]
    blocks = user["body"]["content"]
    kinds = [b["type"] for b in blocks]
    assert kinds == ["text", "resource_link", "resource", "resource_link"]
    assert blocks[2]["resource"] == {
        "uri": "trouble://notes/today",
        "text": "Today's note: ship the MCP work.",
        "mimeType": "text/plain",
    }
