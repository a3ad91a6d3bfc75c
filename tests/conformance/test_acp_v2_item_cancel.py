"""The official ACP TypeScript SDK's v2 client stops one running tool call (SPEC §12.4).

tests/conformance/ts/v2_item_cancel.mjs approves a `sleep` command, calls the SDK's
`cancelToolCall()` once the call advertises `capabilities.cancel` and the command's
process runs, and reads the turn on to idle; then cancels a finished, a never-run and a
not-cancellable call, and in a second turn stops a command by its terminal. Every line
the daemon wrote is decoded with the v2 types (as test_acp_v2_typescript_sdk.py does).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from test_acp_v2_typescript_sdk import run_v2_client

from daemon_harness import item_cancel_script
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from pathlib import Path


def _run(daemon_env: dict[str, str], workspace: Path) -> dict[str, Any]:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    # durations unique to this run: the other test here (or the v1 one) may run beside it
    script, first, second = item_cancel_script(workspace.parent)
    return run_v2_client(env, workspace, "v2_item_cancel.mjs", script, "--sleeps", f"{first},{second}")


def _final_text(update: dict[str, Any]) -> str:
    return "".join(c["content"]["text"] for c in update.get("content", []) if c["type"] == "content")


def _assert_stopped(run: dict[str, Any], call_id: str, next_reply: str) -> None:
    """The call advertised cancel, its process ran, the cancel was answered, the call
    ended cancelled with no process left, and the turn went on to the model's next reply."""
    assert run["advertised"]["capabilities"] == {"cancel": {}}
    assert run["runningBefore"], "the command's process was never seen running"
    assert run["answer"] == {}
    final = run["final"]
    assert final["status"] == "cancelled" and final["capabilities"] == {}
    assert _final_text(final).startswith("cancelled by the user")  # what the model was told
    assert run["runningAfter"] == [], "a process of the cancelled command outlived it (10 s after)"
    assert run["endedAfterMs"] < 10_000, "the call ran on instead of being stopped"  # the sleep is 30 s
    updates = run["updates"]
    ended = updates.index(final)
    after = [u["content"]["text"] for u in updates[ended:] if u["sessionUpdate"] == "agent_message_chunk"]
    assert after == [next_reply]
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    mine = [u for u in updates if u.get("toolCallId") == call_id]
    assert all(u["status"] != "completed" for u in mine if "status" in u)


def test_a_running_command_is_cancelled_alone_and_the_turn_goes_on(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    summary = _run(daemon_env, workspace)

    assert summary["first"]["sdkSaysCancellable"] and not summary["sdkSaysCancellableAfter"]
    _assert_stopped(summary["first"], "call_sleep", "The check was stopped, so I carried on without it.")
    # a read that ran beside it never advertised cancel
    reads = [u for u in summary["first"]["updates"] if u.get("toolCallId") == "call_read"]
    assert reads and all("capabilities" not in u for u in reads)
    # by its terminal, in the second turn: the terminal is announced as it starts (the
    # command, where it runs, cancellable), so the SDK's cancelTerminal() sends the cancel
    assert summary["second"]["advertised"]["content"] == [{"type": "terminal", "terminalId": "call_again"}]
    terminals = [u for u in summary["second"]["updates"] if u["sessionUpdate"] == "terminal_update"]
    started, ended = terminals[0], terminals[-1]
    assert started["terminalId"] == "call_again" and started["capabilities"] == {"cancel": {}}
    assert "sleep 32." in started["command"] and started["cwd"] == str(workspace)
    assert summary["second"]["updates"].index(started) < summary["second"]["updates"].index(
        summary["second"]["advertised"]
    )
    assert ended["capabilities"] == {} and "exitStatus" in ended
    assert summary["sdkSaysTerminalCancellable"] and not summary["sdkSaysTerminalCancellableAfter"]
    _assert_stopped(summary["second"], "call_again", "Stopped again.")
    for update in summary["wire"]:
        if update["from"] == "daemon" and '"session/update"' in update["line"]:
            convert(json.loads(update["line"])["params"], v2.UpdateSessionNotification, method="session/update")


def test_a_call_that_cannot_be_cancelled_is_refused_with_why(daemon_env: dict[str, str], workspace: Path) -> None:
    summary = _run(daemon_env, workspace)

    for case, why in (
        ("finished", "it has already finished"),
        ("notCancellable", "it cannot be stopped alone"),
        ("unknown", "no tool call with this id ran in this session"),
    ):
        refused = summary[case]
        assert refused["code"] == -32602, refused
        assert why in refused["message"] and summary["sessionId"] in refused["message"], refused
    gone = summary["terminalGone"]
    assert gone["code"] == -32602 and "terminal 'call_again'" in gone["message"]
