"""A turn resumed after a restart (restart-safe approvals), through the real loop and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.agent.history import MISSING
from tether.agent.loop import AgentTurn, TurnServices
from tether.agent.session import ActiveTurn, AgentSession
from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.providers.base import ModelRequest
from tether.providers.scripted import ScriptedProvider
from tether.server.registry import model_view
from tether.store import HistoryStore, MessageRecord
from tether.tools.disk_io import DiskFileIO
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.sandbox import WorkspaceSandbox

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
        await store.begin_turn("s1", "t1", MessageRecord("user", {
            "role": "user", "content": [{"type": "text", "text": "write it"}]}))
        await store.append_messages("s1", "t1", [MessageRecord("assistant", {
            "role": "assistant", "text": "Writing.", "tool_calls": [CALL]})])
        pending = {"step": 1, "calls": [CALL]}
        await store.set_pending("t1", pending)

        stored = [(m.role, m.body, m.status) for m in await store.load_messages("s1")]
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask", messages=model_view(stored))
        assert [m.get("content") for m in session.messages if m["role"] == "tool"] == [MISSING]
        provider = Recording({"replies": [{"text": "Done."}]})
        turn = AgentTurn(
            session, ActiveTurn("t1"), provider=provider,
            tools=ToolRegistry([*default_read_only_tools(), *default_mutating_tools()]),
            sink=NullSink(), max_steps=5,
            services=TurnServices(gate=ApprovalGate(store.rules), asker=Allows(), files=DiskFileIO(session.sandbox)),
        )
        outcome = await turn.resume(pending)

        assert outcome.stop_reason == "end_turn" and (ws / "new.txt").read_text() == "hello\n"
        (request,) = provider.requests
        results = [m for m in request.messages if m.get("role") == "tool"]
        assert len(results) == 1 and MISSING not in str(results[0]["content"]), results
        assert [m for m in session.messages if m.get("content") == MISSING] == []
