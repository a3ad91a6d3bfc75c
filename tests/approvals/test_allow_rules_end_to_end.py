"""Allow rules that would write or run more than they show, through a real `tether serve`
in ask mode with real bubblewrap and the scripted model (issue 30 item 4): after "allow
always" on `echo`, `printf` and `git ls-remote`, a redirect onto `Makefile` or
`package.json` and `git ls-remote --upload-pack=…` are asked with the reason, the user
rejects them, and nothing changes on disk; a new, inert file is still written unasked."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SETUP = {"call_echo": "echo ready", "call_printf": "printf ready", "call_remote": "git ls-remote --heads ."}
ATTACKS = {
    "call_makefile": "echo 'all:; touch pwned_by_make' > Makefile",
    "call_package": 'printf \'{"scripts":{"test":"touch pwned_by_npm"}}\' > package.json',
    "call_upload_pack": "git ls-remote --upload-pack='touch MARKER' .",
}
PLAIN = {"call_fresh": "echo made > fresh.txt"}


def _script(tmp_path: Path) -> Path:
    def calls(commands: dict[str, str]) -> list[dict]:
        return [{"id": i, "name": "run_command", "arguments": {"command": c}} for i, c in commands.items()]

    script = {
        "model": "scripted-allow-rules",
        "replies": [
            {"when": {"user": "^set up", "step": 1}, "text": "Checking.", "tool_calls": calls(SETUP)},
            {"when": {"user": "^set up", "step": 2}, "text": "Ready."},
            {"when": {"user": "^attack", "step": 1}, "text": "Trying.", "tool_calls": calls({**ATTACKS, **PLAIN})},
            {"when": {"user": "^attack", "step": 2}, "text": "Done."},
        ],
    }
    path = tmp_path / "allow-rules.json"
    path.write_text(json.dumps(script))
    return path


async def test_allow_rules_never_write_a_build_file_or_run_an_upload_pack(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    (workspace / "Makefile").write_text("test:\n\techo ok\n")
    (workspace / "package.json").write_text('{"scripts": {"test": "echo ok"}}\n')
    before = {name: (workspace / name).read_text() for name in ("Makefile", "package.json")}
    prompts: list[dict] = []

    async def on_request(method: str, params: dict):
        prompts.append(params)
        setup = params["toolCall"]["toolCallId"] in SETUP
        return {"outcome": {"outcome": "selected", "optionId": "allow_always" if setup else "reject_once"}}

    daemon = await spawn_daemon("--mode", "ask", script=_script(tmp_path), env={"TETHER_SANDBOX": "bwrap"})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("set up")]
    assert sorted(p["toolCall"]["toolCallId"] for p in prompts) == sorted(SETUP)
    prompts.clear()

    turn = session.prompt("attack")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    reasons = {p["toolCall"]["toolCallId"]: p["_meta"]["tether"]["reason"] for p in prompts}
    assert reasons == {
        "call_makefile": f"no allow rule may approve running `{ATTACKS['call_makefile']}`: "
        "`Makefile` configures what builds, tests or the agent run",
        "call_package": f"no allow rule may approve running `{ATTACKS['call_package']}`: "
        "`package.json` configures what builds, tests or the agent run",
        "call_upload_pack": f"mode ask asks before running `{ATTACKS['call_upload_pack']}` "
        "(`git ls-remote --upload-pack='touch MARKER'` runs a command)",
    }
    finals = {u["toolCallId"]: u["status"] for u in updates if u.get("status") in ("completed", "failed")}
    assert finals == {
        "call_makefile": "failed",
        "call_package": "failed",
        "call_upload_pack": "failed",
        "call_fresh": "completed",
    }
    assert {name: (workspace / name).read_text() for name in before} == before
    assert not (workspace / "MARKER").exists()
    assert not list(workspace.glob("pwned*"))
    # the rule still does what it is for: a new, inert file, written unasked in the sandbox
    assert (workspace / "fresh.txt").read_text() == "made\n"


def _git(cwd: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


PUSH_SPELLINGS = {
    "call_send_pack": "git send-pack ./remote.git main",
    "call_receive_pack": "git push --receive-pack='git receive-pack' ./remote.git main",
    "call_alias": "git -c alias.p=push p ./remote.git main",
}


async def test_git_send_pack_never_pushes_under_the_git_push_rule(spawn_daemon, workspace: Path, tmp_path: Path):
    # a real repository with a bare remote inside the workspace: a push needs no network
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-qm", "one")
    _git(workspace, "clone", "-q", "--bare", ".", "remote.git")
    (workspace / "README.md").write_text("changed\n")
    _git(workspace, "commit", "-qam", "two")
    pushed_before = _git(workspace / "remote.git", "rev-parse", "main")
    assert pushed_before != _git(workspace, "rev-parse", "main")
    script = {
        "model": "scripted-push",
        "replies": [
            {
                "when": {"user": "^push", "step": 1},
                "text": "Pushing.",
                "tool_calls": [
                    {"id": i, "name": "run_command", "arguments": {"command": c}} for i, c in PUSH_SPELLINGS.items()
                ],
            },
            {"when": {"user": "^push", "step": 2}, "text": "Done."},
        ],
    }
    path = tmp_path / "push.json"
    path.write_text(json.dumps(script))
    prompts: list[dict] = []

    async def on_request(method: str, params: dict):
        prompts.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    daemon = await spawn_daemon("--mode", "full-auto", script=path, env={"TETHER_SANDBOX": "bwrap"})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("push it")
    updates = [u async for u in turn]
    finals = {u["toolCallId"]: u for u in updates if u.get("status") in ("completed", "failed")}
    refusal = "refused by built-in rule: deny `git push`; this command is never run"
    for call in ("call_send_pack", "call_receive_pack"):
        assert finals[call]["status"] == "failed"
        assert "".join(b["content"]["text"] for b in finals[call]["content"]) == refusal
    # an alias may be anything: asked (in full-auto too), and the user rejects it
    assert [p["toolCall"]["toolCallId"] for p in prompts] == ["call_alias"]
    assert finals["call_alias"]["status"] == "failed"
    assert _git(workspace / "remote.git", "rev-parse", "main") == pushed_before
