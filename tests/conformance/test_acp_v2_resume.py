"""ACP v2 `session/resume` with replay (SPEC §12), driven by the official TypeScript SDK's v2 client.

tests/conformance/ts/v2_resume.mjs runs a turn with a read and an approved edit on one daemon,
closes it, and a new daemon resumes the stored session: `session/load` (v2 removed it), a cursor
Tether does not know, `replayFrom: {type: "start"}`, then a resume without replay. Every line the
second daemon wrote is decoded with the generated v2 types; the replay, folded as a v2 client folds
upserts and chunks, equals what the live turn showed, under the same message ids.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from test_acp_v2_typescript_sdk import run_v2_client

from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from pathlib import Path

RESULTS: dict[str, type[Any]] = {
    "initialize": v2.InitializeResponse,
    "session/resume": v2.ResumeSessionResponse,
}


def _fold(updates: list[dict[str, Any]]) -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, Any]]]:
    """What a v2 client holds after `updates`: each message's kind and text (chunks append,
    a whole message replaces), each tool call's fields (upserts: a field replaces)."""
    messages: dict[str, tuple[str, str]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for u in updates:
        kind = u["sessionUpdate"]
        if kind.endswith("_chunk") and "messageId" in u:
            whose = kind.removesuffix("_chunk")
            messages[u["messageId"]] = (whose, messages.get(u["messageId"], (whose, ""))[1] + u["content"]["text"])
        elif kind in ("user_message", "agent_message", "agent_thought"):
            messages[u["messageId"]] = (kind, "".join(block["text"] for block in u["content"]))
        elif kind == "tool_call_update":
            calls.setdefault(u["toolCallId"], {}).update(
                {k: v for k, v in u.items() if k not in ("sessionUpdate", "_meta")}
            )
    return messages, calls


def _daemon_lines(wire: list[dict[str, str]]) -> list[tuple[str, dict[str, Any]]]:
    """Each line the daemon wrote, decoded with the v2 types, with the method it answers
    ("" for a notification); errors are returned as they came."""
    asked: dict[object, str] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in wire:
        message = json.loads(entry["line"])
        if entry["from"] == "client":
            if "method" in message and "id" in message:
                asked[message["id"]] = message["method"]
            continue
        method = asked.get(message.get("id"), "") if "method" not in message else ""
        if "result" in message:
            convert(message["result"], RESULTS[method], method=method)
        elif message.get("method") == "session/update":
            note = convert(message["params"], v2.UpdateSessionNotification, method="session/update")
            # a kind the schema names, or the RFD's replay_complete (the Preview's open union takes it)
            assert not isinstance(note.update.value, dict) or note.update.tag == "replay_complete", entry["line"]
        out.append((method, message))
    return out


def test_a_new_daemon_replays_a_v2_turn_as_it_was_shown_then_marks_the_end(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    live = run_v2_client(env, workspace, "v2_resume.mjs", "v2-turn.json", "--phase", "turn")
    assert "Hello, edited over ACP v2." in (workspace / "README.md").read_text()
    session_id = live["sessionId"]
    back = run_v2_client(env, workspace, "v2_resume.mjs", "v2-turn.json", "--phase", "resume", "--session", session_id)

    # v2 has no session/load: the error says what to use instead
    assert back["load"]["code"] == -32601
    assert "session/resume" in back["load"]["message"] and '"start"' in back["load"]["message"]
    # a cursor Tether does not know is refused, naming the field and the one it supports
    bad = back["badCursor"]
    assert bad["code"] == -32602 and "replayFrom.type 'message'" in bad["message"] and '"start"' in bad["message"]
    # roots Tether does not advertise are refused, not ignored (and nothing was replayed for it)
    assert back["extraRoots"]["code"] == -32602 and "additionalDirectories" in back["extraRoots"]["message"]

    replayed = back["replayed"]
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds[-2:] == ["replay_complete", "state_update"] and kinds.count("replay_complete") == 1
    assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    history = replayed[:-2]
    # what the client holds after the replay is what it held after the live turn: the same
    # messages under the same ids (whole messages now, chunks then), the same calls
    live_messages, live_calls = _fold(live["updates"])
    messages, calls = _fold(history)
    assert messages == live_messages
    assert messages[live["promptAnswer"]["messageId"]] == ("user_message", "edit the readme, please")
    assert calls == live_calls and set(calls) == {"call_read", "call_edit"}
    assert calls["call_edit"]["status"] == "completed" and calls["call_edit"]["title"] == "Edit README.md"
    # each call is replayed as one upsert that creates it (its title on it); no v1 shapes
    assert [u["toolCallId"] for u in history if u["sessionUpdate"] == "tool_call_update"] == ["call_read", "call_edit"]
    assert {"tool_call", "user_message_chunk", "agent_message_chunk", "usage_update"}.isdisjoint(kinds)
    assert {o["configId"] for o in back["resumed"]["configOptions"]} == {"model", "mode"}

    # on the wire: replay, replay_complete, state_update, then the answer; without
    # replayFrom only the state comes before the answer
    lines = _daemon_lines(back["wire"])
    answers = [i for i, (method, m) in enumerate(lines) if method == "session/resume" and "result" in m]
    assert len(answers) == 2
    before = [
        m["params"]["update"]["sessionUpdate"] for _, m in lines[: answers[0]] if m.get("method") == "session/update"
    ]
    assert before[-2:] == ["replay_complete", "state_update"] and before[:-2] == kinds[:-2]
    between = [
        m["params"]["update"] for _, m in lines[answers[0] + 1 : answers[1]] if m.get("method") == "session/update"
    ]
    assert [u for u in between if u["sessionUpdate"] != "available_commands_update"] == [
        {"sessionUpdate": "state_update", "state": "idle"}
    ]
    # the SDK's view of the resume without replay: its state, no history
    assert back["again"][-1] == {"sessionUpdate": "state_update", "state": "idle"}
    assert {u["sessionUpdate"] for u in back["again"]} <= {"available_commands_update", "state_update"}


def test_a_turn_with_a_steered_message_is_replayed_under_the_ids_it_had_live(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    """tests/conformance/ts/v2_steer.mjs steers "and a title" into a turn (SPEC §12.7); a new
    daemon's replay shows it under the id the live turn gave it (`<turnId>.s<seq>`)."""
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    live = run_v2_client(env, workspace, "v2_steer.mjs", "approvals.json")
    (session_id,) = {
        json.loads(e["line"])["result"]["sessionId"]
        for e in live["wire"]
        if e["from"] == "daemon" and "sessionId" in (json.loads(e["line"]).get("result") or {})
    }
    back = run_v2_client(
        env, workspace, "v2_resume.mjs", "approvals.json", "--phase", "resume", "--session", session_id
    )

    live_messages, live_calls = _fold(live["updates"])
    messages, calls = _fold(back["replayed"][:-2])
    assert messages == live_messages and calls == live_calls
    steered = live["steerAnswer"]["messageId"]
    (shown,) = [u for u in back["replayed"] if u.get("messageId") == steered]
    assert shown["sessionUpdate"] == "user_message" and shown["_meta"]["tether"] == {"steered": True, "afterStep": 1}
