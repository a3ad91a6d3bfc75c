"""Stop-42 attacks through the real daemon: hostile snapshots restored with `keepId` that try to
get a waiting turn's already-answered call run again around fix42's pending-call check, and
path42's kept turn setup (a credential store made between two prompts, two sessions of two
workspaces in one daemon) held to what the uncached code allowed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tether_client import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply
from test_attacks_on_restored_calls import read_readme_snapshot
from test_real_provider_turn import FAKE_KEY, KEY_ENV, serve_command, text_chunks


@pytest.mark.parametrize("moved_to", ["no turn", "another turn"])
async def test_a_result_moved_out_of_its_turn_does_not_get_its_call_run_again(
    spawn_daemon, workspace: Path, moved_to: str
) -> None:
    """The waiting turn's call already has its result in the conversation, but the snapshot files
    that result under no turn (or a turn of its own): restored, the call would run a second time."""
    client, snapshot = await read_readme_snapshot(spawn_daemon, workspace)
    turn = snapshot["turns"][0]
    call = snapshot["messages"][1]["body"]["tool_calls"][0]
    turn.update(status="running", finished_at=None, stop_reason=None, pending={"step": 1, "calls": [dict(call)]})
    snapshot["messages"], snapshot["reports"] = snapshot["messages"][:3], []
    result = snapshot["messages"][2]
    assert result["role"] == "tool"
    if moved_to == "no turn":
        result["turn_id"] = None
    else:
        other = dict(turn, id="turn_0000000000000000", seq=turn["seq"] + 1, pending=None, status="complete")
        other.update(finished_at=turn["started_at"], stop_reason="end_turn")
        snapshot["turns"].append(other)
        result["turn_id"] = other["id"]
    # (fix42 alone restored both, and loading it ran `call_read` a second time: two results)
    with pytest.raises(ClientError) as refused:
        await client.request("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
    assert refused.value.code == -32602
    assert refused.value.message == (
        f"invalid snapshot: turns[0].pending.calls[0]: call 'call_read' (read_file) already has a result "
        f"in turn {turn['id']!r}'s messages; a waiting turn resumes only the calls its model made"
    )
    assert (await client.list_sessions(workspace)) == []  # nothing stored


async def test_a_model_that_reused_a_call_id_in_an_earlier_turn_still_resumes(spawn_daemon, workspace: Path) -> None:
    """Not a forgery: an earlier turn made (and answered) a call of the same id as the waiting
    turn's (a model may reuse ids): the waiting call restores and runs once on load."""
    client, snapshot = await read_readme_snapshot(spawn_daemon, workspace)
    first = snapshot["turns"][0]
    waiting = dict(first, id="turn_00000000000000ff", seq=first["seq"] + 1, status="running")
    call = snapshot["messages"][1]["body"]["tool_calls"][0]
    waiting.update(finished_at=None, stop_reason=None, pending={"step": 1, "calls": [dict(call)]})
    snapshot["turns"].append(waiting)
    last = snapshot["messages"][-1]["seq"]
    again = [dict(m, turn_id=waiting["id"], seq=last + 1 + i) for i, m in enumerate(snapshot["messages"][:2])]
    snapshot["messages"] += again
    snapshot["reports"] = []
    restored = await client.request("_tether/session/restore", {"snapshot": snapshot, "keepId": True})
    await client.load_session(restored["sessionId"], workspace)
    results: list[str] = []
    for _ in range(100):
        dumped = await client.request("_tether/session/dump", {"sessionId": restored["sessionId"]})
        results = [m["body"]["tool_call_id"] for m in dumped["messages"] if m["role"] == "tool"]
        if len(results) == 2:
            break
        await asyncio.sleep(0.1)
    assert results == ["call_read", "call_read"]


