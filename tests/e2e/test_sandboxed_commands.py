"""Commands through a real `tether serve`: the provider key never reaches them, by any
route (their environment, their parents', PID 1's, `ps e`, every /proc entry), under
bubblewrap and under Landlock; without a sandbox, every command asks and the user is told
once why.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

FAKE_KEYS = {
    "OPENAI_API_KEY": "sk-fake-openai-e2e-7f3a9c",
    "TETHER_API_KEY": "tk-fake-tether-e2e-51b2d8",
    "ANTHROPIC_API_KEY": "sk-ant-fake-e2e-0c44e1",
    "GITHUB_TOKEN": "ghp_fake_e2e_a81f",
}
# every route a command could take to the daemon's environment
SNOOP = (
    "env; echo ---ppid; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---init; tr '\\0' '\\n' < /proc/1/environ;"
    " echo ---ps; ps e; ps aux e; echo ---proc;"
    " for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done; echo ---end"
)


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "snoop.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "snoop", "name": "run_command", "arguments": {"command": SNOOP}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    return script


def _tool_text(updates: list[dict], call_id: str) -> str:
    done = [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]
    return "".join(b.get("content", {}).get("text", "") for b in done.get("content") or [])


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_the_provider_key_is_visible_to_commands_by_no_route(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
):
    daemon = await spawn_daemon(
        "--mode", "full-auto", script=_script(tmp_path), env={**FAKE_KEYS, "TETHER_SANDBOX": backend}
    )
    asked: list[dict] = []

    async def on_request(method: str, params: dict):  # the loop may ask: the parser cannot see every part
        asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("look around")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    output = _tool_text(updates, "snoop")
    assert "---end" in output and "PATH=" in output, output
    everything = json.dumps(updates)
    for name, value in FAKE_KEYS.items():
        assert value not in everything, f"{name} leaked to a command under {backend}"
    # the daemon itself is not in the command's sight (bubblewrap: another PID namespace;
    # Landlock: ptrace-scoped /proc)
    assert "tether serve" not in output.split("---proc")[0].split("---ps")[0]
    assert "commands run without an OS sandbox" not in everything
    # the daemon hardened itself at start: no core file could hold the key
    limits = Path(f"/proc/{daemon.pid}/limits").read_text()
    assert [line.split()[4:6] for line in limits.splitlines() if line.startswith("Max core file size")] == [["0", "0"]]


async def test_without_a_sandbox_full_auto_still_asks_and_says_why_once(spawn_daemon, workspace: Path, tmp_path: Path):
    script = tmp_path / "twice.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "one", "name": "run_command", "arguments": {"command": "echo one"}}],
                    },
                    {
                        "when": {"step": 2},
                        "tool_calls": [{"id": "two", "name": "run_command", "arguments": {"command": "echo two"}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    prompts: list[dict] = []

    async def on_request(method: str, params: dict):
        prompts.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": "off"})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("run two commands")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert [p["toolCall"]["toolCallId"] for p in prompts] == ["one", "two"]  # full-auto, yet asked
    assert _tool_text(updates, "one").startswith("one\n") and _tool_text(updates, "two").startswith("two\n")
    notices = [json.dumps(u) for u in updates if "commands run without an OS sandbox" in json.dumps(u)]
    assert len(notices) == 1 and 'the sandbox setting is \\"off\\"' in notices[0]


def _doctor(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", "doctor", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_doctor_shows_the_sandbox_state(daemon_env, workspace: Path):
    env = {**daemon_env, "TETHER_NETWORK_COMMANDS": "npm install,pip install"}
    text = _doctor(env=env, cwd=workspace).stdout
    assert "sandbox: bwrap (bubblewrap " in text and "network off (on for: npm install, pip install)" in text
    report = json.loads(_doctor("--json", env={**env, "TETHER_SANDBOX": "landlock"}, cwd=workspace).stdout)["sandbox"]
    assert report["ok"] and report["backend"] == "landlock" and report["version"].startswith("ABI ")
    assert report["network"] == "off" and report["networkCommands"] == ["npm install", "pip install"]
    off = _doctor(env={**env, "TETHER_SANDBOX": "off"}, cwd=workspace).stdout
    assert 'sandbox: none: the sandbox setting is "off" (user configuration)' in off
    assert "every one asks for approval" in off
    off_json = json.loads(_doctor("--json", env={**env, "TETHER_SANDBOX": "off"}, cwd=workspace).stdout)["sandbox"]
    assert off_json["ok"] is False and off_json["backend"] is None and "off" in off_json["why"]


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_the_network_comes_only_with_the_users_approval(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    connect = (
        f"{sys.executable} -I -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3);"
        f" print('connected')\""
    )
    script = tmp_path / "net.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "plain", "name": "run_command", "arguments": {"command": connect}}],
                    },
                    {
                        "when": {"step": 2},
                        "tool_calls": [{"id": "net", "name": "run_command", "arguments": {"command": connect}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    answers = ["allow_once", "allow_once_network"]
    offered: list[set[str]] = []

    async def on_request(method: str, params: dict):
        offered.append({option["optionId"] for option in params["options"]})
        return {"outcome": {"outcome": "selected", "optionId": answers.pop(0)}}

    try:
        daemon = await spawn_daemon(script=script, env={"TETHER_SANDBOX": backend})
        daemon.client.peer.on_request = on_request
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("connect twice")
        updates = [u async for u in turn]
    finally:
        server.close()
    assert turn.stop_reason == "end_turn" and not answers
    assert all("allow_once_network" in options for options in offered)
    blocked, allowed = _tool_text(updates, "plain"), _tool_text(updates, "net")
    assert "connected" not in blocked and "[sandbox: " in blocked and "Allow once, with network" in blocked
    assert allowed.startswith("connected\n") and "[sandbox" not in allowed


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_tethers_config_and_history_are_out_of_a_commands_reach(
    spawn_daemon, workspace: Path, tmp_path: Path, daemon_env: dict[str, str], tether_home: Path, backend: str
):
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('api_key = "sk-fake-in-user-config-93ab"\n')
    command = f"cat {config}; ls -A {tether_home}; cat {tether_home}/*/* 2>&1 | head -c 2000; echo ---end"
    script = tmp_path / "peek.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "peek", "name": "run_command", "arguments": {"command": command}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": backend})
    session = await daemon.client.new_session(workspace)
    first = session.prompt("a prompt the history now holds: zebra-umbrella")
    assert [u async for u in first] and first.stop_reason == "end_turn"
    second = session.prompt("peek")
    output = _tool_text([u async for u in second], "peek")
    assert "---end" in output
    assert "sk-fake-in-user-config-93ab" not in output
    assert "zebra-umbrella" not in output
    assert any(path.is_file() for path in tether_home.rglob("*"))  # the history is there, unseen


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_a_tether_config_beside_the_workspace_is_out_of_a_commands_reach(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
):
    """TETHER_CONFIG names a file in a directory that also holds the workspace: the file
    is hidden, the directory (which holds the workspace) is not."""
    config = workspace.parent / "tether-beside.toml"
    config.write_text('api_key = "sk-fake-beside-workspace-5e1d"\n')
    (workspace.parent / "beside.txt").write_text("beside-readable\n")
    command = f"cat {config}; cat {workspace.parent}/beside.txt; echo ---end"
    script = tmp_path / "beside.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "peek", "name": "run_command", "arguments": {"command": command}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon(
        "--mode", "full-auto", script=script, env={"TETHER_SANDBOX": backend, "TETHER_CONFIG": str(config)}
    )
    session = await daemon.client.new_session(workspace)
    output = _tool_text([u async for u in session.prompt("peek")], "peek")
    assert "---end" in output and "beside-readable" in output, output
    assert "sk-fake-beside-workspace" not in output


async def test_read_only_mode_runs_an_approved_command_in_a_read_only_sandbox(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    script = tmp_path / "read-only.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {
                                "id": "look",
                                "name": "run_command",
                                "arguments": {
                                    "command": "cat README.md; echo scratch > $TMPDIR/x && echo temp-ok; touch made.txt; echo changed >> README.md"
                                },
                            }
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon("--mode", "read-only", script=script)
    asked: list[dict] = []

    async def on_request(method: str, params: dict):
        asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("look")
    output = _tool_text([u async for u in turn], "look")
    assert len(asked) == 1 and "read-only sandbox" in asked[0]["_meta"]["tether"]["reason"]
    assert "Hello from the sample workspace." in output and "temp-ok" in output
    assert not (workspace / "made.txt").exists()
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"
    assert "[sandbox:" in output  # the model is told why its writes failed
