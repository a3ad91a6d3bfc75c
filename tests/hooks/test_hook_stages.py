"""Every hook stage fires with its event; context reaches the model; a workspace cannot add hooks."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hooks_harness import User, content_text, final, hook, notices, run, toml_string, write_script

if TYPE_CHECKING:
    from pathlib import Path

STAGES = ("session_start", "prompt_submit", "pre_tool", "permission_request", "post_tool", "step_end", "turn_end")


def events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_each_stage_fires_with_its_event(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    log = workspace / ".events.jsonl"
    user_config.write_text(
        "".join(f"[[hooks.{stage}]]\ncommand = {toml_string(hook('none', log))}\n" for stage in STAGES)
    )
    user = User("allow_once")
    daemon = await spawn_daemon(script=write_script(tmp_path))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn, _ = await run(session, "run the tests")
    assert turn.stop_reason == "end_turn"
    seen = events(log)
    assert [e["stage"] for e in seen] == [
        "session_start",
        "prompt_submit",
        "pre_tool",
        "permission_request",
        "post_tool",
        "step_end",
        "step_end",
        "turn_end",
    ]
    by_stage = {e["stage"]: e for e in seen}
    for e in seen:
        assert e["session"] == session.id and e["cwd"] == str(workspace) and e["turn"]
    assert by_stage["prompt_submit"]["prompt"] == "run the tests"
    assert by_stage["prompt_submit"]["hook_event_name"] == "UserPromptSubmit"  # Claude Code's name too
    assert by_stage["pre_tool"]["tool"] == "run_command" == by_stage["pre_tool"]["tool_name"]
    assert by_stage["pre_tool"]["arguments"] == {"command": "echo all passed"} == by_stage["pre_tool"]["tool_input"]
    assert by_stage["permission_request"]["reason"].startswith("mode ask asks before running")
    assert "all passed" in by_stage["post_tool"]["result"]["text"]
    assert by_stage["post_tool"]["result"]["is_error"] is False
    assert by_stage["turn_end"]["stop_reason"] == "end_turn"
    # a second turn: session_start fired once per session
    await run(session, "run the tests")
    assert [e["stage"] for e in events(log)].count("session_start") == 1


async def test_pre_compact_fires_before_a_compaction(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    log = workspace / ".events.jsonl"
    user_config.write_text(f"[[hooks.pre_compact]]\ncommand = {toml_string(hook('none', log))}\n")
    script = tmp_path / "long.json"
    script.write_text(
        json.dumps(
            {
                "context_window": 600,
                "replies": [
                    {"when": {"purpose": "compaction"}, "text": "SUMMARY: long answers."},
                    {"text": "A long answer. " * 40},
                ],
            }
        )
    )
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    for n in range(4):
        await run(session, f"question {n}")
    (first, *_) = events(log)
    assert first["stage"] == "pre_compact" and first["messages"] > 0
    assert first["reason"] == "the conversation passed 75% of the context window"


async def test_prompt_submit_and_post_tool_context_reach_the_model(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user_config.write_text(
        f'[[hooks.prompt_submit]]\ncommand = {toml_string(hook("context"))}\nname = "colours"\n'
        f"[[hooks.post_tool]]\ncommand = {toml_string(hook('claude_context'))}\n"
    )
    # the model answers with what it was given: the reply matches only when the context is in the prompt
    script = write_script(
        tmp_path,
        [
            {"when": {"user": "favourite colour is teal", "step": 1}, "text": "Teal, noted."},
        ],
    )
    daemon = await spawn_daemon(script=script, framing="ndjson")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "what is my colour?")
    assert "Teal, noted." in notices(updates)
    assert "[hook colours (prompt_submit): added context for the model]" in notices(updates)
    user_config.write_text(f"[[hooks.post_tool]]\ncommand = {toml_string(hook('claude_context'))}\n")
    _, updates = await run(session, "read the readme")
    assert "claude context for the model" in content_text(final(updates, "call_read"))


async def test_a_prompt_submit_deny_refuses_the_turn(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    user_config.write_text(f'[[hooks.prompt_submit]]\ncommand = {toml_string(hook("deny_prompt"))}\nname = "dlp"\n')
    daemon = await spawn_daemon(script=write_script(tmp_path))
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "run the tests")
    assert turn.stop_reason == "refusal"
    assert "the prompt was refused by hook dlp: prompts about secrets are refused" in notices(updates)
    assert not [u for u in updates if u.get("sessionUpdate") == "tool_call"]


async def test_a_workspace_config_cannot_add_hooks_unless_the_user_trusts_it(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    marker = workspace / "hook-ran"
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text(
        f"[[hooks.prompt_submit]]\ncommand = {toml_string(f'touch {marker}')}\n"
    )
    daemon = await spawn_daemon(script=write_script(tmp_path))
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "hello")
    assert turn.stop_reason == "end_turn"
    assert not marker.exists()
    said = notices(updates)
    assert f"hooks in {workspace / '.tether' / 'config.toml'} were not run" in said
    assert said.count("hooks in") == 1 and "must not add hooks" not in said  # one notice, not two
    assert f'[workspaces."{workspace}"] trust_hooks = true' in said

    user_config.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    other = await spawn_daemon(script=write_script(tmp_path))
    session = await other.client.new_session(workspace)
    await run(session, "hello")
    assert marker.exists()  # trusted: its hook ran (in the sandbox, where the workspace is writable)


async def test_hooks_run_in_the_command_sandbox_with_the_minimal_environment(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    outside = tmp_path / "escaped.txt"
    user_config.write_text(
        f'[[hooks.post_tool]]\ncommand = {toml_string(hook("probe") + f" - {outside}")}\nname = "probe"\n'
    )
    daemon = await spawn_daemon(
        "--mode", "full-auto", script=write_script(tmp_path), env={"MY_SERVICE_TOKEN": "s3cret"}
    )
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    text = content_text(final(updates, "call_run"))
    seen = json.loads(text.split("[context from hooks]\n", 1)[1])
    assert seen["wrote"].startswith("could not write outside")
    assert not outside.exists()
    assert "MY_SERVICE_TOKEN" not in seen["env"] and "PATH" in seen["env"]


async def test_compact_command_fires_pre_compact_and_proposes_stated_preferences(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    log = workspace / ".events.jsonl"
    user_config.write_text(f"[[hooks.pre_compact]]\ncommand = {toml_string(hook('none', log))}\n")
    script = tmp_path / "short.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"purpose": "compaction"},
                        "text": "SUMMARY: greetings.\n<preferences>\n- Use tabs\n</preferences>",
                    },
                    {"text": "Hello."},
                ]
            }
        )
    )
    user = User("allow_once")
    daemon = await spawn_daemon(script=script)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    for n in range(3):
        await run(session, f"hello {n}")
    turn, _ = await run(session, "/compact")
    assert turn.stop_reason == "end_turn"
    (fired,) = events(log)
    assert fired["stage"] == "pre_compact" and fired["reason"] == "you asked for it (/compact)"
    (asked,) = user.prompts  # the MEMORY.md proposal an automatic compaction makes
    assert asked["toolCall"]["toolCallId"].startswith("memory-flush-")
    assert (workspace / ".tether" / "MEMORY.md").read_text() == "## Remembered\n\n- Use tabs\n"
