"""Approvals that say what they allow, and sandbox-aware asking, through a real `tether serve`
with the real OS sandbox (issue 35 item 3).

"Allow always" names the rule it stores and how the commands it allows run; the stored
rule then allows exactly that (other commands still ask, and what it runs has no network
and cannot write outside the workspace). In mode auto-edit a plain, fully seen command
that runs sandboxed without the network and names nothing outside the workspace runs
without a prompt, saying why; commands that look local but are not still ask.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """\
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    print("network: connected")
except OSError as exc:
    print("network: refused", type(exc).__name__)
try:
    open(sys.argv[2], "w").write("escaped")
    print("outside: written")
except OSError as exc:
    print("outside: refused", type(exc).__name__)
open("probe-ran.txt", "a").write("ran\\n")
"""


def _script(tmp_path: Path, commands: list[str]) -> Path:
    """One turn that runs `commands` one step each."""
    steps: list[dict] = [
        {"when": {"step": i + 1}, "tool_calls": [{"id": f"c{i}", "name": "run_command", "arguments": {"command": c}}]}
        for i, c in enumerate(commands)
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [*steps, {"text": "done"}]}))
    return script


def _done(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def _text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


def _approved_by(updates: list[dict], call_id: str) -> str:
    running = [u for u in updates if u.get("toolCallId") == call_id and u.get("status") == "in_progress"]
    return running[0]["_meta"]["tether"]["approvedBy"] if running else ""


class Answers:
    """The user: answers prompts in order (then rejects), and records them."""

    def __init__(self, *answers: str) -> None:
        self.answers, self.prompts = list(answers), []  # type: tuple[list[str], list[dict]]

    async def on_request(self, method: str, params: dict) -> dict:
        assert method == "session/request_permission", method
        self.prompts.append(params)
        option = self.answers.pop(0) if self.answers else "reject_once"
        return {"outcome": {"outcome": "selected", "optionId": option}}

    def asked(self) -> list[str]:
        return [p["toolCall"]["rawInput"]["command"] for p in self.prompts]


@pytest.fixture
def listener():
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_allow_always_says_what_it_stores_and_the_rule_allows_exactly_that(
    spawn_daemon, workspace: Path, tmp_path: Path, listener: int, backend: str
):
    (workspace / "probe.py").write_text(PROBE)
    outside = tmp_path / "escaped.txt"
    probe = f"{sys.executable} probe.py {listener} {outside}"
    script = _script(tmp_path, [probe, f"{sys.executable} probe.py 1 {outside}", "ls src", "git status"])
    user = Answers("allow_always")
    daemon = await spawn_daemon(script=script, env={"TETHER_SANDBOX": backend})
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = [u async for u in session.prompt("probe")]

    program = os.path.basename(sys.executable)
    git = (
        " (but `.git` stays writable here: a hook it plants runs outside the sandbox at your next git command)"
        if backend == "landlock"
        else ""
    )
    said = (
        f"Always allow `{program}` (any arguments) in this workspace: sandboxed, writes only inside the "
        f"workspace and a private temp dir, no network{git}; until you remove it (approval rules)"
    )
    first = user.prompts[0]
    assert [o["name"] for o in first["options"] if o["optionId"] == "allow_always"] == [said]
    assert first["_meta"]["tether"]["allowAlways"] == {
        "text": said,
        "rules": [{"kind": "execute", "pattern": program}],
        "sandboxed": True,
        "network": False,
    }
    # what was stored is what was described
    rules = (await daemon.client.request("_tether/rules/list", {"sessionId": session.id}))["rules"]
    assert [(r["kind"], r["pattern"], r["decision"], r["scope"]) for r in rules if r["source"] == "user"] == [
        ("execute", program, "allow", f"`{program}` (any arguments)")
    ]
    # the rule covered the second run of the program; commands outside its scope still asked
    assert user.asked() == [probe, "ls src", "git status"]
    assert "rule #" in _approved_by(updates, "c1")
    # and what it allowed ran as the text said: no network, no write outside the workspace
    for call in ("c0", "c1"):
        output = _text(_done(updates, call))
        assert "network: refused" in output and "outside: refused" in output, output
    assert not outside.exists()
    assert (workspace / "probe-ran.txt").read_text() == "ran\nran\n"


async def test_a_stock_lsp_client_is_told_what_allow_always_allows(spawn_daemon, workspace: Path, tmp_path: Path):
    daemon = await spawn_daemon(script=_script(tmp_path, ["ls src"]), initialize=False)
    await daemon.client.request(
        "initialize",
        {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {"window": {"showMessage": {}}}},
    )
    daemon.client.peer.notify("initialized", {})
    asked: list[dict] = []

    async def on_request(method: str, params: dict) -> dict:
        assert method == "window/showMessageRequest", method
        asked.append(params)
        return {"title": "Allow always"}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("list")]
    # an action's title is how the answer is read, so the scope is in the message
    assert [a["title"] for a in asked[0]["actions"]] == [
        "Allow once",
        "Allow once with network",
        "Allow always",
        "Reject",
    ]
    assert (
        '"Allow always": Always allow `ls` (any arguments) in this workspace: sandboxed, writes only inside '
        "the workspace and a private temp dir, no network"
    ) in asked[0]["message"]
    rules = (await daemon.client.request("_tether/rules/list", {"sessionId": session.id}))["rules"]
    assert [r["pattern"] for r in rules if r["source"] == "user"] == ["ls"]


LOCAL = [
    "echo checked > notes.txt",
    "make check",
    "cat README.md | wc -l",
    "ls src && cat src/app.py",
]
# (command, what the reason must name): each looks local, and each is asked
NOT_LOCAL = [
    ("curl -s http://127.0.0.1:9/", "`curl` reaches the network"),
    ("ssh localhost true", "`ssh` reaches the network"),
    ("npm publish", "`npm publish` reaches the network"),
    ("git fetch origin", "`git fetch` reaches the network"),
    ("echo x | tee /etc/tether-x", "`tee` writes outside the workspace"),
    ("echo x > ~/.bashrc", "outside the workspace"),
    ("cd .. && rm -rf ws-sibling", "`..` is outside the workspace"),
    ("echo $(id)", "$(id)"),
    ("FOO=1 make check", "assignment"),
    ("env LD_PRELOAD=/tmp/x.so ls", "LD_PRELOAD"),
    ("python3 -c 'print(1)'", "python3"),
    ("node -e '1'", "node"),
    ("cat src/app.py --from=../../etc/passwd", "outside the workspace"),
    ("cp README.md .vscode/settings.json", "`.vscode/settings.json` is a dotfile or in a dot-folder"),
    ("echo 'use flake' > .envrc", "`.envrc` is a dotfile or in a dot-folder"),
]


async def test_auto_edit_runs_sandboxed_local_commands_unasked_and_asks_for_the_rest(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    (workspace / "Makefile").write_text(
        "check:\n\techo make ran > make-ran.txt\nplant:\n\techo 'touch pwned' > .git/hooks/pre-commit\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    commands = [*LOCAL, "make plant", *(c for c, _ in NOT_LOCAL), "git push origin main"]
    user = Answers()
    daemon = await spawn_daemon(
        "--mode", "auto-edit", "--max-steps", "40", script=_script(tmp_path, commands), env={"TETHER_SANDBOX": "bwrap"}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = [u async for u in session.prompt("work")]

    assert user.asked() == [c for c, _ in NOT_LOCAL]
    reasons = [p["_meta"]["tether"]["reason"] for p in user.prompts]
    wrong = [
        r
        for r, (command, why) in zip(reasons, NOT_LOCAL, strict=True)
        if not r.startswith(f"mode auto-edit asks before running `{command}`") or why not in r
    ]
    assert not wrong, wrong
    for i in range(len(LOCAL)):
        assert _done(updates, f"c{i}")["status"] == "completed"
        assert "without asking: it runs in the OS sandbox" in _approved_by(updates, f"c{i}")
    # the workspace's Makefile ran, sandboxed (documented: what the sandbox is for)
    assert (workspace / "notes.txt").read_text() == "checked\n"
    assert (workspace / "make-ran.txt").read_text() == "make ran\n"
    # workspace code runs unasked, but only as the sandbox lets it: `.git` stays read-only
    planted = _done(updates, f"c{len(LOCAL)}")
    assert "without asking" in _approved_by(updates, f"c{len(LOCAL)}") and planted["status"] == "failed"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    # deny rules still win: never run, never asked
    pushed = _done(updates, f"c{len(commands) - 1}")
    assert pushed["status"] == "failed" and "never run" in _text(pushed)
    assert not Path("/etc/tether-x").exists()


@pytest.mark.parametrize("how", ["user", "workspace", "client"])
async def test_sandbox_auto_allow_off_asks_again_and_a_workspace_or_client_cannot_turn_it_on(
    spawn_daemon, workspace: Path, tmp_path: Path, how: str
):
    env = {"TETHER_SANDBOX": "bwrap"}
    (workspace / ".tether").mkdir()
    if how == "workspace":
        (workspace / ".tether" / "config.toml").write_text('sandbox_auto_allow = "off"\n')
    else:  # the user's off; the workspace's (or the client's) "on" is refused
        env["TETHER_SANDBOX_AUTO_ALLOW"] = "off"
        (workspace / ".tether" / "config.toml").write_text('sandbox_auto_allow = "on"\n')
    user = Answers()
    daemon = await spawn_daemon(
        "--mode",
        "auto-edit",
        "--workspace",
        str(workspace),
        script=_script(tmp_path, ["ls src"]),
        env=env,
        initialize=how != "client",
    )
    if how == "client":
        answer = await daemon.client.initialize(initializationOptions={"sandboxAutoAllow": "on"})
        refused = answer["_meta"]["tether"]["configRefused"]
        assert any(
            r["key"] == "sandbox_auto_allow" and "run commands without asking" in r["reason"] for r in refused
        ), refused
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("list")]
    assert user.asked() == ["ls src"]


async def test_under_landlock_commands_are_asked_because_git_stays_writable(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    user = Answers()
    daemon = await spawn_daemon(
        "--mode", "auto-edit", script=_script(tmp_path, ["ls src"]), env={"TETHER_SANDBOX": "landlock"}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("list")]
    assert user.asked() == ["ls src"]
    assert (
        "the landlock sandbox cannot keep `.git` and `.tether/` read-only"
        in user.prompts[0]["_meta"]["tether"]["reason"]
    )