AWS = "AWSCRED-MATERIAL-42cafe"
GH = "GHHOSTS-MATERIAL-42beef"


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_a_credential_store_made_between_two_prompts_is_hidden_from_the_next(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    """The session's turn setup (path42) is built at the first prompt, while the user has no AWS or
    GitHub CLI credentials; they log in before the second prompt. The second turn's commands (a
    hostile model's `cat`) must not read them, as if the setup were built anew."""
    home = tmp_path / "home-user"
    home.mkdir()
    peek = "cat ~/.aws/credentials ~/.config/gh/hosts.yml 2>&1; echo END"
    script = tmp_path / "peek.json"
    call = {"id": "call_peek", "name": "run_command", "arguments": {"command": peek}}
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": [call]}, {"text": "done"}]}))
    env = {"HOME": str(home), "TETHER_MASK_SECRETS": "off", "TETHER_SANDBOX": backend}
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env=env)

    async def allow(method: str, params: dict):
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = allow
    session = await daemon.client.new_session(workspace)
    outputs = []
    for i in range(2):
        if i == 1:  # the user logs in between the two prompts
            (home / ".aws").mkdir()
            (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS}\n")
            (home / ".config" / "gh").mkdir(parents=True)
            (home / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n  oauth_token: {GH}\n")
        turn = session.prompt("peek")
        updates = [u async for u in turn]
        assert turn.stop_reason == "end_turn"
        outputs.append(json.dumps(updates))
    assert "END" in outputs[1]
    assert AWS not in outputs[1] and GH not in outputs[1]


async def test_two_sessions_of_two_workspaces_never_share_their_instructions(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """One daemon, two sessions of two workspaces prompted in turn (path42 keeps each session's
    AGENTS.md and MEMORY.md read): each model request carries its own workspace's files only,
    also after one workspace's AGENTS.md is edited with its size and mtime kept."""
    other = tmp_path / "other-ws"
    other.mkdir()
    for folder, word in ((workspace, "alpha"), (other, "omega")):
        (folder / "AGENTS.md").write_text(f"Say {word}.\n")
        os.utime(folder / "AGENTS.md", (1_700_000_000, 1_700_000_000))
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", "ok")) for _ in range(5)))
        daemon = await spawn_daemon(command=serve_command("openai", server), env={KEY_ENV["openai"]: FAKE_KEY})
        first = await daemon.client.new_session(workspace)
        second = await daemon.client.new_session(other)
        for session in (first, second, first, second):
            turn = session.prompt("hi")
            _ = [u async for u in turn]
            assert turn.stop_reason == "end_turn"
        (other / "AGENTS.md").write_text("Say sigma.\n")  # same size, same (old) mtime
        os.utime(other / "AGENTS.md", (1_700_000_000, 1_700_000_000))
        turn = second.prompt("hi")
        _ = [u async for u in turn]
    systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert ["Say alpha." in s for s in systems] == [True, False, True, False, False]
    assert ["Say omega." in s for s in systems] == [False, True, False, True, False]
    assert "Say sigma." in systems[4]


LSP_SCRIPT = Path(__file__).resolve().parent.parent / "lsp_editors" / "lsp-agent.json"


async def test_an_lsp_ask_never_reads_a_credential_store_inside_a_home_workspace(spawn_daemon, tmp_path: Path) -> None:
    """fix42 bounds `tether.ask`'s disk read to the workspace, "as the tools read it"; but the
    tools never read a credential store, and a home folder opened as the workspace holds them.
    An ask on `~/.aws/credentials` (never opened in the editor) must not put the key in a prompt."""
    home = (tmp_path / "home-user").resolve()
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS}\n")
    daemon = await spawn_daemon(script=LSP_SCRIPT, initialize=False, env={"HOME": str(home)})

    async def on_request(method: str, params: dict):
        return {"success": True} if method == "window/showDocument" else None

    client = daemon.client
    client.peer.on_request = on_request
    await client.request("initialize", {"processId": None, "rootUri": home.as_uri(), "capabilities": {}})
    client.peer.notify("initialized", {})
    ask = {"kind": "explain", "uri": (home / ".aws" / "credentials").as_uri()}
    with pytest.raises(ClientError) as refused:
        await client.request("workspace/executeCommand", {"command": "tether.ask", "arguments": [ask]})
    assert refused.value.code == -32602
    assert refused.value.message == (
        f"invalid params for tether.ask: {home}/.aws/credentials is a credential store or Tether's own file, "
        f"which Tether's tools never read; open it in the editor or send the prompt as text"
    )
    assert not (await client.request("session/list", {"cwd": str(home)}))["sessions"]  # nothing stored


@pytest.mark.parametrize("path", ["relative/MEMORY.md", "/etc/cron.d/../MEMORY.md", "/tmp/a\u0000b/MEMORY.md"])
async def test_a_remember_results_location_is_not_any_path_named_memory_md(
    spawn_daemon, workspace: Path, path: str
) -> None:
    """fix42 holds a restored result's locations inside the workspace, except `remember`'s user
    MEMORY.md (outside it). That exception took any path whose last part is MEMORY.md: relative,
    through `..`, with a NUL byte; a replay then showed it to the client as a place to open."""
    client, snapshot = await read_readme_snapshot(spawn_daemon, workspace)
    call = snapshot["messages"][1]["body"]["tool_calls"][0]
    call.update(name="remember", arguments={"note": "x"})
    body = snapshot["messages"][2]["body"]
    body.update(name="remember", locations=[{"path": path}])
    with pytest.raises(ClientError) as refused:
        await client.request("_tether/session/restore", {"snapshot": snapshot})
    assert refused.value.code == -32602
    assert refused.value.message == (
        f"invalid snapshot: messages[2].body.locations[0].path {path!r} is not a place in the workspace "
        f"{workspace}; a restored tool result holds only what Tether writes"
    )
    assert (await client.list_sessions(workspace)) == []  # nothing stored
