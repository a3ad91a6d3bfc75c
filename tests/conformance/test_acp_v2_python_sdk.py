"""The official ACP Python SDK's v2 client drives `tether acp` (issue 32, item 4).

tests/conformance/py/v2_turn.py runs `acp.experimental.v2` of agent-client-protocol
1.0.0rc3, a pre-release that tests/conformance/install-acp-python-v2 puts in .cache/ (it
drops 0.12's v1 API, so the v1 tests keep 0.12.1 from the test extra and the driver alone
has 1.0.0rc3 first on its sys.path). The client runs an edit whose permission its
`request_permission` handler allows, sends a keyed prompt while that turn waits (held, and
answered at its insertion; its turn runs a command, allowed too, whose output the client
gets as terminal chunks, and a sub-agent with writes, a child session whose own command is
asked on the child's id) and retries it while held and after both turns; then a new daemon
resumes the session with `replayFrom: {type: "start"}` through the SDK's `resume_session`.

Every line the daemon wrote is checked twice: decoded with the Preview's types
(`tether_protocol.acp_v2`, from `schema.unstable.json` of the TS SDK 2.4.0): a known update
kind, and nothing the Preview does not name (the types give the line back whole); and parsed
by the SDK's own adapters, which must accept it and change nothing, dropping only fields its
older schema (v2.0.0-alpha.5) does not have. One rejection is the SDK's own bug and is
allowed by name (`_rc3_crashes_on`): it crashes on a `subagent_update` carrying a `state`.
Every line the SDK sent is decoded with the Preview's types as well (it names all but the
RFD's `idempotencyKey`).
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_acp_v2_resume import _fold
from test_acp_v2_typescript_sdk import REQUESTS
from test_acp_v2_typescript_sdk import RESULTS as TS_RESULTS

from daemon_harness import EXAMPLES
from tether_protocol.acp_v2 import OpenUnion, convert, encode
from tether_protocol.acp_v2 import schema_types as v2

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "py" / "v2_turn.py"
SDK_VERSION = "1.0.0rc3"
SDK = ROOT / ".cache" / f"acp-python-sdk-{SDK_VERSION}"
SETUP = "run `sh tests/install-deps` (it runs tests/conformance/install-acp-python-v2)"
RESULTS: dict[str, type[Any]] = {**TS_RESULTS, "session/resume": v2.ResumeSessionResponse}

# What 1.0.0rc3's models drop because schema v2.0.0-alpha.5 has no such field, though the
# Preview has (paths with list indices as []): a command's `type` discriminator, and the
# `capabilities` (`cancel`) of a running call or terminal
OLDER_IN_THE_SDK = {".update.availableCommands[].type", ".update.capabilities", ".update.capabilities.cancel"}


def run_driver(env: dict[str, str], workspace: Path, script: str, *driver_args: str) -> dict[str, Any]:
    """The driver (with `driver_args`) against `tether acp` with the scripted provider's
    `examples/<script>`; its JSON summary."""
    if not (SDK / ".installed").is_file():
        pytest.fail(f"{SDK} is missing (the ACP Python SDK {SDK_VERSION}): {SETUP}")
    daemon = [sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(EXAMPLES / script)]
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "--sdk", str(SDK), *driver_args, "--workspace", str(workspace), "--", *daemon],
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"the driver exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    summary: dict[str, Any] = json.loads(proc.stdout)
    assert summary["ok"], f"{summary.get('error')}\n--- stderr ---\n{proc.stderr}"
    assert summary["sdkVersion"] == SDK_VERSION
    assert summary["exitCode"] == 0, proc.stderr  # the daemon ends on stdin's end
    return summary


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its path (`.a[0].b`); empty objects and lists are leaves."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}").items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()}
    return {path: value}


def _preview_decoded(message: dict[str, Any], asked: dict[object, str]) -> tuple[Any, Any]:
    """The message's body and the Preview's typed form of it."""
    if "result" in message:
        method = asked[message["id"]]
        return message["result"], convert(message["result"], RESULTS[method], method=method)
    if message["method"] == "session/update":
        note = convert(message["params"], v2.UpdateSessionNotification, method="session/update")
        # a kind the schema names, or the RFD's replay_complete (the Preview's open union takes it)
        assert not isinstance(note.update.value, dict) or note.update.tag == "replay_complete", message
        return message["params"], note
    request = convert(message["params"], REQUESTS[message["method"]], method=message["method"])
    assert isinstance(request.subject, OpenUnion) and not isinstance(request.subject.value, dict)
    return message["params"], request


def _rc3_crashes_on(message: dict[str, Any], error: str) -> bool:
    """1.0.0rc3's one rejection, its own bug: a `subagent_update` whose `state` is the
    Preview's `StateUpdate` object (the child's state mirrored on the parent). Its catch-all
    guard (`_reject_malformed_known_variant`) looks the `state` value up in a set of tags,
    which raises `TypeError: unhashable type: 'dict'` instead of a validation error; the
    router logs it and drops the update, so the client never sees the mirror."""
    update = message.get("params", {}).get("update", {})
    return (
        update.get("sessionUpdate") == "subagent_update"
        and isinstance(update.get("state"), dict)
        and "unhashable type: 'dict'" in error
    )


def check_daemon_lines(summary: dict[str, Any]) -> list[str]:
    """Each daemon line against the Preview's types and the SDK's parse (see the module's
    docstring); the `sessionUpdate` kinds seen."""
    wire = summary["wire"]
    sent = [json.loads(e["line"]) for e in wire if e["from"] == "client"]
    asked = {m["id"]: m["method"] for m in sent if "method" in m and "id" in m}
    assert not [m for m in sent if "error" in m], "the SDK answered the daemon with an error"
    daemon_lines = [e["line"] for e in wire if e["from"] == "daemon"]
    assert [p["line"] for p in summary["sdkParsed"]] == daemon_lines
    kinds, crashes = [], 0
    for parsed in summary["sdkParsed"]:
        message = json.loads(parsed["line"])
        assert "error" not in message, f"the daemon answered an error: {parsed['line']}"
        body, typed = _preview_decoded(message, asked)
        raw = _leaves(body)
        assert _leaves(msgspec.json.decode(encode(typed))) == raw, (
            f"a field the Preview does not name: {parsed['line']}"
        )
        if message.get("method") == "session/update":
            kinds.append(message["params"]["update"]["sessionUpdate"])
        if "sdkError" in parsed:
            assert _rc3_crashes_on(message, parsed["sdkError"]), (
                f"the SDK rejects {parsed['line']}: {parsed['sdkError']}"
            )
            crashes += 1
            continue
        kept = _leaves(parsed["sdk"])
        changed = {k: (v, kept[k]) for k, v in raw.items() if k in kept and kept[k] != v}
        dropped = {re.sub(r"\[\d+\]", "[]", k) for k in raw if k not in kept}
        assert not changed, f"the SDK changed {changed} in {parsed['line']}"
        assert dropped <= OLDER_IN_THE_SDK, f"the SDK drops {dropped - OLDER_IN_THE_SDK} of {parsed['line']}"
    # what the SDK logged: those crashes only, one each (a message it could not route)
    logged = summary["sdkErrors"]
    assert len(logged) == crashes and all("unhashable type: 'dict'" in record for record in logged), logged
    return kinds


CLIENT_PARAMS: dict[str, type[Any]] = {
    "initialize": v2.InitializeRequest,
    "session/new": v2.NewSessionRequest,
    "session/prompt": v2.PromptRequest,
    "session/list": v2.ListSessionsRequest,
    "session/close": v2.CloseSessionRequest,
    "session/resume": v2.ResumeSessionRequest,
}


def check_client_lines(summary: dict[str, Any]) -> None:
    """What the SDK sent, decoded with the Preview's types too: nothing the Preview does not
    name but the RFD's `idempotencyKey` on a prompt."""
    for entry in summary["wire"]:
        if entry["from"] != "client":
            continue
        message = json.loads(entry["line"])
        if "method" in message:
            body = message["params"]
            typed = convert(body, CLIENT_PARAMS[message["method"]], method=message["method"])
        else:  # the answer to a permission request
            body = message["result"]
            typed = convert(body, v2.RequestPermissionResponse, method="session/request_permission")
        unknown = set(_leaves(body)) - set(_leaves(msgspec.json.decode(encode(typed))))
        assert unknown <= {".idempotencyKey"}, f"{unknown} of {entry['line']}"


