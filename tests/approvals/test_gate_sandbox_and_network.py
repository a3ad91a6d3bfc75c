"""The gate's sandbox and network inputs: a command with no OS sandbox is always asked;
which commands get the network; the fifth prompt option, "Allow once, with network"."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.approvals.gate import OPTIONS
from tether.server.permission import acp_options, lsp_actions
from tether.store import HistoryStore
from tether_protocol import unstructure

if TYPE_CHECKING:
    from pathlib import Path


class RecordingUser:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[ApprovalRequest, str]] = []

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked.append((request, reason))
        return AskerAnswer(self.answers.pop(0))


@pytest.fixture
async def store(tmp_path: Path):
    opened = await HistoryStore.open(tmp_path / "h.sqlite3")
    yield opened
    await opened.close()


def run(cmd: str, mode: str = "full-auto", *, sandboxed: bool = True, note: str = "") -> ApprovalRequest:
    return ApprovalRequest(
        "s",
        "c1",
        "run_command",
        "execute",
        f"Run `{cmd}`",
        {"command": cmd},
        mode,
        command=cmd,
        sandboxed=sandboxed,
        sandbox_note=note,
    )


def edit(path: str, mode: str) -> ApprovalRequest:
    return ApprovalRequest("s", "c2", "edit_file", "edit", f"Edit {path}", {"path": path}, mode, rel_paths=[path])


@pytest.mark.parametrize("mode", ["ask", "auto-edit", "full-auto"])
async def test_without_a_sandbox_every_command_is_asked_whatever_the_mode_and_rules(store, mode: str) -> None:
    gate = ApprovalGate(store.rules)
    await gate.add_rule("execute", "ls", "allow")
    user = RecordingUser("reject_once")
    verdict = await gate.decide(run("ls", mode, sandboxed=False, note="Landlock is not available"), user)
    assert not verdict.allowed and verdict.asked
    assert user.asked[0][1] == (
        "commands run without an OS sandbox here (Landlock is not available), so every command is asked"
    )
    allowed = await gate.decide(run("ls", mode, sandboxed=False), RecordingUser("allow_once"))
    assert allowed.allowed and allowed.asked and allowed.reason == "allowed by the user, once"


async def test_without_a_sandbox_deny_rules_and_read_only_still_refuse_and_file_edits_are_unchanged(store) -> None:
    gate = ApprovalGate(store.rules)
    denied = await gate.decide(run("git push", "full-auto", sandboxed=False), RecordingUser())
    assert not denied.allowed and not denied.asked and denied.reason.startswith("refused by built-in rule")
    read_only = await gate.decide(run("ls", "read-only", sandboxed=False), RecordingUser())
    assert not read_only.allowed and not read_only.asked and "read-only mode" in read_only.reason
    assert (await gate.decide(edit("a.py", "full-auto"), RecordingUser())).allowed  # edits never run a command


async def test_network_is_off_unless_a_setting_a_rule_or_the_user_gives_it(store) -> None:
    gate = ApprovalGate(store.rules, network_commands=("npm install", "pip download"))
    assert not (await gate.decide(run("npm test"), RecordingUser())).network
    assert (await gate.decide(run("npm install left-pad"), RecordingUser())).network
    both = await gate.decide(run("npm install && pip download x"), RecordingUser())
    assert both.allowed and both.network
    # every part must be covered, and only a plain command gets it from a rule
    assert not (await gate.decide(run("npm install && curl example.com"), RecordingUser())).network
    assert not (await gate.decide(run("npm install $(cat pkgs)"), RecordingUser("allow_once"))).network
    # a wrapper is covered through what it runs
    assert (await gate.decide(run("timeout 60 npm install"), RecordingUser())).network
    everything = ApprovalGate(store.rules, network_all=True)
    assert (await everything.decide(run("curl example.com"), RecordingUser())).network
    refused = await everything.decide(run("git push"), RecordingUser())
    assert not refused.allowed and not refused.network


async def test_allow_once_with_network(store) -> None:
    gate = ApprovalGate(store.rules)
    user = RecordingUser("allow_once_network", "allow_once")
    verdict = await gate.decide(run("curl example.com", "ask"), user)
    assert verdict.allowed and verdict.network and verdict.reason == "allowed by the user, once, with network"
    assert not user.asked[0][0].network_granted
    plain_once = await gate.decide(run("curl example.com", "ask"), user)
    assert plain_once.allowed and not plain_once.network
    assert [r for r in await gate.rules() if r.id is not None] == []  # "once": no rule


def test_the_fifth_option_is_offered_for_a_sandboxed_command_without_network() -> None:
    assert "allow_once_network" in OPTIONS
    offered = acp_options(run("curl example.com", "ask"), by_name=True)
    assert [o.option_id for o in offered] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
        "allow_once_network",
    ]
    # a client that keys answers by kind (CodeCompanion) gets one option per kind: its
    # "Accept" must not be the network option, the last `allow_once`
    by_kind = acp_options(run("curl example.com", "ask"), by_name=False)
    assert [o.kind for o in by_kind] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert unstructure(offered[-1]) == {
        "optionId": "allow_once_network",
        "name": "Allow once, with network",
        "kind": "allow_once",
    }
    assert [a.title for a in lsp_actions(run("curl x", "ask"))] == [
        "Allow once",
        "Allow once with network",
        "Allow always",
        "Reject",
    ]
    unsandboxed = run("curl example.com", "ask", sandboxed=False)
    granted = run("npm install", "ask")
    granted.network_granted = True
    for request in (unsandboxed, granted, edit("a.py", "ask")):
        assert [o.option_id for o in acp_options(request, by_name=True)] == [
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        ]
        assert [a.title for a in lsp_actions(request)] == ["Allow once", "Allow always", "Reject"]


async def test_the_gate_tells_the_asker_when_the_network_is_already_granted(store) -> None:
    gate = ApprovalGate(store.rules, network_commands=("npm install",))
    user = RecordingUser("allow_once", "allow_once")
    await gate.decide(run("npm install", "ask"), user)
    await gate.decide(run("npm test", "ask"), user)
    assert [request.network_granted for request, _ in user.asked] == [True, False]


async def test_allow_always_on_a_command_that_is_not_plain_stores_no_rule(store) -> None:
    gate = ApprovalGate(store.rules)
    verdict = await gate.decide(run("for f in *; do wc -l $f; done", "ask"), RecordingUser("allow_always"))
    assert verdict.allowed and "no rule" in verdict.reason
    assert [r for r in await gate.rules() if r.id is not None] == []


async def test_an_allow_rule_does_not_approve_a_part_that_may_be_denied(store) -> None:
    gate = ApprovalGate(store.rules)
    await gate.add_rule("execute", "git -c alias.p=push p", "allow")  # a git alias may be `push`
    user = RecordingUser("reject_once")
    verdict = await gate.decide(run("git -c alias.p=push p", "ask"), user)
    assert not verdict.allowed and user.asked


async def test_read_only_mode_asks_before_a_sandboxed_command_and_refuses_everything_else(store) -> None:
    gate = ApprovalGate(store.rules)
    user = RecordingUser("allow_once")
    verdict = await gate.decide(run("pytest -q", "read-only"), user)
    assert verdict.allowed and verdict.asked
    assert user.asked[0][1] == (
        "mode read-only asks before running `pytest -q` (in a read-only sandbox: nothing in the workspace can change)"
    )
    # an allow rule covers a plain command here too (it cannot write either way)
    await gate.add_rule("execute", "ls", "allow")
    assert (await gate.decide(run("ls -la", "read-only"), RecordingUser())).allowed
    # deny rules, file changes and unsandboxed commands are still refused, unasked
    for request in (run("git push", "read-only"), edit("x.py", "read-only"), run("ls", "read-only", sandboxed=False)):
        refused = await gate.decide(request, RecordingUser())
        assert not refused.allowed and not refused.asked


def bwrap_run(cmd: str) -> ApprovalRequest:
    request = run(cmd, "ask")
    request.sandbox_backend = "bwrap"
    return request


async def test_an_always_rule_keeps_the_network_it_was_granted_under(store) -> None:
    """The rule stores how the command ran when it was granted; a gate whose settings give the
    command more network (a `network_commands` entry, more proxy domains) asks again, and says why."""
    offline = ApprovalGate(store.rules, network_proxy=True, allowed_domains=("pypi.org",))
    granted = await offline.decide(bwrap_run("make lint"), RecordingUser("allow_always"))
    assert granted.allowed and [r.network.stored() for r in await offline.rules() if r.id] == ["allowlist pypi.org"]
    same = await ApprovalGate(store.rules, network_proxy=True, allowed_domains=("pypi.org",)).decide(
        bwrap_run("make lint -j2"), RecordingUser()
    )
    assert same.allowed and same.reason == "allowed by rule #1: allow `make lint`"
    wider = [
        ApprovalGate(store.rules, network_proxy=True, allowed_domains=("pypi.org", "evil.test")),
        ApprovalGate(
            store.rules, network_proxy=True, allowed_domains=("pypi.org",), network_commands=("make lint -> evil.test",)
        ),
        ApprovalGate(store.rules, network_commands=("make",)),
    ]
    for gate in wider:
        user = RecordingUser("reject_once")
        assert not (await gate.decide(bwrap_run("make lint"), user)).allowed
        assert (
            "rule #1: allow `make lint` was granted with network only through Tether's proxy to pypi.org"
            in (user.asked[0][1])
        ), user.asked[0][1]
    # under Landlock the proxy does not run: no network, less than the rule was granted
    landlock = run("make lint", "ask")
    landlock.sandbox_backend = "landlock"
    assert (await ApprovalGate(store.rules, network_proxy=True).decide(landlock, RecordingUser())).allowed
    # granted again with the network: the same words now carry the newer answer's condition
    online = ApprovalGate(store.rules, network_commands=("make",))
    assert (await online.decide(bwrap_run("make lint"), RecordingUser("allow_always"))).allowed
    assert (await ApprovalGate(store.rules, network_all=True).decide(bwrap_run("make lint"), RecordingUser())).allowed
