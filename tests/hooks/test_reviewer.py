"""The approval reviewer with the scripted provider as the reviewer: it approves, refuses (the
user is asked with its concern), answers garbage or too late (the user is asked), and is never
asked about what the deny rules refuse or what cannot be sandboxed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from hooks_harness import User, approved_by, final, notices, run, write_script

if TYPE_CHECKING:
    from pathlib import Path


def reviewer_says(answer: str, *, delay_ms: int = 0, user: str = "") -> dict:
    reply: dict = {"when": {"purpose": "reviewer"}, "text": answer}
    if user:
        reply["when"]["user"] = user
    if delay_ms:
        reply["delay_ms"] = delay_ms
    return reply


APPROVE = json.dumps({"decision": "approve", "reason": "echo is harmless and the user asked to run the tests"})
CONCERN = json.dumps({"decision": "ask", "reason": "pushing publishes the branch"})


async def start(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, user: User, reply: dict, *, config: str = ""
):
    user_config.write_text('reviewer = "on"\nreviewer_timeout = 2\n' + config)
    daemon = await spawn_daemon(script=write_script(tmp_path, [reply]))
    daemon.client.peer.on_request = user.on_request
    return await daemon.client.new_session(workspace)


async def test_the_reviewer_approves_a_low_risk_requested_call(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user = User()
    # the reviewer's reply matches only when it was shown the conversation and the pending call
    reply = reviewer_says(APPROVE, user=r"(?s)run the tests.*echo all passed")
    session = await start(spawn_daemon, workspace, tmp_path, user_config, user, reply)
    _, updates = await run(session, "run the tests")
    assert user.prompts == []
    assert final(updates, "call_run")["status"] == "completed"
    why = "echo is harmless and the user asked to run the tests"
    assert approved_by(updates, "call_run") == f"allowed by the reviewer: {why}"
    assert f"[the approval reviewer approved `echo all passed`: {why}]" in notices(updates)
    # stored: the turn's run report says who approved the call, and why
    (report,) = (await session.client.request("_tether/session/report", {"sessionId": session.id}))["reports"]
    (call,) = report["steps"][0]["toolCalls"]
    assert call["approvedBy"] == f"allowed by the reviewer: {why}"


@pytest.mark.parametrize(
    ("answer", "delay_ms", "concern"),
    [
        (CONCERN, 0, "pushing publishes the branch"),
        ("Sure, looks fine to me!", 0, "the reviewer's answer was not the JSON it must give, so the user is asked"),
        (json.dumps({"decision": "approve"}), 0, "the reviewer gave no reason, so the user is asked"),
        (
            json.dumps({"decision": "yolo", "reason": "x"}),
            0,
            "the reviewer answered 'yolo' (not approve or ask), so the user is asked",
        ),
        (APPROVE, 5000, "the reviewer did not answer within 2 s"),
    ],
    ids=["concern", "not-json", "no-reason", "odd-decision", "timeout"],
)
async def test_anything_but_a_clear_approval_asks_the_user_with_the_concern(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, answer: str, delay_ms: int, concern: str
):
    user = User("reject_once")
    session = await start(
        spawn_daemon, workspace, tmp_path, user_config, user, reviewer_says(answer, delay_ms=delay_ms)
    )
    turn, updates = await run(session, "run the tests")
    assert turn.stop_reason == "end_turn"
    (prompt,) = user.prompts
    assert prompt["_meta"]["tether"]["reviewer"] == concern
    assert f"[the approval reviewer did not approve `echo all passed`: {concern}]" in notices(updates)
    assert final(updates, "call_run")["status"] == "failed"  # the user rejected it


async def test_the_reviewer_never_approves_a_call_a_deny_rule_refuses(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user = User()
    session = await start(spawn_daemon, workspace, tmp_path, user_config, user, reviewer_says(APPROVE))
    _, updates = await run(session, "push it")  # `git push` is a built-in deny rule
    assert user.prompts == []
    assert final(updates, "call_push")["status"] == "failed"
    assert "approval reviewer" not in notices(updates)  # it was not asked


async def test_the_reviewer_never_approves_a_command_that_cannot_be_sandboxed(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user = User("reject_once")
    session = await start(
        spawn_daemon, workspace, tmp_path, user_config, user, reviewer_says(APPROVE), config='sandbox = "off"\n'
    )
    _, updates = await run(session, "run the tests")
    (prompt,) = user.prompts  # the user is asked, whatever the reviewer would say
    assert "without an OS sandbox" in prompt["_meta"]["tether"]["reason"]
    assert "reviewer" not in prompt["_meta"]["tether"]
    assert "approval reviewer" not in notices(updates)


async def test_the_reviewer_never_approves_what_the_mode_forbids(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user = User()
    user_config.write_text('reviewer = "on"\n')
    daemon = await spawn_daemon("--mode", "read-only", script=write_script(tmp_path, [reviewer_says(APPROVE)]))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "delete src/app.py")
    assert "not allowed in read-only mode" in final(updates, "call_del")["content"][0]["content"]["text"]
    assert (workspace / "src" / "app.py").exists()
    assert user.prompts == [] and "approval reviewer" not in notices(updates)
