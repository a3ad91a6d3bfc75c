"""A turn resumed after a restart (restart-safe approvals), through the real loop and store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.agent.history import MISSING
from tether.agent.loop import AgentTurn, TurnServices
from tether.agent.session import ActiveTurn, AgentSession
from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.providers.scripted import ScriptedProvider
from tether.services.registry import model_view
from tether.store import HistoryStore, MessageRecord
from tether.tools.disk_io import DiskFileIO
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox
from tether_protocol import PendingApprovals
from tether_protocol.conversation import TextBlock, ToolResultMessage

if TYPE_CHECKING:
    from pathlib import Path

    from tether.providers.base import ModelRequest

CALL = {"id": "call_w", "name": "write_file", "arguments": {"path": "new.txt", "content": "hello\n"}}


class NullSink:
    def __getattr__(self, _name: str) -> Any:
        return lambda *a, **k: None


class Allows:
    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        return AskerAnswer("allow_once")


class Recording(ScriptedProvider):
    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(script)
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest):  # type: ignore[override]
        self.requests.append(request)
        return super().stream(request)


async def test_the_resumed_step_sends_the_real_result_not_a_stand_in(tmp_path: Path) -> None:
    """What a dead daemon left: the step's assistant message, stored, and its call waiting.
    Read back, the view pairs the call with "result missing"; once the call runs, the model
    must see its result, in this step and every later one."""
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        await store.begin_turn(
            "s1", "t1", MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": "write it"}]})
        )
        await store.append_messages(
            "s1", "t1", [MessageRecord("assistant", {"role": "assistant", "text": "Writing.", "tool_calls": [CALL]})]
        )
        pending = PendingApprovals.from_json({"step": 1, "calls": [CALL]})
        await store.set_pending("t1", pending)

        stored = [(m.role, m.body, m.status) for m in await store.load_messages("s1")]
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask", messages=model_view(stored))
        assert [m.content for m in session.messages if isinstance(m, ToolResultMessage)] == [MISSING]
        provider = Recording({"replies": [{"text": "Done."}]})
        turn = AgentTurn(
            session,
            ActiveTurn("t1"),
            provider=provider,
            tools=ToolRegistry([*default_read_only_tools(), *default_mutating_tools()]),
            sink=NullSink(),
            max_steps=5,
            services=TurnServices(gate=ApprovalGate(store.rules), asker=Allows(), files=DiskFileIO(session.sandbox)),
        )
        outcome = await turn.resume(pending)

        assert outcome.stop_reason == "end_turn" and (ws / "new.txt").read_text() == "hello\n"
        (request,) = provider.requests
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        assert len(results) == 1 and MISSING not in results[0].content, results
        assert [m for m in session.messages if isinstance(m, ToolResultMessage) and m.content == MISSING] == []


def _turn(session: AgentSession, store: HistoryStore, script: dict[str, Any], tools: list[Any]) -> AgentTurn:
    return AgentTurn(
        session,
        ActiveTurn("t1"),
        provider=ScriptedProvider(script),
        tools=ToolRegistry([*default_read_only_tools(), *tools]),
        sink=NullSink(),
        max_steps=5,
        services=TurnServices(gate=ApprovalGate(store.rules), asker=Allows(), files=DiskFileIO(session.sandbox)),
    )


def _command(call_id: str, text: str) -> dict[str, Any]:
    return {"id": call_id, "name": "run_command", "arguments": {"command": f"echo {text} >> side.txt"}}


async def test_a_call_that_had_started_is_not_run_again(tmp_path: Path) -> None:
    """Approved and started when the daemon died: it may have run. The resumed turn tells
    the model so instead of running it a second time; the call that had not started is
    asked and runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "side.txt").write_text("a\n")  # the first command ran before the crash
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        await store.begin_turn("s1", "t1", MessageRecord("user", {"role": "user", "content": []}))
        calls = [_command("ca", "a"), _command("cb", "b")]
        await store.append_messages(
            "s1", "t1", [MessageRecord("assistant", {"role": "assistant", "text": "", "tool_calls": calls})]
        )
        pending = PendingApprovals.from_json({"step": 1, "calls": [{**calls[0], "started": True}, calls[1]]})
        await store.set_pending("t1", pending)
        stored = [(m.role, m.body, m.status) for m in await store.load_messages("s1")]
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask", messages=model_view(stored))

        outcome = await _turn(session, store, {"replies": [{"text": "ok"}]}, [RunCommandTool()]).resume(pending)

        assert outcome.stop_reason == "end_turn"
        assert (ws / "side.txt").read_text() == "a\nb\n"
        results = {m.body["tool_call_id"]: m.body for m in await store.load_messages("s1") if m.role == "tool"}
        assert results["ca"]["is_error"] and "may have run" in results["ca"]["content"]
        assert not results["cb"]["is_error"]


async def test_an_approved_call_is_recorded_as_started_before_it_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    seen: list[Any] = []

    class Watched(RunCommandTool):
        async def run(self, args: Any, ctx: Any) -> Any:  # what a new daemon would find now
            seen.append(await store.waiting_turn("s1"))
            return await super().run(args, ctx)

    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask")
        script = {
            "replies": [{"when": {"step": 1}, "tool_calls": [_command("ca", "a"), _command("cb", "b")]}, {"text": "ok"}]
        }
        turn = _turn(session, store, script, [Watched()])
        outcome = await turn.run([TextBlock("run both")])

    assert outcome.stop_reason == "end_turn" and (ws / "side.txt").read_text() == "a\nb\n"
    started = [{c.id: c.started for c in waiting[1].calls} for waiting in seen]
    assert started == [{"ca": True, "cb": False}, {"cb": True}]
