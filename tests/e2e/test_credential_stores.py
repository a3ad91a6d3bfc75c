"""Issue 35 item 2 through a real `tether serve`, real bubblewrap and real Landlock: a fake
HOME with real credential files; commands (as a hostile repository or model would write
them) cannot read them by any route, the model is told why, the user's `allow_read`
exposes one and a workspace's cannot, and `tether doctor --json` lists what is hidden.

Masking is turned off here (`TETHER_MASK_SECRETS=off`): the sandbox alone must keep the
files out. test_secret_masking.py covers masking.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SSH = "SSHKEY-MATERIAL-5f1c"
AWS = "AWSCRED-MATERIAL-77aa"
NPM = "NPMTOKEN-MATERIAL-91be"
BROWSER = "BROWSER-LOGIN-MATERIAL-3c0d"
GH = "GHHOSTS-MATERIAL-e4e4"
MARKERS = (SSH, AWS, NPM, BROWSER, GH)
BACKENDS = ["bwrap", "landlock"]


def fake_home(tmp_path: Path) -> Path:
    home = tmp_path / "home-user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN {SSH}-----\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS}\n")
    (home / ".npmrc").write_text(
        f"registry=https://registry.example.test/\n//registry.example.test/:_authToken={NPM}\n"
    )
    (home / ".mozilla" / "firefox" / "p.default").mkdir(parents=True)
    (home / ".mozilla" / "firefox" / "p.default" / "logins.json").write_text(f'{{"password": "{BROWSER}"}}\n')
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n  oauth_token: {GH}\n")
    (home / "notes.txt").write_text("ordinary notes\n")
    return home


def script_of(tmp_path: Path, commands: dict[str, str]) -> Path:
    script = tmp_path / "peek.json"
    calls = [
        {"id": name, "name": "run_command", "arguments": {"command": command}} for name, command in commands.items()
    ]
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": calls}, {"text": "done"}]}))
    return script


async def run_turn(spawn_daemon, workspace: Path, script: Path, env: dict[str, str]) -> tuple[list[dict], dict]:
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_MASK_SECRETS": "off", **env})

    async def allow(method: str, params: dict):  # the analyser may not see every part of a command
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = allow
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("find the keys")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    results = {
        u["toolCallId"]: "".join(b.get("content", {}).get("text", "") for b in u.get("content") or [])
        for u in updates
        if u.get("status") in ("completed", "failed")
    }
    return updates, results


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_command_reads_a_credential_store_by_any_route(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    home = fake_home(tmp_path)
    (workspace / "planted").symlink_to(home / ".ssh" / "id_ed25519")  # a link a hostile repository ships
    (workspace / "planted-dir").symlink_to(home / ".aws")
    commands = {
        "cat": "cat ~/.ssh/id_ed25519",
        "ls": "ls -la ~/.ssh",
        "npmrc": "cat ~/.npmrc",
        "others": f"cat {home}/.aws/credentials ~/.mozilla/firefox/p.default/logins.json ~/.config/gh/hosts.yml",
        "find": "find ~ -name id_ed25519 -o -name credentials -o -name hosts.yml; grep -r MATERIAL ~",
        "links": "cat planted planted-dir/credentials; cat /proc/self/root$HOME/.ssh/id_ed25519;"
        " cat /proc/1/root$HOME/.aws/credentials",
        "hardlink": "ln ~/.ssh/id_ed25519 hard; ln ~/.aws/credentials hard2; cat hard hard2",
        "copy": "cp -r ~ $TMPDIR/h; cat $TMPDIR/h/.ssh/id_ed25519; tar cf - -C ~ . | tar xOf -; cat ~/notes.txt",
        "shadow": "cat /etc/shadow /etc/gshadow",  # root's commands could read them
    }
    updates, results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, f"{marker} leaked under {backend}"
    # it fails, and the model's tool result says why and who can change it
    assert "~/.ssh is hidden from commands (credential store: SSH keys)" in results["cat"], results["cat"]
    assert "allow_read" in results["cat"]
    if backend == "bwrap":
        assert "id_ed25519" not in results["ls"]  # an empty tmpfs
    else:  # Landlock grants, never denies: listing `~` lists beneath it; names show, contents do not
        assert "~/.ssh is hidden" in results["ls"]
    if backend == "bwrap":  # a filtered copy: the registry line stays, the token line does not
        assert "registry=https://registry.example.test/" in results["npmrc"], results["npmrc"]
        assert "removed by Tether's sandbox" in results["npmrc"]
        assert "~/.npmrc is shown to commands without its credential lines" in results["npmrc"]
    else:  # Landlock cannot replace a file: hidden whole, and said so
        assert "registry=" not in results["npmrc"]
        assert "Landlock cannot show it filtered" in results["npmrc"]
    assert "ordinary notes" in results["copy"]  # the rest of the home folder is there
    assert "root:" not in results["shadow"] and "/etc/shadow is hidden" in results["shadow"]
    assert not (workspace / "hard").exists() and not (workspace / "hard2").exists()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_allow_read_in_the_user_config_exposes_one_store_and_a_workspace_cannot(
    spawn_daemon, workspace: Path, tmp_path: Path, daemon_env: dict[str, str], backend: str
) -> None:
    home = fake_home(tmp_path)
    user_config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('allow_read = ["~/.aws"]\n')
    (workspace / ".tether").mkdir()
    # a hostile repository asks for the SSH keys, and (allowed: narrower) hides the notes
    (workspace / ".tether" / "config.toml").write_text('allow_read = ["~/.ssh"]\ndeny_read = ["~/notes.txt"]\n')
    commands = {"aws": "cat ~/.aws/credentials", "ssh": "cat ~/.ssh/id_ed25519", "notes": "cat ~/notes.txt"}
    daemon_updates, results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    assert AWS in results["aws"]  # the user's own allow_read
    assert SSH not in json.dumps(daemon_updates) and "~/.ssh is hidden" in results["ssh"]
    assert "ordinary notes" not in results["notes"]  # the workspace's deny_read applies
    notices = [u for u in daemon_updates if u.get("_meta", {}).get("tether", {}).get("notice")]
    assert any(
        "allow_read" in json.dumps(n) and "must not let its own commands read" in json.dumps(n) for n in notices
    ), notices


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_store_opened_as_the_workspace_stays_usable_and_the_others_stay_hidden(
    spawn_daemon, tmp_path: Path, backend: str
) -> None:
    """Chosen behaviour: the user opened ~/.ssh as a workspace, so it is readable there
    (it cannot be hidden without hiding the workspace); every other store stays hidden."""
    home = fake_home(tmp_path)
    workspace = (home / ".ssh").resolve()
    commands = {"own": "cat id_ed25519", "aws": "cat ~/.aws/credentials"}
    updates, results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    assert SSH in results["own"]
    assert AWS not in json.dumps(updates) and "~/.aws is hidden" in results["aws"]


def test_doctor_lists_the_effective_hidden_paths(tmp_path: Path, daemon_env: dict[str, str]) -> None:
    home = fake_home(tmp_path)
    user_config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('allow_read = ["~/.aws"]\ndeny_read = ["~/notes.txt"]\nprovider = "scripted"\n')
    env = {**daemon_env, "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "tether", "doctor", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(done.stdout)["sandbox"]
    rows = {row["shown"]: row for row in report["reads"]["hidden"]}
    assert rows["~/.ssh"]["exists"] and rows["~/.ssh"]["why"] == "SSH keys"
    assert rows["~/.mozilla"]["exists"] and not rows["~/.kube"]["exists"]
    assert rows["~/notes.txt"]["why"] == "your deny_read"
    assert "~/.aws" not in rows and report["reads"]["exposed"] == ["~/.aws"]
    assert next(row["shown"] for row in report["reads"]["filtered"]) == "~/.npmrc"
    assert report["guarantees"] and report["guarantees"][0].startswith("files: ")
    text = subprocess.run(
        [sys.executable, "-m", "tether", "doctor"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    ).stdout
    assert "hidden from commands (present here):" in text and "~/.ssh  (SSH keys)" in text
    assert "exposed by your allow_read: ~/.aws" in text
    assert os.path.exists(home / ".ssh")


async def test_the_file_tools_skip_and_refuse_the_stores_when_the_home_folder_is_the_workspace(
    spawn_daemon, tmp_path: Path
) -> None:
    home = fake_home(tmp_path)
    script = tmp_path / "tools.json"
    calls = [
        {"id": "read", "name": "read_file", "arguments": {"path": ".ssh/id_ed25519"}},
        {"id": "read_aws", "name": "read_file", "arguments": {"path": str(home / ".aws" / "credentials")}},
        {"id": "list", "name": "list_dir", "arguments": {"path": ".", "depth": 5}},
        {"id": "grep", "name": "grep", "arguments": {"pattern": "MATERIAL"}},
        {"id": "glob", "name": "glob", "arguments": {"pattern": "**/*"}},
        {"id": "notes", "name": "read_file", "arguments": {"path": "notes.txt"}},
    ]
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": calls}, {"text": "done"}]}))
    updates, results = await run_turn(spawn_daemon, home.resolve(), script, {"HOME": str(home)})
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, marker
    assert "credential store hidden from tools and commands" in results["read"], results["read"]
    assert "allow_read" in results["read_aws"]
    assert ".ssh" not in results["list"] and ".mozilla" not in results["list"] and "notes.txt" in results["list"]
    assert "id_ed25519" not in results["glob"] and "notes.txt" in results["glob"]
    assert "ordinary notes" in results["notes"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_host_key_made_between_two_prompts_is_hidden_from_the_next_prompts_commands(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """The hidden list is kept between turns (sandbox/credential_stores.py): a host key that
    appears in /etc/ssh after the first prompt must still be hidden from the second's commands."""
    host_key = Path("/etc/ssh") / f"ssh_host_tether{os.getpid()}{backend}_key"
    made_dir = not host_key.parent.exists()
    script = tmp_path / "two.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"step": 2}, "text": "done"},
                    {
                        "when": {"user": "^first"},
                        "tool_calls": [
                            {"id": "one", "name": "run_command", "arguments": {"command": "echo first turn"}}
                        ],
                    },
                    {
                        "when": {"user": "^second"},
                        "tool_calls": [
                            {"id": "two", "name": "run_command", "arguments": {"command": f"cat {host_key}"}}
                        ],
                    },
                ]
            }
        )
    )
    daemon = await spawn_daemon(
        "--mode",
        "full-auto",
        script=script,
        env={"TETHER_MASK_SECRETS": "off", "HOME": str(fake_home(tmp_path)), "TETHER_SANDBOX": backend},
    )
    session = await daemon.client.new_session(workspace)
    first = [u async for u in session.prompt("first")]
    assert "first turn" in json.dumps(first)
    try:
        host_key.parent.mkdir(exist_ok=True)
        host_key.write_text("-----BEGIN HOSTKEY-MATERIAL-77c1-----\n")
        second = [u async for u in session.prompt("second")]
    finally:
        host_key.unlink(missing_ok=True)
        if made_dir:
            host_key.parent.rmdir()
    result = "".join(
        b.get("content", {}).get("text", "")
        for u in second
        if u.get("toolCallId") == "two"
        for b in u.get("content") or []
    )
    assert "HOSTKEY-MATERIAL" not in json.dumps(second)
    assert f"{host_key} is hidden from commands (credential store: SSH host key)" in result, result
