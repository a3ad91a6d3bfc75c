"""The tool executor in-process: what a call did comes back as data (exit code, duration,
changes, plan) and as the events the client is shown, without parsing the tool's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.agent.executor import ToolExecutor, TurnServices
from tether.agent.guard import InputGuard
from tether.agent.session import ActiveTurn, AgentSession
from tether.agent.sink import ChangeContent, PlanUpdated, TerminalExited, TerminalOutput, ToolCallPatch, TurnEvent
from tether.agent.state import CallOutcome, PendingCall
from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.rendering.acp_v1 import Update, render
from tether.store import HistoryStore
from tether.tools.disk_io import DiskFileIO
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox
from tether.tools.update_plan import UpdatePlanTool
from tether_protocol import dumps, loads


class Events:
    def __init__(self) -> None:
        self.events: list[TurnEvent] = []

    def text(self, delta: str) -> None: ...

    def thought(self, delta: str) -> None: ...

    def emit(self, event: TurnEvent) -> None:
        self.events.append(event)

    def flush(self) -> None: ...


class Log:
    """The journal's side, recorded: results, checkpoints, calls marked started."""

    def __init__(self) -> None:
        self.outcomes: list[CallOutcome] = []
        self.seen: list[str] = []

    def record(self, outcome: CallOutcome) -> None:
        self.outcomes.append(outcome)
        self.seen.append(f"result {outcome.call.call_id}")

    async def checkpoint(self) -> None:
        self.seen.append("checkpoint")

    async def mark_started(self, call_id: str) -> None:
        self.seen.append(f"started {call_id}")


class Allows:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked.append(request.call_id)
        return AskerAnswer("allow_once")


def _call(call_id: str, name: str, **arguments: Any) -> PendingCall:
    return PendingCall(call_id, name, arguments=arguments, ended=True)


async def _run(
    tmp_path: Path, calls: list[PendingCall], *, mode: str = "ask", terminal: bool = False
) -> tuple[Events, Log, Allows, Path]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    sink, log, asker = Events(), Log(), Allows()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), mode)
        tools = ToolRegistry([*default_read_only_tools(), UpdatePlanTool(), *default_mutating_tools(), RunCommandTool()])
        services = TurnServices(
            gate=ApprovalGate(store.rules), asker=asker, files=DiskFileIO(session.sandbox),
            terminal_output_meta=terminal,
        )
        executor = ToolExecutor(
            session, ActiveTurn("t1"), tools=tools, sink=sink, services=services, guard=InputGuard("warn"),
            journal=log,
        )
        await executor.run_calls(calls)
    return sink, log, asker, ws


async def test_a_commands_exit_code_and_duration_are_reported_as_data(tmp_path: Path) -> None:
    sink, log, _asker, _ws = await _run(
        tmp_path, [_call("c1", "run_command", command="sleep 0.3; echo hi; exit 3")], mode="full-auto"
    )
    (outcome,) = log.outcomes
    run = outcome.result.command
    assert run is not None and run.exit_code == 3 and run.signal is None and not run.timed_out
    assert run.duration_s >= 0.3 and run.output == "hi\n"
    # what the model reads is unchanged: the output, then the exit code and the duration
    assert outcome.result.is_error and outcome.result.text.startswith("hi\nexit code 3 · ")
    assert outcome.message().content == outcome.result.text
    final = sink.events[-1]
    assert isinstance(final, ToolCallPatch) and final.status == "failed"



def _wire(update: Update | None) -> Any:
    """An update as the client reads it off the wire."""
    assert update is not None
    return loads(dumps(update))

async def test_a_terminal_client_gets_the_exit_code_and_the_output(tmp_path: Path) -> None:
    sink, _log, _asker, _ws = await _run(
        tmp_path, [_call("c1", "run_command", command="echo out; exit 7")], mode="full-auto", terminal=True
    )
    output = "".join(e.data for e in sink.events if isinstance(e, TerminalOutput))
    (exited,) = [e for e in sink.events if isinstance(e, TerminalExited)]
    assert output == "out\n" and exited.exit_code == 7 and exited.signal is None
    assert _wire(render(exited)) == {
        "sessionUpdate": "tool_call_update", "toolCallId": "c1",
        "_meta": {"terminal_exit": {"terminal_id": "c1", "exit_code": 7, "signal": None}},
    }


