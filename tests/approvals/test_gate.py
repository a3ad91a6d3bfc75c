"""The approval gate's decision order, with a real rule store and a scripted user."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.store import HistoryStore

if TYPE_CHECKING:
    from pathlib import Path


class ScriptedUser:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked.append((request.title, reason))
        return AskerAnswer(self.answers.pop(0))


@pytest.fixture
async def gate(tmp_path: Path):
    store = await HistoryStore.open(tmp_path / "h.sqlite3")
    yield ApprovalGate(store.rules, deny_commands=("npm publish",))
    await store.close()


def command(cmd: str, mode: str = "ask", *, sandboxed: bool = True) -> ApprovalRequest:
    return ApprovalRequest(
        "s", "c1", "run_command", "execute", f"Run `{cmd}`", {"command": cmd}, mode, command=cmd, sandboxed=sandboxed
    )


def edit(path: str, mode: str = "ask") -> ApprovalRequest:
    return ApprovalRequest("s", "c2", "edit_file", "edit", f"Edit {path}", {"path": path}, mode, rel_paths=[path])


async def test_ask_mode_asks_and_allow_always_creates_a_rule_used_next_time(gate: ApprovalGate):
    user = ScriptedUser("allow_always")
    first = await gate.decide(command("npm test -- -k slow"), user)
    assert first.allowed and first.asked and "always" in first.reason
    assert user.asked[0][1] == "mode ask asks before running `npm test -- -k slow`"
    again = await gate.decide(command("npm test"), ScriptedUser())
    assert again.allowed and not again.asked and "rule #" in again.reason and "`npm test`" in again.reason
    assert [r.pattern for r in await gate.rules() if r.id is not None] == ["npm test"]


async def test_reject_once_and_reject_always(gate: ApprovalGate):
    rejected = await gate.decide(edit("src/a.py"), ScriptedUser("reject_once"))
    assert not rejected.allowed and "the user rejected editing src/a.py" in rejected.reason
    assert "do not retry" in rejected.reason
    await gate.decide(edit("src/a.py"), ScriptedUser("reject_always"))
    silent = await gate.decide(edit("src/b.py"), ScriptedUser())
    assert not silent.allowed and not silent.asked and "deny edit /src/**" in silent.reason


async def test_modes(gate: ApprovalGate):
    assert not (await gate.decide(edit("x.py", "read-only"), ScriptedUser())).allowed
    assert (await gate.decide(edit("x.py", "auto-edit"), ScriptedUser())).reason == "allowed by mode auto-edit"
    user = ScriptedUser("reject_once")
    assert not (await gate.decide(command("make", "auto-edit"), user)).allowed and user.asked
    assert (await gate.decide(command("make", "full-auto"), ScriptedUser())).allowed


async def test_deny_rules_win_over_full_auto_and_allow_rules(gate: ApprovalGate):
    await gate.add_rule("execute", "git", "allow")
    for cmd in ("git push origin main", "npm publish", "make && git push"):
        verdict = await gate.decide(command(cmd, "full-auto"), ScriptedUser())
        assert not verdict.allowed and "never run" in verdict.reason, cmd
    assert not (await gate.decide(edit(".git/config", "full-auto"), ScriptedUser())).allowed


async def test_a_client_without_prompts_falls_back_to_the_mode(gate: ApprovalGate):
    verdict = await gate.decide(command("make"), ScriptedUser("unavailable"))
    assert not verdict.allowed and "cannot show approval prompts" in verdict.reason
    assert "auto-edit or full-auto" in verdict.reason


async def test_rules_can_be_listed_and_removed(gate: ApprovalGate):
    rule = await gate.add_rule("execute", "cargo build", "allow")
    assert await gate.remove_rule(rule.id)
    assert all(r.pattern != "cargo build" for r in await gate.rules())
    user = ScriptedUser("reject_once")
    assert not (await gate.decide(command("cargo build"), user)).allowed and user.asked