def _answer_index(wire: list[dict[str, str]], request_id: int) -> int:
    return next(
        i
        for i, e in enumerate(wire)
        if e["from"] == "daemon"
        and json.loads(e["line"]).get("id") == request_id
        and "method" not in json.loads(e["line"])
    )


def _update_index(wire: list[dict[str, str]], state: str, nth: int) -> int:
    found = [
        i
        for i, e in enumerate(wire)
        if e["from"] == "daemon" and json.loads(e["line"]).get("params", {}).get("update", {}).get("state") == state
    ]
    return found[nth]


def _on(updates: list[dict[str, Any]], session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    """The updates the SDK delivered for `session_id` (of `kind`)."""
    return [u for u in updates if u["session"] == session_id and kind in (None, u["sessionUpdate"])]


def _check_the_turns(summary: dict[str, Any], workspace: Path) -> None:
    assert summary["initialize"]["protocolVersion"] == 2 and summary["initialize"]["info"]["name"] == "tether"
    updates = _on(summary["updates"], summary["sessionId"])
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    # the second turn also asks for its sub-agent (with writes); while the child's own ask waits,
    # the parent is `requires_action` too (its work waits on it), then `running` again
    assert states == [
        "running",
        "requires_action",
        "running",
        "idle",
        "running",
        "requires_action",
        "running",
        "requires_action",
        "running",
        "requires_action",
        "running",
        "idle",
    ], states
    assert [u["stopReason"] for u in updates if u.get("state") == "idle"] == ["end_turn", "end_turn"]
    # the permissions, through the SDK's handler, about the calls it saw: the edit, the command
    edit, command, delegate, _child = summary["permissionRequests"]
    assert edit["title"] == "Edit README.md" and edit["subject"]["type"] == "tool_call"
    assert edit["subject"]["toolCall"]["toolCallId"] == "call_edit"
    assert edit["subject"]["toolCall"]["content"][0]["changes"] == [
        {"operation": "modify", "path": str(workspace / "README.md")}
    ]
    readme = (workspace / "README.md").read_text()
    assert "Hello from the Python SDK's v2 client." in readme
    assert command["title"] == "head -n 3 README.md" and command["subject"]["toolCall"]["toolCallId"] == "call_head"
    assert delegate["subject"]["toolCall"]["toolCallId"] == "call_delegate"
    # the command's output as the SDK delivered it: base64 chunks of its terminal, then its exit
    chunks = [
        u["data"] for u in updates if u["sessionUpdate"] == "terminal_output_chunk" and u["terminalId"] == "call_head"
    ]
    assert b"".join(base64.b64decode(c) for c in chunks).decode() == readme
    (ended,) = [u for u in updates if u["sessionUpdate"] == "terminal_update" and "exitStatus" in u]
    assert ended["terminalId"] == "call_head" and ended["exitStatus"]["exitCode"] == 0
    # the keyed prompt was held while the first turn waited, and answered at its insertion
    first, held = summary["first"]["messageId"], summary["held"]["messageId"]
    assert not summary["heldBeforeRelease"]
    # the retry was sent while the first turn waited: before the permission's answer
    keyed = [i for i, e in enumerate(summary["wire"]) if e["from"] == "client" and '"idempotencyKey"' in e["line"]]
    allowed = next(i for i, e in enumerate(summary["wire"]) if e["from"] == "client" and '"outcome"' in e["line"])
    assert keyed[1] < allowed < keyed[2]
    held_request = next(json.loads(e["line"]) for e in summary["wire"] if '"idempotencyKey"' in e["line"])
    assert _answer_index(summary["wire"], held_request["id"]) > _update_index(summary["wire"], "idle", 0)
    users = [u for u in updates if u["sessionUpdate"] == "user_message"]
    assert [u["messageId"] for u in users] == [first, held] and first != held
    assert users[1]["content"] == [{"type": "text", "text": "then summarise it"}]
    # the retries: the original messageId, no second insertion, no third turn
    assert summary["retryHeld"] == summary["held"] and summary["retryAfter"] == summary["held"]
    after = summary["updates"][summary["updatesAtIdle"] :]
    assert not [u for u in after if u["sessionUpdate"] in ("user_message", "state_update")], after
    text = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert text == (
        "Reading it first.Editing the greeting.Done: the greeting is edited."
        "Checking the file.A sub-agent counts its lines.The README now greets the Python SDK's v2 client."
    )
    assert [s["sessionId"] for s in summary["list"]["sessions"]] == [summary["sessionId"]]


def _check_the_subagent(summary: dict[str, Any]) -> None:
    """The `delegate` call's sub-agent as a child session: announced on the parent first,
    its turn on its own id, its command's permission asked (and answered) on its id."""
    everything, parent = summary["updates"], summary["sessionId"]
    (announced,) = _on(everything, parent, "subagent_update")  # the mirrors of its state: see _rc3_crashes_on
    child = announced["sessionId"]
    assert announced["title"] == "↳ Count the lines of README.md." and announced["capabilities"] == {"cancel": {}}
    assert announced["_meta"]["tether"]["parentCallId"] == "call_delegate"
    assert everything.index(announced) < everything.index(_on(everything, child)[0])
    assert [u["state"] for u in _on(everything, child, "state_update")] == [
        "running",
        "requires_action",
        "running",
        "idle",
    ]
    (task,) = _on(everything, child, "user_message")
    assert task["content"] == [{"type": "text", "text": "Count the lines of README.md."}]
    assert "".join(u["content"]["text"] for u in _on(everything, child, "agent_message_chunk")) == (
        "Counting.README.md has 3 lines."
    )
    asked = summary["permissionRequests"][-1]
    assert asked["sessionId"] == child and asked["title"] == "wc -l README.md"
    assert asked["subject"]["toolCall"]["toolCallId"] == "call_count"
    count = [u for u in _on(everything, child, "tool_call_update") if u["toolCallId"] == "call_count"]
    assert count[-1]["status"] == "completed"
    (done,) = [
        u
        for u in _on(everything, parent, "tool_call_update")
        if u["toolCallId"] == "call_delegate" and u.get("status") == "completed"
    ]
    assert done["content"][0]["content"]["text"].startswith("README.md has 3 lines.")


def _check_the_replay(live: dict[str, Any], back: dict[str, Any]) -> None:
    """The resumed session as the SDK delivered it: the history under the live ids (two
    prompts: the retries inserted nothing), `replay_complete`, the state, then the answer."""
    parent = live["sessionId"]
    # (the slash command list follows the answer, racing the driver's end: no part of the replay)
    replayed = [
        {k: v for k, v in u.items() if k != "session"}
        for u in _on(back["updates"], parent)
        if u["sessionUpdate"] != "available_commands_update"
    ]
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds[-2:] == ["replay_complete", "state_update"] and kinds.count("replay_complete") == 1, kinds
    assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    messages, calls = _fold(replayed[:-2])
    assert messages == _fold(_on(live["updates"], parent))[0]
    # the sub-agent after its call, as live: announced ended (on the wire: the SDK drops a
    # `subagent_update` with a `state`, `_rc3_crashes_on`), then its own messages on its id
    lines = [json.loads(e["line"]) for e in back["wire"] if e["from"] == "daemon"]
    (announced,) = [
        m["params"]["update"]
        for m in lines
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "subagent_update"
    ]
    assert announced["state"] == {"state": "idle", "stopReason": "end_turn"}
    child = announced["sessionId"]
    assert _fold(_on(back["updates"], child))[0] == _fold(_on(live["updates"], child))[0]
    assert [m for m, (kind, _) in messages.items() if kind == "user_message"] == [
        live["first"]["messageId"],
        live["held"]["messageId"],
    ]
    assert {c: (f["title"], f["status"]) for c, f in calls.items()} == {
        "call_read": ("Read README.md", "completed"),
        "call_edit": ("Edit README.md", "completed"),
        "call_head": ("head -n 3 README.md", "completed"),
        "call_delegate": ("Delegate (with writes): Count the lines of README.md.", "completed"),
    }
    # on the wire: the answer after replay_complete and the state
    resume_id = next(json.loads(e["line"])["id"] for e in back["wire"] if '"session/resume"' in e["line"])
    assert _answer_index(back["wire"], resume_id) > _update_index(back["wire"], "idle", 0)
    assert {o["configId"] for o in back["resumed"]["configOptions"]} == {"model", "mode"}


@pytest.mark.timeout(150)  # two daemons, one after the other (each driver run is given 60 s)
def test_the_v2_client_runs_permissions_a_held_prompt_its_retries_a_subagent_and_resumes(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    live = run_driver(daemon_env, workspace, "v2-python-sdk.json")
    _check_the_turns(live, workspace)
    _check_the_subagent(live)
    # a new daemon: the SDK's resume_session with replayFrom {type: "start"}
    back = run_driver(daemon_env, workspace, "v2-python-sdk.json", "--resume", live["sessionId"])
    _check_the_replay(live, back)

    kinds = check_daemon_lines(live) + check_daemon_lines(back)
    check_client_lines(live)
    check_client_lines(back)
    assert {
        "user_message",
        "agent_message_chunk",
        "state_update",
        "tool_call_update",
        "terminal_output_chunk",
        "terminal_update",
        "available_commands_update",
        "session_info_update",
        "usage_update",
        "agent_message",
        "replay_complete",
        "subagent_update",
    } <= set(kinds)
