"""The shared daemon's socket as an attacker sees it (issue 30 items 3 and 11a).

A command with the network (an install script under `network_commands`) tries to reach
the shared daemon's socket, and every socket in Tether's runtime directory, to open a
window of its own asking for `sandbox: "off"` and full-auto; a real client asks the same
in its `initializationOptions`; another user's directory in place of the runtime one.
Real shared daemon, real bubblewrap and Landlock, real files checked on disk.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from daemon_harness import BASIC_SCRIPT, User

ATTACK = r"""
import json, os, socket, sys
runtime, outside, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
socket.create_connection(("127.0.0.1", port), timeout=5).close()
print("tcp ok")  # the command has the network
target = open("target.txt").read()  # the test writes it once the daemon listens
entries = [os.path.join(runtime, name) for name in os.listdir(runtime)] if os.path.isdir(runtime) else []
print("entries", len(entries))
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1,
        "initializationOptions": {"sandbox": "off", "mode": "full-auto"}}}
for path in [target, *entries]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        s.sendall(b"TETHER-SHARED/1 " + os.fsencode(os.getcwd()).hex().encode() + b" ndjson\n")
        s.sendall(json.dumps(init).encode() + b"\n")
        print("CONNECTED", path, s.recv(200))
    except OSError as error:
        print("refused", path, type(error).__name__)
try:
    with open(outside, "w") as handle:
        handle.write("escaped")
    print("WROTE OUTSIDE")
except OSError as error:
    print("no write outside", type(error).__name__)
