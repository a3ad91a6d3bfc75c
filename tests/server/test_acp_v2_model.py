"""The live ACP v2 renderer on the generated v2 model (`rendering/acp_v2.py`, SPEC §12).

Every turn event a v2 connection is sent becomes a `session/update` that the vendored v2
schema and the generated types both accept, with Tether's `_meta.tether` where v1 has it;
a replayed command's terminal is byte for byte what the live terminal sent (one builder);
a lone surrogate in an update is sent as U+FFFD, not as a broken frame.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from server_harness import RecordingConnection

from tether.agent import sink
from tether.rendering.emitter import SessionUpdates
from tether.rendering.replay_terminals import terminal_replayed
from tether.rendering.replay_v2 import ReplayV2
from tether.tools.base import ChangePreview, ToolLocation
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2
from tether_protocol.conversation import TextBlock

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "protocol/upstream/acp-v2-preview/schema.unstable.json").read_text()
)
FAILURE = {"code": -32603, "message": "provider failed"}
NOTIFICATION = Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/UpdateSessionNotification"})


def _updates(bodies: list[bytes]) -> list[dict[str, Any]]:
    """Each frame's update, once the schema and the generated types have accepted it."""
    out = []
    for body in bodies:
        message = json.loads(body)
        assert message["method"] == "session/update"
        errors = [e.message for e in NOTIFICATION.iter_errors(message["params"])]
        assert not errors, (body, errors)
        note = convert(message["params"], v2.UpdateSessionNotification, method="session/update")
        assert not isinstance(note.update.value, dict), f"not a v2 update kind: {body!r}"
        out.append(message["params"]["update"])
    return out


def _a_turn(updates: SessionUpdates) -> None:
    edit = ChangePreview(path="/w/a.txt", old_text="a\n", new_text="b\n", unified_diff="-a\n+b\n")
    updates.emit(sink.PromptInserted("t1", (TextBlock("go"),)))
    updates.emit(sink.StepStarted("t1", 1))
    updates.thought("thinking")
    updates.text("Editing.")
    updates.emit(sink.ToolCallStarted("c1", "Edit a.txt", "edit"))
    updates.emit(sink.ToolCallPatch("c1", status="in_progress", raw_input={"path": "a.txt"}, approved_by="rule"))
    updates.emit(
        sink.ToolCallPatch(
            "c1",
            status="completed",
            content=(sink.TextContent("edited"), sink.ChangeContent(edit), sink.TerminalContent("c2")),
            locations=(ToolLocation("/w/a.txt"), ToolLocation("/w/a.txt", 3)),
            cancellable=False,
        )
    )
    updates.emit(sink.TerminalStarted("c2", "sleep 9", "/w", cancellable=True))
    updates.emit(sink.TerminalOutput("c2", "c2", "out\n"))
    updates.emit(sink.TerminalExited("c2", "c2", None))
    updates.emit(sink.PlanUpdated((sink.PlanEntry("read it", "high", "completed"),)))
    updates.emit(sink.UsageUpdated(1200, 200_000))
    updates.emit(sink.TitleChanged("Edit a.txt"))
    updates.emit(sink.ContextCompacted(4, "the context was full"))
    updates.emit(sink.PromptSteered("t1", 1, 7, (TextBlock("also b"),)))
    updates.emit(sink.SubagentChanged("child_1", "c3", title="look", cancellable=True))
    updates.emit(sink.SubagentChanged("child_1", "c3", state=sink.TurnStateChanged("idle", "end_turn")))
    updates.available_commands([("compact", "Summarise the conversation", None), ("model", "Switch model", "name")])
    updates.emit(sink.TurnStateChanged("idle", "error", error=FAILURE))
    updates.flush()


