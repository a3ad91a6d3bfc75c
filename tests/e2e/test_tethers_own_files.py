"""A workspace that holds Tether's own config and history (the home folder opened as a
workspace): the file tools neither read, list nor search them, as commands cannot; no
instructions file linked to them reaches the model; no rewind of a restored snapshot
writes them (or anything outside the workspace)."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import sys
from pathlib import Path

import pytest

from tether_client import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply
from test_real_provider_turn import serve_command, text_chunks

from daemon_harness import until

KEY = "sk-fake-in-the-workspace-7c1d"


async def test_the_tools_do_not_reach_tethers_config_and_history_inside_the_workspace(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    config = workspace / ".config" / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'api_key = "{KEY}"\n')
    home = workspace / ".local" / "share" / "tether"
    script = tmp_path / "peek.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {"id": "read", "name": "read_file", "arguments": {"path": ".config/tether/config.toml"}},
                            {"id": "grep", "name": "grep", "arguments": {"pattern": "sk-fake"}},
                            {"id": "list", "name": "list_dir", "arguments": {"path": ".", "depth": 5}},
                            {"id": "glob", "name": "glob", "arguments": {"pattern": "**/*.toml"}},
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon(
        script=script, env={"XDG_CONFIG_HOME": str(workspace / ".config"), "TETHER_HOME": str(home)}
    )
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("look for keys")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert home.is_dir()  # the history is there, in the workspace
    assert KEY not in json.dumps(updates)
    results = {
        u["toolCallId"]: "".join(b["content"]["text"] for b in u.get("content") or [] if b.get("type") == "content")
        for u in updates
        if u.get("status") in ("completed", "failed")
    }
    assert "Tether's own configuration or history" in results["read"]
    assert ".config/tether" not in results["list"] and "share/tether" not in results["list"]
    assert "config.toml" not in results["glob"]
    assert "README.md" in results["list"]  # the rest of the workspace is there


def _home_env(workspace: Path) -> dict[str, str]:
    """The daemon's HOME is the workspace (the home folder opened as a workspace), with
    Tether's config and history where they go by default."""
    return {
        "HOME": str(workspace),
        "XDG_CONFIG_HOME": str(workspace / ".config"),
        "TETHER_HOME": str(workspace / ".local" / "share" / "tether"),
    }


def _config_with_key(workspace: Path) -> Path:
    config = workspace / ".config" / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'api_key = "{KEY}"\n')
    return config


async def test_instructions_files_linked_to_tethers_config_never_reach_the_model(spawn_daemon, workspace: Path):
    """Issue 30 item 7: `AGENTS.md -> .config/tether/config.toml` (as a command could plant
    it), a workspace MEMORY.md and a slash command file linked the same way put nothing
    of the config in the request the model gets or the command list the client gets; an
    AGENTS.md of the project's own is still read."""
    _config_with_key(workspace)
    (workspace / "AGENTS.md").symlink_to(".config/tether/config.toml")
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "MEMORY.md").symlink_to("../.config/tether/config.toml")
    (workspace / ".tether" / "commands").mkdir()
    (workspace / ".tether" / "commands" / "key.md").symlink_to("../../.config/tether/config.toml")
    (workspace / ".tether" / "commands" / "hello.md").write_text("Say hello.\n")
    (workspace / "src" / "AGENTS.md").write_text("Keep functions short.\n")
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=text_chunks("openai", "ok")), Reply(chunks=text_chunks("openai", "ok")))
        daemon = await spawn_daemon(command=serve_command("openai", server), env=_home_env(workspace))
        for folder in (workspace, workspace / "src"):
            session = await daemon.client.new_session(folder)

            def commands_listed(session=session) -> list[dict]:
                return [u for u in session.updates if u["sessionUpdate"] == "available_commands_update"]

            await until(lambda: commands_listed())  # sent after session/new's answer, when the files are read
            listed = commands_listed()
            names = {c["name"] for c in listed[-1]["availableCommands"]}
            assert "key" not in names and KEY not in json.dumps(listed)  # a slash command linked to the config
            assert "hello" in names or folder != workspace
            turn = session.prompt("hello")
            _ = [u async for u in turn]
            assert turn.stop_reason == "end_turn"
    home_request, src_request = (json.dumps(r.body) for r in server.requests)
    assert "api_key" not in home_request and KEY not in home_request
    assert "api_key" not in src_request and KEY not in src_request
    assert "Keep functions short." in src_request  # the project's own AGENTS.md is read


