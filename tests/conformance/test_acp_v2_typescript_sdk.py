"""The official ACP TypeScript SDK's v2 client drives `tether acp` through a v2 text turn.

tests/conformance/ts/v2_turn.mjs (`@agentclientprotocol/sdk/experimental/v2`, 2.4.0) sends
`initialize` with `protocolVersion: 2`, `session/new`, a prompt whose edit asks permission
(allowed), reads the session's updates until idle, then `session/list` and `session/close`;
it records every line both ways. Here each line the daemon wrote is decoded with the v2
types generated from the Preview's `schema.unstable.json` (`tether_protocol.acp_v2`,
msgspec: jsonschema is not a dependency), and every update must be a kind the schema
names (its open union would also take a v1 `tool_call`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon_harness import EXAMPLES
from tether_protocol.acp_v2 import OpenUnion, convert
from tether_protocol.acp_v2 import schema_types as v2

TS = Path(__file__).resolve().parent / "ts"
SDK_PACKAGE = TS / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
SETUP = "run `sh tests/install-deps` (it runs npm ci --prefix tests/conformance/ts)"

RESULTS: dict[str, type[Any]] = {
    "initialize": v2.InitializeResponse,
    "session/new": v2.NewSessionResponse,
    "session/prompt": v2.PromptResponse,
    "session/list": v2.ListSessionsResponse,
    "session/close": v2.CloseSessionResponse,
    "tool_call/cancel": v2.CancelToolCallResponse,
    "terminal/cancel": v2.CancelTerminalResponse,
}
REQUESTS: dict[str, type[Any]] = {
    "session/request_permission": v2.RequestPermissionRequest,
    "elicitation/create": v2.CreateElicitationRequest,
}


def run_v2_client(
    env: dict[str, str],
    workspace: Path,
    client: str,
    script: str | Path,
    *client_args: str,
) -> dict[str, Any]:
    """Run `ts/<client>` (with `client_args`) against `tether acp` with the scripted
    provider's `examples/<script>` (or the script at that path); its JSON summary (what it
    saw, and every line both ways)."""
    node = shutil.which("node", path=env["PATH"])
    if node is None:
        pytest.fail(f"node is not on PATH: this test needs Node.js 20+ and the ACP SDK ({SETUP})")
    if not SDK_PACKAGE.is_file():
        pytest.fail(f"tests/conformance/ts/node_modules is missing the ACP TypeScript SDK: {SETUP}")
    # (an absolute `script` path stays itself under EXAMPLES /)
    daemon = [sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(EXAMPLES / script)]
    proc = subprocess.run(
        [node, str(TS / client), *client_args, "--workspace", str(workspace), "--", *daemon],
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"{client} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    summary: dict[str, Any] = json.loads(proc.stdout)
    assert summary["ok"], f"{summary.get('error')}\n--- stderr ---\n{proc.stderr}"
    return summary


def _run_v2_turn(env: dict[str, str], workspace: Path) -> dict[str, Any]:
    return run_v2_client(env, workspace, "v2_turn.mjs", "v2-turn.json")


def _validate_daemon_lines(wire: list[dict[str, str]]) -> list[str]:
    """Decode every line the daemon wrote with the v2 types; the `sessionUpdate` kinds seen."""
    asked: dict[object, str] = {}
    kinds: list[str] = []
    for entry in wire:
        message = json.loads(entry["line"])
        if entry["from"] == "client":
            if "method" in message and "id" in message:
                asked[message["id"]] = message["method"]
            continue
        assert "error" not in message, f"the daemon answered an error: {entry['line']}"
        if "result" in message:
            method = asked[message["id"]]
            convert(message["result"], RESULTS[method], method=method)
        elif message.get("method") == "session/update":
            note = convert(message["params"], v2.UpdateSessionNotification, method="session/update")
            assert not isinstance(note.update.value, dict), f"not a v2 update kind: {entry['line']}"
            kinds.append(note.update.tag)
        else:
            request = convert(message["params"], REQUESTS[message["method"]], method=message["method"])
            known = request.subject if message["method"] == "session/request_permission" else request
            assert isinstance(known, OpenUnion) and not isinstance(known.value, dict)
    return kinds


def test_official_v2_client_runs_a_turn_with_an_approval(daemon_env: dict[str, str], workspace: Path) -> None:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    summary = _run_v2_turn(env, workspace)

    assert summary["initialize"]["protocolVersion"] == 2
    assert summary["initialize"]["info"]["name"] == "tether"
    message_id = summary["promptAnswer"]["messageId"]
    updates = summary["updates"]
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"], states
    assert updates[-1]["stopReason"] == "end_turn"
    # the prompt is shown under the id the request was answered with; the steps' messages
    # have ids of their own, one per step, and the chunks of a step share it
    users = [u for u in updates if u["sessionUpdate"] == "user_message"]
    assert [u["messageId"] for u in users] == [message_id]
    assert users[0]["content"] == [{"type": "text", "text": "edit the readme, please"}]
    step_ids = [u["messageId"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(set(step_ids)) == 3 and message_id not in step_ids
    assert summary["text"] == "Reading it first.Editing.Done: the greeting is edited."
    # the permission request in v2's shape, about the edit the user saw as a tool call
    (asked,) = summary["permissionRequests"]
    assert asked["title"] == "Edit README.md" and asked["subject"]["type"] == "tool_call"
    assert asked["subject"]["toolCall"]["toolCallId"] == "call_edit"
    assert asked["subject"]["toolCall"]["content"][0]["changes"] == [
        {"operation": "modify", "path": str(workspace / "README.md")}
    ]
    first_of_call = next(u for u in updates if u.get("toolCallId") == "call_edit")
    assert first_of_call["sessionUpdate"] == "tool_call_update" and first_of_call["title"]
    assert "Hello, edited over ACP v2." in summary["readme"]  # the allowed edit ran
    assert [s["sessionId"] for s in summary["list"]["sessions"]] == [summary["sessionId"]]

    kinds = _validate_daemon_lines(summary["wire"])
    assert {"user_message", "agent_message_chunk", "state_update", "tool_call_update"} <= set(kinds)
    assert "tool_call" not in kinds


def test_a_v1_client_learns_that_v2_is_offered(daemon_env: dict[str, str], workspace: Path) -> None:
    """A v1 `initialize` (and one with a version Tether does not speak) keeps the v1 answer,
    which lists the versions under `_meta.tether` so an editor can choose before connecting."""
    for asked in (1, 3):
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": asked, "clientCapabilities": {}},
            }
        )
        proc = subprocess.run(
            [sys.executable, "-m", "tether", "acp"],
            input=line + "\n",
            env=daemon_env,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        result = json.loads(proc.stdout.splitlines()[0])["result"]
        assert result["protocolVersion"] == 1 and "agentInfo" in result and "info" not in result
        assert result["_meta"]["tether"]["protocolVersions"] == [1, 2]
