"""Attacks on issue 35 item 2 (credential stores hidden from commands and tools), as a
hostile repository or model would make them, through a real `tether serve` with real
bubblewrap and Landlock. Each test passing documents a closed door.

Masking is off in these turns (test_credential_stores.run_turn): the sandbox alone must
keep the files out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_credential_stores import AWS, BACKENDS, MARKERS, SSH, fake_home, run_turn, script_of

POETRY = "POETRY-AUTH-MATERIAL-0a1b"
PGPASS = "PGPASS-MATERIAL-2c3d"
COMPOSER = "COMPOSER-MATERIAL-4e5f"
GLAB = "GLAB-MATERIAL-6a7b"
RCLONE = "RCLONE-MATERIAL-8c9d"
FURY = "FURYTOKEN-MATERIAL-1e2f"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_proc_paths_path_spellings_and_nested_namespaces_do_not_reach_the_stores(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    home = fake_home(tmp_path)
    key = f"{home}/.ssh/id_ed25519"
    commands = {
        # the daemon's own root and fds (no pid namespace under Landlock; ptrace rules apply)
        "daemon": "for p in $(pgrep -f 'tether serve'); do cat /proc/$p/root"
        + key
        + " /proc/$p/cwd/../home-user/.ssh/id_ed25519; ls -l /proc/$p/fd; done",
        "spellings": f"cat {home}//.ssh//id_ed25519 {home}/.ssh/./id_ed25519 {home}/.aws/../.ssh/id_ed25519"
        f" {home}/./.ssh/id_ed25519 {home}/.ssh/id_ed25519/ {home}/.SSH/id_ed25519",
        # a user namespace of its own: unmount the tmpfs, or bind the parent without it
        "umount": f"unshare -rm sh -c 'umount {home}/.ssh; cat {key}'",
        "bind": f"mkdir -p m; unshare -rm sh -c 'mount --bind {home} m && cat m/.ssh/id_ed25519'",
        "xdg": f"XDG_CONFIG_HOME=/nowhere HOME=/ cat {home}/.config/gh/hosts.yml",
        "open_by_handle": f"{sys.executable} -c \"import os;d=os.open('{home}',os.O_PATH);"
        "print(open(os.open('.ssh/id_ed25519',os.O_RDONLY,dir_fd=d)).read())\"",
    }
    updates, results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, f"{marker} leaked under {backend}"
    assert "~/.ssh is hidden" in results["spellings"], results["spellings"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_home_reached_through_a_symlink_still_hides_the_stores(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """HOME=/home/u where /home -> /var/home (Fedora Atomic, some NAS set-ups)."""
    real = fake_home(tmp_path)
    linked = tmp_path / "linked-home"
    linked.symlink_to(real)
    commands = {
        "cat": "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.config/gh/hosts.yml",
        "real": f"cat {real}/.ssh/id_ed25519",
        "npmrc": "cat ~/.npmrc",
    }
    updates, _results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(linked), "TETHER_SANDBOX": backend}
    )
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, f"{marker} leaked under {backend}"


def _more_stores(home: Path) -> None:
    (home / ".pgpass").write_text(f"db.internal:5432:app:app:{PGPASS}\n")
    (home / ".config" / "pypoetry").mkdir(parents=True)
    (home / ".config" / "pypoetry" / "auth.toml").write_text(
        f'[http-basic.private]\nusername = "u"\npassword = "{POETRY}"\n'
    )
    (home / ".config" / "composer").mkdir(parents=True)
    (home / ".config" / "composer" / "auth.json").write_text(f'{{"github-oauth": {{"github.com": "{COMPOSER}"}}}}\n')
    (home / ".config" / "glab-cli").mkdir(parents=True)
    (home / ".config" / "glab-cli" / "config.yml").write_text(f"hosts:\n  gitlab.com:\n    token: {GLAB}\n")
    (home / ".config" / "rclone").mkdir(parents=True)
    (home / ".config" / "rclone" / "rclone.conf").write_text(f"[s3]\ntype = s3\nsecret_access_key = {RCLONE}\n")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_other_common_credential_files_are_hidden_too(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """Stores the issue's list leaves out but that hold the same kind of secret: Postgres'
    password file, Poetry's and Composer's auth files, the GitLab CLI token, rclone's keys."""
    home = fake_home(tmp_path)
    _more_stores(home)
    commands = {
        "cat": "cat ~/.pgpass ~/.config/pypoetry/auth.toml ~/.config/composer/auth.json"
        " ~/.config/glab-cli/config.yml ~/.config/rclone/rclone.conf"
    }
    updates, _results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    everything = json.dumps(updates)
    for marker in (PGPASS, POETRY, COMPOSER, GLAB, RCLONE):
        assert marker not in everything, f"{marker} leaked under {backend}"