def test_every_turn_event_is_sent_as_a_v2_update_the_schema_accepts() -> None:
    conn = RecordingConnection(2)
    _a_turn(SessionUpdates("sess_1", conn))  # type: ignore[arg-type]
    updates = _updates(conn.bodies)

    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds == [
        "user_message",
        "agent_thought_chunk",
        "agent_message_chunk",
        *["tool_call_update"] * 3,
        "terminal_update",
        "terminal_output_chunk",
        "terminal_update",
        "plan_update",
        "usage_update",
        "session_info_update",
        "notice",
        "user_message",
        "subagent_update",
        "subagent_update",
        "available_commands_update",
        "state_update",
    ]
    prompt, thought, chunk, _started, running, done = updates[:6]
    assert prompt["messageId"] == "t1.0" and prompt["content"] == [{"type": "text", "text": "go"}]
    assert (thought["messageId"], chunk["messageId"]) == ("t1.1.thought", "t1.1")
    assert running["_meta"] == {"tether": {"approvedBy": "rule"}} and running["rawInput"] == {"path": "a.txt"}
    # a location without a line has no `line` (not `null`); the cancel withdrawn is `{}`
    assert done["locations"] == [{"path": "/w/a.txt"}, {"path": "/w/a.txt", "line": 3}]
    assert done["capabilities"] == {}
    text, diff, terminal = done["content"]
    assert text == {"type": "content", "content": {"type": "text", "text": "edited"}}
    assert diff["changes"] == [{"operation": "modify", "path": "/w/a.txt"}]
    assert diff["patch"] == {"format": "git_patch", "text": "diff --git a/w/a.txt b/w/a.txt\n-a\n+b\n"}
    assert terminal == {"type": "terminal", "terminalId": "c2"}
    started, _output, exited = updates[6:9]
    assert started["capabilities"] == {"cancel": {}}
    assert exited["exitStatus"] == {"exitCode": None, "signal": "SIGKILL"} and exited["capabilities"] == {}
    assert updates[12]["_meta"] == {"tether": {"compaction": {"replaced": 4}}}
    assert updates[13]["messageId"] == "t1.s7" and updates[13]["_meta"]["tether"]["afterStep"] == 1
    announced, ended = updates[14:16]
    assert announced["capabilities"] == {"cancel": {}} and announced["_meta"] == {"tether": {"parentCallId": "c3"}}
    assert ended["state"] == {"state": "idle", "stopReason": "end_turn"} and "title" not in ended
    commands = updates[16]["availableCommands"]
    assert commands[1] == {
        "type": "command",
        "name": "model",
        "description": "Switch model",
        "input": {"type": "text", "hint": "name"},
    }
    assert "input" not in commands[0]
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": FAILURE}


def test_a_replayed_command_terminal_is_byte_for_byte_the_live_one(tmp_path: Path) -> None:
    conn = RecordingConnection(2)
    live = SessionUpdates("sess_1", conn)  # type: ignore[arg-type]
    cwd = str(tmp_path / "sub")
    live.emit(sink.TerminalStarted("call_7", "make test", cwd))
    live.emit(sink.TerminalOutput("call_7", "call_7", "ok ✓\n"))
    live.emit(sink.TerminalExited("call_7", "call_7", 2))

    call = {"id": "call_7", "name": "run_command", "arguments": {"command": "make test", "cwd": "sub"}}
    result = {"content": "ok ✓\nexit code 2 · 0.2 s"}
    replay = ReplayV2("sess_1")
    replayed = [replay.frame(u) for u in terminal_replayed(call, result, str(tmp_path))]

    assert replayed == conn.bodies
    assert [u["sessionUpdate"] for u in _updates(replayed)] == [
        "terminal_update",
        "terminal_output_chunk",
        "terminal_update",
    ]


def test_a_lone_surrogate_in_a_v2_update_is_sent_as_a_replacement_character() -> None:
    conn = RecordingConnection(2)
    updates = SessionUpdates("sess_1", conn)  # type: ignore[arg-type]
    updates.emit(sink.PromptInserted("t1", ()))
    updates.emit(sink.ToolCallPatch("c1", status="completed", content=(sink.TextContent("bad \ud800 byte"),)))
    updates.text("half \udc00 pair")
    updates.flush()

    patch, chunk = _updates(conn.bodies[1:])
    assert patch["content"][0]["content"]["text"] == "bad \ufffd byte"
    assert chunk["content"]["text"] == "half \ufffd pair"
    for body in conn.bodies:
        body.decode("utf-8")  # whole UTF-8: a client's strict decoder reads it
