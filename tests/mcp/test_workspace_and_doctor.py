"""What a workspace can do about MCP servers (nothing that starts one), `tether doctor`'s
lines, the config's shapes and errors, and a start path that never loads the SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from mcp_harness import SCRIPT, new_session, notices, run, trouble_table, user_config

from tether.config import ConfigError, load_settings

if TYPE_CHECKING:
    from pathlib import Path


def _doctor(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", "doctor", "--provider", "scripted", "--script", str(SCRIPT), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_workspace_config_cannot_add_a_server(spawn_daemon, workspace: Path, tmp_path: Path):
    planted = tmp_path / "planted"
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text(f'[mcp_servers.evil]\ncommand = "touch"\nargs = ["{planted}"]\n')
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "hello")
    said = notices(updates)
    assert "ignored 'mcp_servers' in workspace config" in said
    assert "a workspace must not start programs" in said
    assert not planted.exists()


def _servers_started_or_not(tmp_path: Path, workspace: Path) -> Path:
    """A user config with a server that starts, one that crashes and one disabled, and a
    workspace `.mcp.json` offering a server that would touch the returned path."""
    user_config(
        tmp_path,
        trouble_table() + trouble_table("crashing", "crash") + '[mcp_servers.off]\ncommand = "x"\nenabled = false\n',
    )
    planted = tmp_path / "planted"
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"repo": {"command": "touch", "args": [str(planted)]}}})
    )
    return planted


# The doctor's text and its --json are two tests: each doctor starts the servers, and apart they
# can run on both test workers.
def test_doctor_lists_servers_started_or_not_and_offers_mcp_json(daemon_env, workspace: Path, tmp_path: Path):
    planted = _servers_started_or_not(tmp_path, workspace)
    done = _doctor(env=daemon_env, cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "trouble (stdio: " in out and "started, 8 tools" in out
    assert "crashing (stdio: " in out and "not started: it stopped during start-up" in out
    assert "the database is missing" in out
    assert "off (stdio: x) · not started: disabled (enabled = false)" in out
    assert "offers repo (stdio: touch " in out and "offered, not started: enable it in your user config" in out
    assert "[mcp_servers.repo]" in out
    assert not planted.exists()


def test_doctor_json_lists_servers_started_or_not_and_offered(daemon_env, workspace: Path, tmp_path: Path):
    planted = _servers_started_or_not(tmp_path, workspace)
    report = json.loads(_doctor("--json", env=daemon_env, cwd=workspace).stdout)
    rows = {row["name"]: row for row in report["mcpServers"]}
    assert rows["trouble"]["started"] is True and "note" in rows["trouble"]["tools"]
    assert rows["crashing"]["started"] is False
    assert report["mcpOffered"][0]["name"] == "repo"
    assert not planted.exists()


def test_the_config_shapes(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text(
        '[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "gh"]\ncwd = "sub"\nenabled_tools = ["a"]\n'
        'tool_timeout_sec = 5\n[mcp_servers.github.env]\nTOKEN = "t"\n'
        '[mcp_servers.web]\nurl = "https://h/mcp"\nheaders = { Authorization = "Bearer x" }\n'
        '[mcp_servers.old]\nurl = "http://h/sse"\ntransport = "sse"\nstartup_timeout_sec = 2.5\n'
        '[mcp_servers.local]\ncommand = "./run"\ncwd = "workspace"\nnetwork = false\nwritable = ["workspace", "out"]\n'
    )
    settings = load_settings(None, env={}, user_config=path)
    github, web, old, local = settings.mcp_servers
    assert (github.network, github.writable) == (True, ())  # the defaults: the network, no writable path
    assert (local.cwd, local.network, local.writable) == ("workspace", False, ("workspace", str(tmp_path / "out")))
    assert (github.transport, github.args, github.cwd, github.env) == (
        "stdio",
        ("-y", "gh"),
        str(tmp_path / "sub"),
        (("TOKEN", "t"),),
    )
    assert github.offers("a") and not github.offers("b") and github.tool_timeout_s == 5
    assert (web.transport, web.headers) == ("http", (("Authorization", "Bearer x"),))
    assert (old.transport, old.startup_timeout_s) == ("sse", 2.5)


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("[mcp_servers.x]\nargs = []\n", "mcp_servers.x (from user config"),
        ('[mcp_servers.x]\ncommand = "a"\nurl = "http://h"\n', "exactly one of `command`"),
        ('[mcp_servers.x]\ncommand = "a"\nstartup_timeout_sec = 0\n', "mcp_servers.x.startup_timeout_sec"),
        ('[mcp_servers.x]\nurl = "http://h"\ntransport = "ws"\n', "mcp_servers.x.transport"),
        ('[mcp_servers.x]\ncommand = "a"\ncommnd = "b"\n', "mcp_servers.x.commnd"),
        ('[mcp_servers.x]\ncommand = "a"\nenv = { A = 1 }\n', "mcp_servers.x.env"),
        ('[mcp_servers.x]\ncommand = "a"\nnetwork = "yes"\n', "mcp_servers.x.network (from user config"),
        ('[mcp_servers.x]\ncommand = "a"\nwritable = "/tmp"\n', "mcp_servers.x.writable"),
    ],
)
def test_a_bad_server_table_is_a_config_error_naming_the_key(tmp_path: Path, table: str, says: str):
    path = tmp_path / "config.toml"
    path.write_text(table)
    with pytest.raises(ConfigError) as caught:
        load_settings(None, env={}, user_config=path)
    assert says in str(caught.value)


def test_session_new_without_servers_loads_nothing_of_the_sdk(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}' % ws,  # noqa: UP031 (JSON text: its braces stay single)
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env |= {"TETHER_HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tether", "acp", "--provider", "scripted", "--workspace", str(ws)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert '"id":2,"result":{"sessionId"' in done.stdout.replace(" ", ""), done.stdout + done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "tether.handlers.sessions" in imported  # the check sees the daemon's imports
    assert not {m for m in imported if m.split(".")[0] in ("mcp", "mcp_types", "jsonschema")}
