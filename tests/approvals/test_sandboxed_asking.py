"""Sandbox-aware asking at the gate (`sandbox_auto_allow`, mode auto-edit): which commands
run unasked, and every spelling that looks local but is not still asks. The real daemon
and sandbox run the same decisions in tests/e2e/test_sandbox_aware_asking.py; this table
is broader. Also: "allow always" stores exactly the rules its option named."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.approvals.sandboxed_asking import RAN_SANDBOXED
from tether.server.permission import permission_params
from tether.store import HistoryStore
from tether_protocol import unstructure

if TYPE_CHECKING:
    from pathlib import Path


class User:
    def __init__(self, *answers: str) -> None:
        self.answers, self.asked = list(answers), []  # type: tuple[list[str], list[str]]

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked.append(reason)
        return AskerAnswer(self.answers.pop(0) if self.answers else "reject_once")


@pytest.fixture
async def store(tmp_path: Path):
    opened = await HistoryStore.open(tmp_path / "h.sqlite3")
    yield opened
    await opened.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    return root


def run(cmd: str, mode: str = "auto-edit", backend: str = "bwrap") -> ApprovalRequest:
    return ApprovalRequest(
        "s",
        "c1",
        "run_command",
        "execute",
        cmd,
        {"command": cmd},
        mode,
        command=cmd,
        cwd=".",
        sandboxed=True,
        sandbox_backend=backend,
    )


UNASKED = [
    "ls -la",
    "npm test",
    "pytest -q",
    "make",
    "make test",
    "cargo test",
    "go test ./...",
    "git status",
    "git diff --stat",
    "python3 script.py",
    "cat README.md | grep x | wc -l",
    "echo hi > notes.txt",
    "ls src && cat src/a.py",
    "timeout 60 npm test",
    "grep -rn def src",
    "ls /dev/null",
    "cd src && ls",
    "ls ./src",
]
ASKED = [
    ("curl -s http://127.0.0.1/", "`curl` reaches the network"),
    ("/usr/bin/curl x", "`curl` reaches the network"),
    ("env curl x", "`curl` reaches the network"),
    ("timeout 5 wget x", "`wget` reaches the network"),
    ("sh -c 'curl x'", "`curl` reaches the network"),
    ("ls | xargs curl", "`curl` reaches the network"),
    ("ssh host true", "`ssh` reaches the network"),
    ("scp a host:b", "`scp` reaches the network"),
    ("git fetch", "`git fetch` reaches the network"),
    ("git clone https://example.com/r", "`git clone` reaches the network"),
    ("npm install", "`npm install` reaches the network"),
    ("npm publish", "`npm publish` reaches the network"),
    ("npx cowsay", "`npx` reaches the network"),
    ("pip install requests", "`pip install` reaches the network"),
    ("python3 -m pip install x", "`python3 -m pip` reaches the network"),
    ("docker run alpine", "`docker` reaches the network"),
    ("echo x | tee /etc/x", "writes outside the workspace"),
    ("echo x > ~/.bashrc", "outside the workspace"),
    ("echo x >> /tmp/log", "outside the workspace"),
    ("cd .. && rm -rf ws", "`..` is outside the workspace"),
    ("rm -rf ../other", "`../other` is outside the workspace"),
    ("cp src/a ~/bin/a", "outside the workspace"),
    ("env FOO=1 make test", "environment set by env"),
    ("cat --file=/etc/shadow", "`--file=/etc/shadow` is outside the workspace"),
    ("git -C /other status", "`/other` is outside the workspace"),
    ("cp x .vscode/settings.json", "dot-folder"),
    ("echo x > .envrc", "dot-folder"),
    ("echo $(id)", "$(id)"),
    ("echo `id`", "id"),
    ("FOO=1 make", "assignment"),
    ("env LD_PRELOAD=/x.so ls", "LD_PRELOAD"),
    ("GIT_SSH_COMMAND='touch p' git status", "GIT_SSH_COMMAND"),
    ("python3 -c 'print(1)'", "python3"),
    ("node -e 1", "node"),
    ("$X", "command position"),
    ("for f in *; do ls $f; done", "for"),
    ("sleep 1 &", "background"),
    ("rm -rf $DIR", "may be built-in rule"),
    ("echo x > .git/hooks/pre-commit", ".git"),
]


@pytest.mark.parametrize("command", UNASKED)
async def test_a_plain_local_command_runs_unasked_in_auto_edit(store, ws: Path, command: str) -> None:
    gate = ApprovalGate(store.rules, workspace=ws, sandbox_auto_allow=True)
    user = User()
    verdict = await gate.decide(run(command), user)
    assert verdict.allowed and not verdict.asked and not user.asked, user.asked
    assert verdict.reason == RAN_SANDBOXED and not verdict.network


@pytest.mark.parametrize(("command", "why"), ASKED)
async def test_what_looks_local_but_is_not_still_asks_and_says_why(store, ws: Path, command: str, why: str) -> None:
    gate = ApprovalGate(store.rules, workspace=ws, sandbox_auto_allow=True)
    user = User()
    verdict = await gate.decide(run(command), user)
    assert not verdict.allowed and verdict.asked
    (reason,) = user.asked
    assert reason.startswith(f"mode auto-edit asks before running `{command}`") and why in reason, reason


async def test_deny_rules_win_and_the_setting_mode_and_backend_bound_it(store, ws: Path) -> None:
    gate = ApprovalGate(store.rules, ("make clean",), workspace=ws, sandbox_auto_allow=True)
    for denied in ("git push", "make clean", "sudo ls"):
        verdict = await gate.decide(run(denied), User())
        assert not verdict.allowed and not verdict.asked and "never run" in verdict.reason
    for request in (run("ls", mode="ask"), run("ls", backend="landlock")):
        user = User()
        assert not (await gate.decide(request, user)).allowed and user.asked
    off = ApprovalGate(store.rules, workspace=ws, sandbox_auto_allow=False)
    user = User()
    assert not (await off.decide(run("ls"), user)).allowed and user.asked == ["mode auto-edit asks before running `ls`"]
    with_network = ApprovalGate(store.rules, network_all=True, workspace=ws, sandbox_auto_allow=True)
    user = User()
    await with_network.decide(run("ls"), user)
    assert "it would run with the network" in user.asked[0]


async def test_allow_always_stores_exactly_the_rules_its_option_named(store, ws: Path) -> None:
    gate = ApprovalGate(store.rules, network_commands=("npm install",), workspace=ws)
    shown: list[dict] = []

    class Shows(User):
        async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
            shown.append(unstructure(permission_params(request, reason)))
            return AskerAnswer("allow_always")

    await gate.decide(run("npm install && ls -la src", mode="ask"), Shows())
    meta = shown[0]["_meta"]["tether"]["allowAlways"]
    name = [o["name"] for o in shown[0]["options"] if o["optionId"] == "allow_always"]
    assert name == [meta["text"]] and meta["rules"] == [
        {"kind": "execute", "pattern": "ls"},
        {"kind": "execute", "pattern": "npm install"},
    ]
    assert meta["text"].startswith("Always allow `ls` (any arguments), `npm install` (any arguments) in this workspace")
    stored = [(r.kind, r.pattern) for r in await gate.rules() if r.id is not None]
    assert stored == [(r["kind"], r["pattern"]) for r in meta["rules"]]
    # inside the scope: unasked; outside it (another program, more than a plain command): asked
    assert (await gate.decide(run("ls /", mode="ask"), User())).allowed
    for outside in ("cat src/a", "ls $(id)", "ls > ~/x"):
        user = User()
        assert not (await gate.decide(run(outside, mode="ask"), user)).allowed and user.asked, outside


async def test_the_option_says_when_a_rule_gets_the_network_or_no_sandbox_applies(store, ws: Path) -> None:
    gate = ApprovalGate(store.rules, network_commands=("npm install",), workspace=ws)
    names: list[str] = []

    class Shows(User):
        async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
            assert request.always is not None
            names.append(request.always.text)
            return AskerAnswer("reject_once")

    await gate.decide(run("npm install", mode="ask"), Shows())
    unsandboxed = run("make", mode="ask")
    unsandboxed.sandboxed = False
    await gate.decide(unsandboxed, Shows())
    await gate.decide(run("ls $(id)", mode="ask"), Shows())
    assert "WITH the network (your network settings)" in names[0]
    assert "commands here run WITHOUT a sandbox, so each is still asked" in names[1]
    assert names[2] == "Allow this once (no rule can cover it: not a plain list of words)"


async def test_under_the_allowlist_an_unasked_command_runs_offline_and_always_names_the_proxy(store, ws: Path) -> None:
    """`network = "allowlist"` gives sandboxed commands the allowed domains through the proxy:
    one run unasked gets no proxy at all (its reason says "no network"), and "allow always"
    says its commands reach the allowed domains."""
    gate = ApprovalGate(store.rules, workspace=ws, sandbox_auto_allow=True, network_proxy=True)
    unasked = await gate.decide(run("ls -la"), User())
    assert unasked.allowed and not unasked.asked and unasked.offline and unasked.reason == RAN_SANDBOXED
    names: list[str] = []

    class Shows(User):
        async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
            assert request.always is not None
            names.append(request.always.text)
            return await super().ask(request, reason)

    assert not (await gate.decide(run("ls -la", mode="ask"), Shows())).allowed
    assert "network only through Tether's proxy to your allowed_domains" in names[0]
    assert "no network" not in names[0]