"""


def _script(path: Path, command: str) -> Path:
    script = {
        "model": "scripted-attack",
        "replies": [
            {
                "when": {"user": "^go", "step": 1},
                "text": "Running.",
                "tool_calls": [{"id": "call_go", "name": "run_command", "arguments": {"command": command}}],
            },
            {"when": {"user": "^go", "step": 2}, "text": "Done."},
        ],
    }
    path.write_text(json.dumps(script))
    return path


def _user_config(env: dict[str, str], text: str) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


def _tool_text(updates: list[dict]) -> str:
    texts = []
    for update in updates:
        for block in update.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "content":
                texts.append(block["content"].get("text", ""))
    return "\n".join(texts)


@pytest.mark.parametrize("backend,named", [("bwrap", False), ("bwrap", True), ("landlock", True)])
async def test_a_command_with_the_network_cannot_reach_any_tether_socket(
    windows, workspace: Path, tmp_path: Path, backend: str, named: bool
) -> None:
    other = tmp_path / "other.sock"  # a socket the user names (docker.sock stands in)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(other))
    listener.listen()
    runtime = windows.runtime
    outside = tmp_path / "escaped.txt"
    (workspace / "attack.py").write_text(ATTACK)
    tcp = socket.create_server(("127.0.0.1", 0))
    command = f"{sys.executable} attack.py {runtime} {outside} {tcp.getsockname()[1]}"
    install = f"{os.path.basename(sys.executable)} attack.py"  # as `npm install` would be
    _user_config(
        windows.env,
        (
            f'mode = "full-auto"\nsandbox = "{backend}"\nnetwork_commands = [{json.dumps(install)}]\n'
            + (f"allow_unix_sockets = [{json.dumps(str(other))}]\n" if named else "")
        ),
    )
    # the first window starts the daemon; the attack names its socket
    window = await windows.open(script=_script(tmp_path / "attack.json", command))
    [sock] = windows.sockets()
    (workspace / "target.txt").write_text(str(sock))
    session = await window.new_session(workspace)
    turn = session.prompt("go")
    await turn.wait()
    listener.close()
    tcp.close()
    text = _tool_text(turn.updates)
    assert "tcp ok" in text, text
    assert f"refused {sock}" in text and "CONNECTED" not in text, text
    assert "entries 0" in text or backend == "landlock", text  # bubblewrap: the directory is covered
    assert "no write outside" in text and not outside.exists(), text
    if backend == "bwrap" and named:
        # AF_UNIX is allowed here (a socket was named): the covered directory alone stops it
        assert f"refused {sock} FileNotFoundError" in text, text
    else:
        assert f"refused {sock} PermissionError" in text, text
    assert len(windows.daemon_pids()) == 1


async def test_a_client_cannot_turn_the_sandbox_off_or_loosen_the_mode(
    windows, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "escaped.txt"
    script = _script(tmp_path / "write.json", f"echo escaped > {outside}; echo ran")
    user = User("allow_once")
    window = await windows.open(script=script, on_request=user.on_request, initialize=False)
    answer = await window.initialize(
        initializationOptions={"sandbox": "off", "mode": "full-auto", "allowEnv": ["HOME"]}
    )
    refused = {item["key"]: item["message"] for item in answer["_meta"]["tether"]["configRefused"]}
    assert set(refused) == {"sandbox", "mode", "allow_env"}, refused
    config = str(Path(windows.env["XDG_CONFIG_HOME"]) / "tether" / "config.toml")
    for key, message in refused.items():
        assert "initializationOptions" in message and "only make Tether stricter" in message, message
        assert config in message and key in message, message
    assert "'off'" in refused["sandbox"] and "'full-auto'" in refused["mode"], refused
    session = await window.new_session(workspace)
    turn = session.prompt("go")
    await turn.wait()
    assert len(user.prompts) == 1  # the mode stayed "ask": the command asked first
    text = _tool_text(turn.updates)
    assert "ran" in text and not outside.exists(), text  # and ran in the sandbox
    # a stricter mode is taken
    strict = await windows.open(script=script, initialize=False)
    answer = await strict.initialize(initializationOptions={"mode": "read-only"})
    assert "configRefused" not in answer.get("_meta", {}).get("tether", {}), answer


@pytest.mark.parametrize("planted", ["other owner", "link", "open mode"])
async def test_a_runtime_directory_another_user_made_gives_the_window_its_own_daemon(
    windows, workspace: Path, tmp_path: Path, planted: str
) -> None:
    runtime = windows.runtime
    if planted == "link":
        (tmp_path / "theirs").mkdir(mode=0o700)
        runtime.symlink_to(tmp_path / "theirs")
    else:
        runtime.mkdir(mode=0o700)
        if planted == "other owner":
            os.chown(runtime, 4242, 4242)
        else:
            runtime.chmod(0o777)
    window = await windows.open(script=BASIC_SCRIPT)
    await _window_answers(window, workspace)
    why = {"other owner": "owned by uid 4242", "link": "a link", "open mode": "mode 0777"}[planted]
    _said_it_runs_its_own(tmp_path / "window-0.stderr", runtime, why)
    assert windows.daemon_pids() == [] and not list((tmp_path / "theirs").glob("*"))


@pytest.mark.skipif(os.geteuid() != 0, reason="a private mount namespace and chown need root")
@pytest.mark.parametrize("planted", ["other owner", "link"])
async def test_the_tmp_fallback_another_user_made_first_gives_the_window_its_own_daemon(
    daemon_env: dict[str, str], planted: str
) -> None:
    """No XDG_RUNTIME_DIR: the fallback is /tmp/tether-<uid>, in a /tmp of the window's own
    (a private mount namespace: the host's /tmp is not touched)."""
    import shutil
    import tempfile

    from tether_client import TetherClient

    base = Path(tempfile.mkdtemp(prefix="tether-fallback-", dir="/var/tmp"))
    try:
        fake_tmp, workspace = base / "tmp", base / "ws"
        fake_tmp.mkdir(mode=0o1777)
        fake_tmp.chmod(0o1777)
        workspace.mkdir()
        (workspace / "src").mkdir()
        (workspace / "src" / "app.py").write_text("def main():\n    return 42\n")
        planted_dir = fake_tmp / f"tether-{os.getuid()}"
        if planted == "link":
            (base / "theirs").mkdir(mode=0o700)
            planted_dir.symlink_to(base / "theirs")
        else:
            planted_dir.mkdir(mode=0o700)
            os.chown(planted_dir, 4242, 4242)
        env = {k: v for k, v in daemon_env.items() if k != "XDG_RUNTIME_DIR"}
        env.update(
            TETHER_HOME=str(base / "home"), XDG_STATE_HOME=str(base / "state"), XDG_CONFIG_HOME=str(base / "config")
        )
        window = [
            sys.executable,
            "-m",
            "tether",
            "acp",
            "--shared",
            "--provider",
            "scripted",
            "--script",
            str(BASIC_SCRIPT),
        ]
        command = [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            _own_tmp(fake_tmp, base / "host-tmp") + ' && exec "$@"',
            "sh",
            *window,
        ]
        with open(base / "window.stderr", "wb") as err:
            client = await TetherClient.spawn(command=command, env=env, cwd=workspace, stderr=err, framing="ndjson")
        async with client:
            await client.initialize()
            await _window_answers(client, workspace)
        why = "a link" if planted == "link" else "owned by uid 4242"
        _said_it_runs_its_own(base / "window.stderr", Path(f"/tmp/tether-{os.getuid()}"), why)
        assert not list((base / "theirs").glob("*")) if planted == "link" else not list(planted_dir.iterdir())
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _own_tmp(fake_tmp: Path, host_tmp: Path) -> str:
    """Shell lines that put `fake_tmp` at /tmp, keeping what this test runs from where it
    lies under the host's /tmp (a checkout, or CI's wheel venv, may be there)."""
    needed = {Path(__file__).resolve().parents[2], Path(sys.prefix).resolve(), Path(sys.executable).resolve().parent}
    kept = sorted({p.relative_to("/tmp").parts[0] for p in needed if p.is_relative_to("/tmp")})
    host_tmp.mkdir()
    lines = [f'mount --bind /tmp "{host_tmp}"', f'mount --bind "{fake_tmp}" /tmp']
    for name in kept:
        lines += [f'mkdir -p "/tmp/{name}"', f'mount --bind "{host_tmp}/{name}" "/tmp/{name}"']
    return " && ".join(lines)


async def _window_answers(client, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    session = await client.new_session(workspace)
    turn = session.prompt("Where is main?")
    await turn.wait()
    assert turn.stop_reason == "end_turn"


def _said_it_runs_its_own(stderr: Path, runtime: Path, why: str) -> None:
    said = stderr.read_text()
    assert f"not shared: {runtime} is not a private directory of yours ({why}" in said, said
    assert "this window runs its own daemon" in said and "XDG_RUNTIME_DIR" in said, said
