"""Slash commands (SPEC §4.12): the list sent after session/new and session/load, and the
built-ins run through session/prompt, with the scripted provider answering by what the
model was sent."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import TYPE_CHECKING

from server_harness import Daemon, running, settings_for

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = {
    "model": "scripted-commands",
    "replies": [
        # /review: answered only when the request carries the diff
        {
            "when": {"user": "(?s)Review the uncommitted.*<diff>.*-    return 42.*\\+    return 43", "step": 1},
            "text": "Trying to fix it myself.",
            "tool_calls": [
                {"id": "call_w", "name": "write_file", "arguments": {"path": "src/app.py", "content": "fixed\n"}}
            ],
        },
        {"when": {"user": "(?s)Review the uncommitted", "step": 2}, "text": "The change returns 43 now."},
        # /init: the model is asked for AGENTS.md
        {"when": {"user": "(?s)Write or update AGENTS.md.*keep it short"}, "text": "I will write AGENTS.md."},
        {
            "when": {"user": "^write it$", "step": 1},
            "text": "Writing.",
            "tool_calls": [
                {"id": "call_n", "name": "write_file", "arguments": {"path": "new.txt", "content": "new\n"}}
            ],
        },
        {"when": {"purpose": "compaction"}, "text": "SUMMARY: the user said hello several times."},
        {"text": "PLAIN:"},
    ],
}


def _text(updates: list[dict], kind: str) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


async def _settle() -> None:
    for _ in range(3):  # the list goes out two callbacks after the answer
        await asyncio.sleep(0)


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


async def _prompt(daemon: Daemon, session_id: str, text: str) -> dict:
    return dict(
        await daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
    )


def _settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    script = tmp_path / "commands.json"
    script.write_text(json.dumps(SCRIPT))
    return settings_for(tmp_path, script=str(script))


async def test_the_command_list_follows_the_new_and_load_answers(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        assert daemon.conn.updates(session_id) == []  # nothing before the answer is out
        await _settle()
        (listed,) = [u for u in daemon.conn.updates(session_id) if u["sessionUpdate"] == "available_commands_update"]
        commands = {c["name"]: c for c in listed["availableCommands"]}
        assert {"review", "init", "mode", "clear"} <= set(commands)
        assert commands["mode"]["input"]["hint"] and "read-only" in commands["mode"]["description"]
    async with running(settings, workspace) as daemon:
        await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace)})
        await _settle()
        kinds = [u["sessionUpdate"] for u in daemon.conn.updates(session_id)]
        assert kinds[-1] == "available_commands_update"


async def test_mode_switches_the_mode_and_tells_the_client(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        answer = await _prompt(daemon, session_id, "/mode auto-edit")
        assert answer["stopReason"] == "end_turn"
        updates = daemon.conn.updates(session_id)
        assert {"sessionUpdate": "current_mode_update", "currentModeId": "auto-edit"} in updates
        (options,) = [u["configOptions"] for u in updates if u["sessionUpdate"] == "config_option_update"]
        assert {o["id"]: o["currentValue"] for o in options}["mode"] == "auto-edit"  # the picker follows
        assert "PLAIN:" not in _text(updates, "agent_message_chunk")  # no model turn
        await _prompt(daemon, session_id, "/mode nonsense")
        assert "/mode takes one of: read-only, ask" in _text(daemon.conn.updates(session_id), "agent_message_chunk")
    async with running(settings, workspace) as daemon:  # stored with the session
        loaded = await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace)})
        assert loaded["modes"]["currentModeId"] == "auto-edit"


async def test_review_sends_the_diff_in_a_read_only_turn(tmp_path: Path, workspace: Path):
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (workspace / "src" / "app.py").write_text("def main():\n    return 43\n")
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await daemon.call("session/set_mode", {"sessionId": session_id, "modeId": "full-auto"})
        answer = await _prompt(daemon, session_id, "/review")
        assert answer["stopReason"] == "end_turn"
        updates = daemon.conn.updates(session_id)
        assert "The change returns 43 now." in _text(updates, "agent_message_chunk")
        write = [u for u in updates if u.get("toolCallId") == "call_w" and u.get("status") == "failed"]
        assert write, "the review turn's write was refused (read-only for that turn)"
        assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 43\n"
        # the session's own mode (full-auto) again after the turn: a write runs unasked
        await _prompt(daemon, session_id, "write it")
        assert (workspace / "new.txt").read_text() == "new\n"


async def test_review_with_nothing_changed_says_so_without_a_turn(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        assert (await _prompt(daemon, session_id, "/review"))["stopReason"] == "end_turn"
        text = _text(daemon.conn.updates(session_id), "agent_message_chunk")
        assert "no uncommitted changes to review" in text and "PLAIN:" not in text


async def test_init_asks_the_model_for_agents_md(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _prompt(daemon, session_id, "/init keep it short")
        assert "I will write AGENTS.md." in _text(daemon.conn.updates(session_id), "agent_message_chunk")


async def test_unknown_commands_and_paths_go_to_the_model_as_text(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _prompt(daemon, session_id, "/usr/lib/foo is missing")
        await _prompt(daemon, session_id, "/clear")
        text = _text(daemon.conn.updates(session_id), "agent_message_chunk")
        assert text.count("PLAIN:") == 1 and "start a new session" in text


async def test_compact_summarises_now_and_a_load_shows_it(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _prompt(daemon, session_id, "/compact")
        assert "too short to compact" in _text(daemon.conn.updates(session_id), "agent_message_chunk")
        for n in range(4):
            await _prompt(daemon, session_id, f"hello {n}")
        assert (await _prompt(daemon, session_id, "/compact the greetings"))["stopReason"] == "end_turn"
        (notice,) = [u for u in daemon.conn.updates(session_id) if "compaction" in u.get("_meta", {}).get("tether", {})]
        assert notice["_meta"]["tether"]["compaction"]["replaced"] >= 4 and "/compact" in notice["content"]["text"]
        assert (await _prompt(daemon, session_id, "hello again"))["stopReason"] == "end_turn"
    async with running(settings, workspace) as daemon:
        await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace)})
        replayed = daemon.conn.updates(session_id)
        assert any("compaction" in u.get("_meta", {}).get("tether", {}) for u in replayed)
        assert "hello again" in _text(replayed, "user_message_chunk")


async def test_markdown_commands_from_the_user_and_the_workspace(tmp_path: Path, workspace: Path, monkeypatch):
    config = tmp_path / "cfg"
    (config / "commands").mkdir(parents=True)
    (config / "config.toml").write_text("")
    monkeypatch.setenv("TETHER_CONFIG", str(config / "config.toml"))
    (config / "commands" / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: path\n---\nExplain the file $ARGUMENTS to me.\n"
    )
    (workspace / ".tether" / "commands").mkdir(parents=True)
    (workspace / ".tether" / "commands" / "shipit.md").write_text("Ship it: bump the version.\n")
    (workspace / ".tether" / "commands" / "review.md").write_text("not the built-in\n")  # cannot shadow one
    # a project's command that links out of the project (its text would be the model's prompt)
    (tmp_path / "secret.txt").write_text("the user's private key\n")
    (workspace / ".tether" / "commands" / "leak.md").symlink_to(tmp_path / "secret.txt")
    script = tmp_path / "files.json"
    script.write_text(
        json.dumps(
            {
                "model": "m",
                "replies": [
                    {"when": {"user": "^Explain the file src/app.py to me.$"}, "text": "EXPLAINED"},
                    {"when": {"user": "^Ship it: bump the version.\\n\\nnow$"}, "text": "SHIPPED"},
                    {"when": {"user": "^Added later.$"}, "text": "LATER"},
                    {"text": "PLAIN:"},
                ],
            }
        )
    )
    settings = settings_for(tmp_path, script=str(script))
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _settle()
        (listed,) = [u for u in daemon.conn.updates(session_id) if u["sessionUpdate"] == "available_commands_update"]
        commands = {c["name"]: c for c in listed["availableCommands"]}
        assert commands["explain"] == {
            "name": "explain",
            "description": "Explain a file (user)",
            "input": {"hint": "path"},
        }
        assert commands["shipit"]["description"] == "Ship it: bump the version. (workspace: .tether/commands)"
        assert commands["review"]["description"].startswith("Review the uncommitted changes")
        assert "leak" not in commands
        await _prompt(daemon, session_id, "/explain src/app.py")
        (workspace / ".tether" / "commands" / "later.md").write_text("Added later.\n")
        await _prompt(daemon, session_id, "/shipit now")
        await _prompt(daemon, session_id, "/later")
        text = _text(daemon.conn.updates(session_id), "agent_message_chunk")
        assert text == "EXPLAINEDSHIPPEDLATER"  # /later: a file added since is read at the prompt
        lists = [u for u in daemon.conn.updates(session_id) if u["sessionUpdate"] == "available_commands_update"]
        assert len(lists) == 2 and "later" in {c["name"] for c in lists[1]["availableCommands"]}


async def test_review_runs_nothing_a_repositorys_git_config_names(tmp_path: Path, workspace: Path):
    """A project's `.git/config` comes with the project (an archive, a copied folder): the
    git that /review runs must not start the programs it names (fsmonitor, textconv, clean
    filters) — they would run in the daemon's environment, keys and all."""
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    hook.chmod(0o755)
    for key, value in (
        ("core.fsmonitor", hook),
        ("diff.evil.textconv", hook),
        ("filter.ev.il.clean", hook),
        ("filter.ev.il.process", hook),
    ):
        _git(workspace, "config", key, str(value))
    (workspace / ".gitattributes").write_text("*.py diff=evil filter=ev.il\n")
    (workspace / "src" / "app.py").write_text("def main():\n    return 43\n")
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _prompt(daemon, session_id, "/review")
        assert "The change returns 43 now." in _text(daemon.conn.updates(session_id), "agent_message_chunk")
    assert not marker.exists(), f"git ran the repository's programs: {marker.read_text()}"


async def test_the_list_sent_is_the_sessions_and_is_sent_again_only_when_it_changed(tmp_path: Path, workspace: Path):
    settings = _settings(tmp_path)
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await _settle()
        session = daemon.server.daemon.registry.live[session_id]
        assert [name for name, _d, _h in session.commands_sent or []] == [
            "compact",
            "review",
            "init",
            "mode",
            "model",
            "clear",
            "memory",
            "mcp",
        ]
        await _prompt(daemon, session_id, "/mode ask")  # no command file changed: the list is not sent again
        sent = lambda: [u for u in daemon.conn.updates(session_id) if u["sessionUpdate"] == "available_commands_update"]
        assert len(sent()) == 1
        (workspace / ".tether" / "commands").mkdir(parents=True)
        (workspace / ".tether" / "commands" / "fix.md").write_text("Fix it: $ARGUMENTS\n")
        await _prompt(daemon, session_id, "/mode ask")
        assert len(sent()) == 2 and "fix" in [c["name"] for c in sent()[-1]["availableCommands"]]
        await daemon.call("session/close", {"sessionId": session_id})
        assert session_id not in daemon.server.daemon.registry.live  # and the list it was sent with it
