"""A configured stdio server is confined as commands are: it never runs the workspace's own
programs, starts in a directory of its own, writes only where its config says, cannot read
Tether's config or the daemon's secrets, has the network only when its config allows it;
and a deny rule beats a server's `readOnlyHint`. Real daemon, real bubblewrap, the real
server-everything and a real SDK server (servers/prober.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from mcp_harness import HERE, User, final, new_session, notices, run, text, user_config

SCRIPT = HERE / "confinement-turns.json"
PROBER = HERE / "servers" / "prober.py"
CONFIG_MARK = "tether-config-must-stay-private"


def _hostile_workspace(workspace: Path, marker: Path) -> None:
    """A repository shipping its own `node`, `npx` and server command, and install scripts:
    each appends to `marker` when anything runs it."""
    bin_dir = workspace / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    for name in ("node", "npx", "hostile-server"):
        program = bin_dir / name
        program.write_text(f"#!/bin/sh\necho 'the workspace {name} ran' >> '{marker}'\nexit 1\n")
        program.chmod(0o755)
    scripts = {hook: f"echo '{hook} ran' >> '{marker}'" for hook in ("preinstall", "install", "postinstall", "start")}
    (workspace / "package.json").write_text(
        json.dumps(
            {"name": "hostile-server", "version": "1.0.0", "bin": {"hostile-server": "x.js"}, "scripts": scripts}
        )
    )


async def test_a_hostile_workspace_never_runs_its_own_server_programs(
    spawn_daemon, workspace: Path, tmp_path: Path, everything: Path
):
    marks = tmp_path / "marks"
    marks.mkdir()
    marker = marks / "ran.txt"
    _hostile_workspace(workspace, marker)
    hostile = workspace / "node_modules" / ".bin" / "hostile-server"
    writable = f'writable = ["{marks}"]\n'  # even a sandboxed run would leave the marker
    user_config(
        tmp_path,
        (
            f'[mcp_servers.everything]\ncommand = "node"\nargs = ["{everything}", "stdio"]\n{writable}'
            f'[mcp_servers.byname]\ncommand = "hostile-server"\n{writable}'
            f'[mcp_servers.bypath]\ncommand = "{hostile}"\n{writable}'
            f'[mcp_servers.npx]\ncommand = "npx"\nargs = ["--no", "hostile-server"]\nstartup_timeout_sec = 30\n{writable}'
        ),
    )
    # the daemon runs in the workspace, with the workspace's bin directory on PATH twice
    path = f"node_modules/.bin:{workspace}/node_modules/.bin:{os.environ['PATH']}"
    daemon = await spawn_daemon(script=SCRIPT, env={"PATH": path, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "sum please")
    said = notices(updates)
    assert "MCP server byname" in said and "'hostile-server' was not found on PATH" in said
    assert "MCP server bypath" in said and f"its command {hostile} is inside the workspace" in said
    assert "MCP server npx" in said
    done = final(updates, "call_sum")  # the real node served it, in its sandbox
    assert done["status"] == "completed" and "The sum of 2 and 3 is 5" in text(done)
    env = text(final(updates, "call_env"))
    assert str(tmp_path / "cache" / "tether" / "mcp") in env  # its HOME and TMPDIR: its own directory
    assert str(workspace) not in env
    assert not marker.exists(), marker.read_text()


def _prober(name: str, env: dict[str, str], extra: str = "") -> str:
    given = "\n".join(f'{key} = "{value}"' for key, value in env.items())
    return (
        f'[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = ["{PROBER}"]\n{extra}\n'
        f"[mcp_servers.{name}.env]\n{given}\n"
    )


async def _listening() -> tuple[asyncio.Server, int]:
    """A loopback server in the test's own network namespace (outside any sandbox)."""

    async def drop(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    listener = await asyncio.start_server(drop, "127.0.0.1", 0)
    return listener, listener.sockets[0].getsockname()[1]


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_a_server_writes_only_where_configured_and_sees_no_tether_secrets(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
):
    outside, allowed = tmp_path / "outside", tmp_path / "allowed"
    outside.mkdir()
    allowed.mkdir()
    listener, port = await _listening()
    config = user_config(tmp_path, "")
    env = {
        "PROBE_WORKSPACE": str(workspace),
        "PROBE_OUTSIDE": str(outside),
        "PROBE_ALLOWED": str(allowed),
        "PROBE_CONFIG": str(config),
        "PROBE_PORT": str(port),
        "PROBE_GIVEN": "yes",
    }
    config.write_text(
        f'# {CONFIG_MARK}\nsandbox = "{backend}"\n'
        + _prober("open", env, f'writable = ["{allowed}"]')
        + _prober("closed", env, "network = false")
    )
    daemon = await spawn_daemon(
        script=SCRIPT, env={"OPENAI_API_KEY": "sk-daemon-secret", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    )
    session = await new_session(daemon, workspace)
    async with listener:
        _turn, updates = await run(session, "probe")
    opened = json.loads(text(final(updates, "call_open")))
    closed = json.loads(text(final(updates, "call_closed")))
    for seen in (opened, closed):
        assert seen["cwd"].startswith(str(tmp_path / "cache" / "tether" / "mcp")), seen["cwd"]
        assert seen["write_workspace"].startswith("failed") and seen["write_outside"].startswith("failed")
        assert seen["write_home"] == "wrote" and seen["write_cwd"] == "wrote"
        assert CONFIG_MARK not in seen["read_config"]
        assert seen["openai_key"] is None and seen["given"] == "yes"
    assert opened["write_allowed"] == "wrote" and closed["write_allowed"].startswith("failed")
    assert opened["connect"] == "connected"
    assert closed["connect"].startswith("failed")  # network = false: no way out of its namespace
    assert not (workspace / "probe-was-here.txt").exists() and not (outside / "probe-was-here.txt").exists()
    assert (allowed / "probe-was-here.txt").read_text() == "written by the MCP server\n"


async def test_cwd_workspace_is_the_one_way_a_server_runs_in_the_workspace(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    (workspace / "tools").mkdir()
    (workspace / "tools" / "prober").write_text(f"#!/bin/sh\nexec '{sys.executable}' '{PROBER}'\n")
    (workspace / "tools" / "prober").chmod(0o755)
    user_config(
        tmp_path,
        _prober("open", {"PROBE_WORKSPACE": str(workspace)}, 'cwd = "workspace"').replace(
            f'command = "{sys.executable}"\nargs = ["{PROBER}"]', 'command = "./tools/prober"'
        )
        + _prober("closed", {"PROBE_WORKSPACE": str(workspace)}, 'cwd = "workspace"\nwritable = ["workspace"]'),
    )
    daemon = await spawn_daemon(script=SCRIPT, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "probe")
    opened = json.loads(text(final(updates, "call_open")))  # its command is the workspace's, as configured
    closed = json.loads(text(final(updates, "call_closed")))
    assert opened["cwd"] == closed["cwd"] == str(workspace.resolve())
    assert opened["write_workspace"].startswith("failed")  # read-only unless `writable` says "workspace"
    assert closed["write_workspace"] == "wrote" and (workspace / "probe-was-here.txt").exists()


async def test_commands_cannot_plant_code_in_a_servers_own_directory(spawn_daemon, workspace: Path, tmp_path: Path):
    # the home folder as the workspace: the user cache dir (and the servers' HOME) inside it
    user_config(tmp_path, 'mode = "full-auto"\n' + _prober("open", {"PROBE_GIVEN": "yes"}))
    daemon = await spawn_daemon(script=SCRIPT, env={"XDG_CACHE_HOME": str(workspace / ".cache")})
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "probe")
    seen = json.loads(text(final(updates, "call_open")))
    assert seen["write_home"] == "wrote"  # the server itself may
    own = Path(seen["cwd"])
    assert own.parent == workspace / ".cache" / "tether" / "mcp"
    _turn, updates = await run(session, "plant")
    said = text(final(updates, "call_plant"))
    assert "planted" in said and "probe-was-here.txt" not in said, said  # it ran, and did not even see it
    assert not (own / "home" / ".npmrc").exists()


async def test_with_the_sandbox_off_a_server_is_told_unconfined_but_keeps_its_directory_and_env(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    config = user_config(tmp_path, "")
    config.write_text('sandbox = "off"\n' + _prober("open", {"PROBE_GIVEN": "yes"}))
    daemon = await spawn_daemon(
        script=SCRIPT, env={"OPENAI_API_KEY": "sk-daemon-secret", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    )
    session = await new_session(daemon, workspace)
    _turn, updates = await run(session, "probe")
    assert "MCP server open runs without an OS sandbox" in notices(updates)
    seen = json.loads(text(final(updates, "call_open")))
    assert seen["cwd"].startswith(str(tmp_path / "cache" / "tether" / "mcp"))
    assert seen["openai_key"] is None and seen["given"] == "yes"


async def test_a_deny_rule_beats_a_servers_read_only_hint_in_every_mode(
    spawn_daemon, workspace: Path, tmp_path: Path, everything: Path
):
    user_config(
        tmp_path,
        'deny_commands = ["mcp__everything__*"]\n'
        f'[mcp_servers.everything]\ncommand = "node"\nargs = ["{everything}", "stdio"]\n',
    )
    user = User()
    daemon = await spawn_daemon(script=SCRIPT, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    daemon.client.peer.on_request = user.on_request
    session = await new_session(daemon, workspace)
    for mode in ("full-auto", "read-only", "ask"):
        await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": mode})
        _turn, updates = await run(session, "sum please")
        for call in ("call_sum", "call_env"):  # both marked readOnlyHint by the server
            done = final(updates, call)
            assert done["status"] == "failed", (mode, done)
            assert "refused by config rule: deny mcp mcp__everything__*; this tool is never called" in text(done)
    assert user.prompts == []


async def test_a_clients_stdio_server_is_confined_like_the_users(spawn_daemon, workspace: Path, tmp_path: Path):
    given = [{"name": "PROBE_WORKSPACE", "value": str(workspace)}, {"name": "PROBE_GIVEN", "value": "yes"}]
    daemon = await spawn_daemon(
        script=SCRIPT, env={"OPENAI_API_KEY": "sk-daemon-secret", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    )
    session = await new_session(
        daemon, workspace, [{"name": "open", "command": sys.executable, "args": [str(PROBER)], "env": given}]
    )
    _turn, updates = await run(session, "probe")
    seen = json.loads(text(final(updates, "call_open")))
    assert seen["cwd"].startswith(str(tmp_path / "cache" / "tether" / "mcp")), seen["cwd"]
    assert seen["write_workspace"].startswith("failed") and not (workspace / "probe-was-here.txt").exists()
    assert seen["openai_key"] is None and seen["given"] == "yes"