async def test_a_token_in_a_package_index_url_is_removed_from_the_filtered_copy(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Gemfury, Azure Artifacts and GitLab put the token alone before `@` (no `user:`)."""
    home = fake_home(tmp_path)
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nindex-url = https://{FURY}@pypi.fury.io/acme/\ntimeout = 60\n"
    )
    (home / ".npmrc").write_text(f"registry = https://{FURY}@npm.fury.io/acme/\nsave-exact=true\n")
    commands = {"pip": "cat ~/.config/pip/pip.conf", "npm": "cat ~/.npmrc"}
    updates, results = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, commands), {"HOME": str(home), "TETHER_SANDBOX": "bwrap"}
    )
    assert FURY not in json.dumps(updates)
    assert "timeout = 60" in results["pip"] and "save-exact=true" in results["npm"]


async def test_the_file_tools_do_not_follow_planted_links_or_paths_to_the_stores(spawn_daemon, tmp_path: Path) -> None:
    """The usual case: the workspace is a project inside HOME; the repository ships links."""
    home = fake_home(tmp_path)
    workspace = home / "project"
    workspace.mkdir()
    (workspace / "key").symlink_to(home / ".ssh" / "id_ed25519")
    (workspace / "aws").symlink_to(home / ".aws")
    (workspace / "up").symlink_to(home)
    calls = [
        {"id": "link", "name": "read_file", "arguments": {"path": "key"}},
        {"id": "dir", "name": "read_file", "arguments": {"path": "aws/credentials"}},
        {"id": "up", "name": "read_file", "arguments": {"path": "up/.ssh/id_ed25519"}},
        {"id": "dots", "name": "read_file", "arguments": {"path": "../.ssh/id_ed25519"}},
        {"id": "abs", "name": "read_file", "arguments": {"path": str(home / ".ssh" / "id_ed25519")}},
        {"id": "grep", "name": "grep", "arguments": {"pattern": "MATERIAL"}},
        {"id": "grep_up", "name": "grep", "arguments": {"pattern": "MATERIAL", "path": "up"}},
        {"id": "glob", "name": "glob", "arguments": {"pattern": "**/id_*"}},
        {"id": "list", "name": "list_dir", "arguments": {"path": "up", "depth": 3}},
    ]
    script = tmp_path / "tools.json"
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": calls}, {"text": "done"}]}))
    updates, results = await run_turn(spawn_daemon, workspace.resolve(), script, {"HOME": str(home)})
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, marker
    assert SSH not in results["link"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_workspace_holding_the_home_folder_keeps_the_stores_from_commands_and_tools(
    spawn_daemon, tmp_path: Path, backend: str
) -> None:
    """The user opens a folder that contains HOME (`/home`, a whole disk, a container's `/`)."""
    home = fake_home(tmp_path)
    workspace = tmp_path.resolve()
    (tmp_path / "ws").mkdir(exist_ok=True)
    rel = home.relative_to(tmp_path)
    calls = [
        {
            "id": "cat",
            "name": "run_command",
            "arguments": {"command": f"cat {rel}/.ssh/id_ed25519; grep -r MATERIAL {rel}"},
        },
        {"id": "mv", "name": "run_command", "arguments": {"command": f"mv {rel}/.ssh moved; cat moved/id_ed25519"}},
        {"id": "read", "name": "read_file", "arguments": {"path": f"{rel}/.ssh/id_ed25519"}},
        {"id": "grep", "name": "grep", "arguments": {"pattern": "MATERIAL"}},
        {"id": "glob", "name": "glob", "arguments": {"pattern": "**/credentials"}},
    ]
    script = tmp_path / "holding.json"
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": calls}, {"text": "done"}]}))
    updates, _results = await run_turn(spawn_daemon, workspace, script, {"HOME": str(home), "TETHER_SANDBOX": backend})
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, f"{marker} leaked under {backend}"
    assert (home / ".ssh" / "id_ed25519").exists()


async def test_an_agents_md_planted_as_a_link_into_a_store_does_not_reach_the_prompt(
    spawn_daemon, tmp_path: Path
) -> None:
    """The home folder is the workspace (a dotfiles repository). A command (bubblewrap:
    it may write the workspace, and a link's text names a hidden path freely) plants
    `AGENTS.md -> .ssh/id_ed25519`; the daemon itself reads AGENTS.md into the prompt of
    the next session, outside the sandbox and without masking."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
    from local_http import LocalHTTPServer
    from test_secret_environ import _command_call, _text

    home = fake_home(tmp_path)
    subprocess.run(["git", "init", "-q", str(home)], check=True)
    workspace = home.resolve()
    async with LocalHTTPServer() as server:
        server.queue(
            _command_call("ln -s .ssh/id_ed25519 AGENTS.md; ln -s .aws/credentials MEMORY.md"),
            _text("Planted."),
            _text("Hello."),
        )
        command = [
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "openai",
            "--base-url",
            server.url + "/v1",
            "--model",
            "m",
            "--mode",
            "full-auto",
        ]
        daemon = await spawn_daemon(
            command=command,
            env={
                "OPENAI_API_KEY": "sk-fake",
                "HOME": str(home),
                "TETHER_SANDBOX": "bwrap",
                "TETHER_MASK_SECRETS": "off",
            },
        )

        async def allow(method: str, params: dict):
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        daemon.client.peer.on_request = allow
        for prompt in ("plant it", "hello again"):
            session = await daemon.client.new_session(workspace)
            turn = session.prompt(prompt)
            _ = [u async for u in turn]
    assert (workspace / "AGENTS.md").is_symlink()  # the plant worked: the door is the daemon's read
    sent = json.dumps([r.body for r in server.requests])
    for marker in MARKERS:
        assert marker not in sent, f"{marker} reached the model through the prompt"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_workspace_config_planted_as_a_link_into_a_store_shows_nothing_of_it(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """`.tether/config.toml -> ~/.aws/credentials` (valid TOML): the daemon reads the
    workspace config outside the sandbox; its notices about refused keys must not carry
    the store's contents to the client or the model."""
    home = fake_home(tmp_path)
    plant = {"plant": f"mkdir -p .tether && ln -s {home}/.aws/credentials .tether/config.toml; ls -la .tether"}
    _, first = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, plant), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    planted = (workspace / ".tether" / "config.toml").is_symlink()
    updates, _ = await run_turn(
        spawn_daemon, workspace, script_of(tmp_path, {"again": "true"}), {"HOME": str(home), "TETHER_SANDBOX": backend}
    )
    assert planted and AWS not in json.dumps(updates), (planted, first)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_links_a_command_makes_to_a_store_are_not_followed_by_the_daemon(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """The daemon records what a command changed (for rewind and the change list) outside
    the sandbox: a link the command made into a store must not be read through."""
    home = fake_home(tmp_path)
    commands = {
        "link": f"ln -s {home}/.ssh/id_ed25519 leak; ln -s {home}/.aws leakdir; echo ok > note.txt",
        "relink": f"rm leak; ln -s {home}/.aws/credentials leak",
    }
    script = tmp_path / "links.json"
    steps = [
        {"when": {"step": i + 1}, "tool_calls": [{"id": k, "name": "run_command", "arguments": {"command": c}}]}
        for i, (k, c) in enumerate(commands.items())
    ]
    reads = [
        {"id": f"r{i}", "name": name, "arguments": args}
        for i, (name, args) in enumerate(
            [
                ("read_file", {"path": "leak"}),
                ("read_file", {"path": "leakdir/credentials"}),
                ("grep", {"pattern": "MATERIAL"}),
                ("list_dir", {"path": ".", "depth": 3}),
            ]
        )
    ]
    script.write_text(json.dumps({"replies": [*steps, {"when": {"step": 3}, "tool_calls": reads}, {"text": "done"}]}))
    updates, _ = await run_turn(spawn_daemon, workspace, script, {"HOME": str(home), "TETHER_SANDBOX": backend})
    everything = json.dumps(updates)
    for marker in MARKERS:
        assert marker not in everything, f"{marker} leaked under {backend}"
    assert (workspace / "leak").is_symlink()