PWNED = b"PWNED by a restored snapshot\n"


def _crafted(snapshot: dict, paths: list[str]) -> dict:
    """The snapshot with a change of the first turn's message for each path, whose earlier
    content (what a rewind restores) is PWNED."""
    crafted = copy.deepcopy(snapshot)
    digest = hashlib.sha256(PWNED).hexdigest()
    checkpoints = crafted["checkpoints"]
    checkpoints["blobs"][digest] = base64.b64encode(PWNED).decode()
    seq = checkpoints["changes"][0]["seq"]
    checkpoints["changes"] += [
        {"seq": seq, "rewind": None, "call_id": "evil", "path": p, "before": digest, "after": None, "note": None}
        for p in paths
    ]
    return crafted


async def test_a_crafted_snapshot_rewinds_nothing_outside_the_workspace_or_into_tethers_files(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    """Issue 30 item 7: a restored snapshot names Tether's config, the user's MEMORY.md,
    the history folder, a path through a link out of the workspace, a link into the
    config, `.git` and a too-long name;
    a forced rewind writes none of them (and restores the session's own file)."""
    config = _config_with_key(workspace)
    (workspace / "up").symlink_to(tmp_path)  # a folder link out of the workspace
    (workspace / "innocent.txt").symlink_to(".config/tether/config.toml")  # a file link into the config
    script = tmp_path / "write.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env=_home_env(workspace))
    session = await daemon.client.new_session(workspace)
    await session.prompt("write notes").wait()
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})

    # a path no file can have is refused at restore, naming the field
    for bad, problem in (
        ("a\0b", "contains a NUL byte"),
        ("/etc/passwd", "is absolute"),
        ("src/../../outside.txt", "has a '..' part"),
        ("x" * 5000, "is longer than 4096 bytes"),
    ):
        with pytest.raises(ClientError) as caught:
            await daemon.client.request("_tether/session/restore", {"snapshot": _crafted(snapshot, [bad])})
        assert caught.value.code == -32602
        index = len(snapshot["checkpoints"]["changes"])
        assert f"checkpoints.changes[{index}].path {problem}" in caught.value.message, caught.value.message

    evil = [
        ".config/tether/config.toml",
        ".config/tether/MEMORY.md",
        ".local/share/tether/planted.txt",
        "up/escaped.txt",
        "innocent.txt",
        ".git/hooks/pre-commit",
        "y" * 300,
        "src/app.py",
    ]
    restored = await daemon.client.request("_tether/session/restore", {"snapshot": _crafted(snapshot, evil)})
    answer = await daemon.client.request(
        "_tether/session/rewind", {"sessionId": restored["sessionId"], "toTurn": 1, "force": True}
    )
    assert answer["done"] is True and KEY not in json.dumps(answer)  # not read into a conflict's diff either
    assert sorted(answer["restored"]) == ["notes.txt", "src/app.py"]  # the workspace's own files only
    assert {s["path"] for s in answer["skipped"]} == set(evil) - {"src/app.py"}
    assert config.read_text() == f'api_key = "{KEY}"\n'
    assert not (workspace / ".config" / "tether" / "MEMORY.md").exists()
    assert not (workspace / ".local" / "share" / "tether" / "planted.txt").exists()
    assert not (tmp_path / "escaped.txt").exists() and not (workspace / ".git").exists()
    assert (workspace / "innocent.txt").is_symlink()
    assert not (workspace / "notes.txt").exists()  # the session's own change is rewound
    assert (workspace / "src" / "app.py").read_bytes() == PWNED  # inside the workspace: a file like any