async def test_a_command_that_times_out_has_no_exit_code(tmp_path: Path) -> None:
    sink, log, _asker, _ws = await _run(
        tmp_path, [_call("c1", "run_command", command="sleep 30", timeout=1)], mode="full-auto", terminal=True
    )
    run = log.outcomes[0].result.command
    assert run is not None and run.timed_out and run.exit_code is None and 0.9 <= run.duration_s < 20
    (exited,) = [e for e in sink.events if isinstance(e, TerminalExited)]
    update = _wire(render(exited))
    assert update["_meta"]["terminal_exit"] == {"terminal_id": "c1", "exit_code": None, "signal": "SIGKILL"}


async def test_an_edit_reports_its_change_and_is_asked_after_a_checkpoint(tmp_path: Path) -> None:
    sink, log, asker, ws = await _run(tmp_path, [_call("w1", "write_file", path="a.txt", content="new\n")])
    assert (ws / "a.txt").read_text() == "new\n" and asker.asked == ["w1"]
    # the journal commits before the user is asked and records the call started before it runs
    assert log.seen == ["checkpoint", "started w1", "result w1"]
    (outcome,) = log.outcomes
    assert [c.path for c in outcome.result.changes] == [str(ws / "a.txt")]
    assert outcome.result.changes[0].new_text == "new\n" and outcome.kind == "edit"
    shown = [e for e in sink.events if isinstance(e, ToolCallPatch) and e.content]
    assert isinstance(shown[0].content and shown[0].content[0], ChangeContent)
    started = [e for e in sink.events if isinstance(e, ToolCallPatch) and e.status == "in_progress"]
    assert started[0].approved_by


async def test_read_only_mode_refuses_an_edit_before_anything_is_shown(tmp_path: Path) -> None:
    sink, log, asker, ws = await _run(
        tmp_path, [_call("w1", "write_file", path="a.txt", content="x")], mode="read-only"
    )
    assert not (ws / "a.txt").exists() and asker.asked == []
    (outcome,) = log.outcomes
    assert outcome.result.is_error and "not allowed in read-only mode" in outcome.result.text
    assert not any(isinstance(e, ToolCallPatch) and e.content and isinstance(e.content[0], ChangeContent)
                   for e in sink.events)


async def test_a_plan_is_shown_from_the_tools_result(tmp_path: Path) -> None:
    entries = [{"content": "look", "status": "completed"}, {"content": "fix", "status": "in_progress"}]
    sink, log, _asker, _ws = await _run(tmp_path, [_call("p1", "update_plan", entries=entries)])
    (plan,) = [e for e in sink.events if isinstance(e, PlanUpdated)]
    assert [(e.content, e.priority, e.status) for e in plan.entries] == [
        ("look", "medium", "completed"), ("fix", "medium", "in_progress")]
    assert log.outcomes[0].result.text.startswith("Plan updated: 1 of 2 done")


async def test_an_unknown_tool_is_an_error_result_not_a_failed_turn(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("one\n")
    _sink, log, _asker, _ws = await _run(
        tmp_path, [_call("r1", "read_file", path="f.txt"), _call("x1", "no_such_tool"), _call("r2", "list_dir")]
    )
    assert sorted(o.call.call_id for o in log.outcomes) == ["r1", "r2", "x1"]
    unknown = next(o for o in log.outcomes if o.call.call_id == "x1")
    assert unknown.result.is_error and "unknown tool 'no_such_tool'" in unknown.result.text
    assert unknown.title is None and unknown.message().title is None
    read = next(o for o in log.outcomes if o.call.call_id == "r1")
    assert not read.result.is_error and "one" in read.result.text and read.message().kind == "read"
