"""The turn's journal in-process, against a real store: what a crash at each point leaves,
and that a new daemon resumes a waiting step to the same state."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tether.agent.journal import CallStage, StepStage, TurnJournal
from tether.agent.loop import AgentTurn, TurnServices
from tether.agent.session import ActiveTurn, AgentSession
from tether.agent.state import CallOutcome, PendingCall, StepState
from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.providers.scripted import ScriptedProvider
from tether.services.registry import model_view
from tether.store import HistoryStore
from tether.tools.base import ToolResult
from tether.tools.disk_io import DiskFileIO
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.sandbox import WorkspaceSandbox
from tether_protocol.conversation import Message, TextBlock, ToolResultMessage, UserMessage

USER = UserMessage((TextBlock("go"),))


def _step(index: int, *call_ids: str) -> StepState:
    step = StepState(index)
    step.text_parts.append(f"step {index}")
    for call_id in call_ids:
        step.calls[call_id] = PendingCall(call_id, "write_file", arguments={"path": f"{call_id}.txt"}, ended=True)
    return step


def _done(step: StepState, call_id: str, text: str = "ok") -> CallOutcome:
    return CallOutcome(step.calls[call_id], ToolResult(text), title="Write", kind="edit")


async def _stored(store: HistoryStore) -> list[tuple[str, Any, str]]:
    """(role, call id or text, status) of each stored message."""
    rows = []
    for m in await store.load_messages("s1"):
        body = m.json_body()
        rows.append((m.role, body.get("tool_call_id") or body.get("text"), m.status))
    return rows


async def _session(store: HistoryStore, ws: Path, messages: list[Message] | None = None) -> AgentSession:
    return AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask", messages=messages or [])


async def test_a_crash_while_asking_resumes_to_the_same_step(tmp_path: Path) -> None:
    """Step 1 ran; step 2 has three calls: `a` finished, `b` was approved and started,
    `c` not run; the daemon dies there. A new daemon finds the same step, the same
    committed messages, and knows `b` may have run."""
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        journal = TurnJournal(session, "t1")
        await journal.begin(USER, blocked=False)
        journal.open(first := _step(1))
        await journal.commit_step()
        journal.open(step := _step(2, "a", "b", "c"))
        journal.calls_assembled()
        assert journal.stage is StepStage.RUNNING
        journal.record(_done(step, "a"))
        await journal.checkpoint()  # the user is asked about b
        await journal.mark_started("b")  # approved: it runs, and the daemon dies
        assert (journal.stage, journal.stage_of("b")) == (StepStage.CHECKPOINTED, CallStage.STARTED)
        view_before = list(session.messages)
        del journal, first

    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        assert await _stored(store) == [
            ("user", None, "complete"),
            ("assistant", "step 1", "complete"),
            ("assistant", "step 2", "complete"),
            ("tool", "a", "complete"),
        ]
        waiting = await store.waiting_turn("s1")
        assert waiting is not None and waiting[0] == "t1"
        stored = [(m.role, m.json_body(), m.status) for m in await store.load_messages("s1")]
        session = await _session(store, ws, model_view(stored))
        journal = TurnJournal(session, "t1")
        journal.drop_stand_ins(waiting[1].call_ids())
        assert session.messages == view_before  # the model sees what it saw before the crash
        resumed = journal.resume(waiting[1])
        assert resumed.step.index == 2 and [c.call_id for c in resumed.calls] == ["b", "c"]
        assert resumed.started == {"b"} and resumed.calls[1].arguments == {"path": "c.txt"}
        assert journal.stage is StepStage.CHECKPOINTED
        assert [journal.stage_of(c) for c in "bc"] == [CallStage.STARTED, CallStage.WAITING]


async def test_a_resumed_step_commits_each_result_once(tmp_path: Path) -> None:
    """Resumed, `b` gets its "may have run" result, `c` is asked (a checkpoint) and runs:
    the step ends with one result per call and nothing left waiting."""
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        journal = TurnJournal(session, "t1")
        await journal.begin(USER, blocked=False)
        journal.open(step := _step(1, "b", "c"))
        await journal.checkpoint()
        await journal.mark_started("b")
        waiting = await store.waiting_turn("s1")
        assert waiting is not None
        pending = waiting[1]

        journal = TurnJournal(session, "t1")
        resumed = journal.resume(pending)
        journal.record(_done(resumed.step, "b", "not run again"))
        await journal.checkpoint()  # asking about c commits b's result
        assert journal.stage_of("b") is CallStage.COMMITTED
        journal.record(_done(resumed.step, "c"))
        await journal.commit_step()

        assert await store.waiting_turn("s1") is None and journal.step is None
        tools = [m.json_body()["tool_call_id"] for m in await store.load_messages("s1") if m.role == "tool"]
        assert tools == ["b", "c"]
        assert [m.tool_call_id for m in session.messages if isinstance(m, ToolResultMessage)] == ["b", "c"]
        del step


async def test_a_cancel_pairs_every_call_and_keeps_what_was_said(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        journal = TurnJournal(session, "t1")
        await journal.begin(USER, blocked=False)
        journal.open(step := _step(1, "a", "b"))
        journal.record(_done(step, "a"))
        assert journal.unrun_calls() == ["b"]
        await journal.close("cancelled")
        rows = [(m.role, m.status, m.json_body().get("content")) for m in await store.load_messages("s1")]
        assert rows[1:] == [
            ("assistant", "cancelled", None),
            ("tool", "cancelled", "ok"),
            ("tool", "cancelled", "not run: the turn was cancelled before this tool finished"),
        ]
        # what was said before a cancel stays in the model's view
        assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool"]


async def test_a_partial_is_kept_until_the_step_commits(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        journal = TurnJournal(session, "t1")
        await journal.begin(USER, blocked=False)
        journal.open(step := _step(1))
        await journal.save_partial(step)
        assert await _partial(store) == {"role": "assistant", "text": "step 1"}
        step.text_parts.append(" and more")
        await journal.commit_step()
        assert await _partial(store) is None
        assert (await _stored(store))[-1] == ("assistant", "step 1 and more", "complete")


async def test_a_broken_reply_is_set_aside_out_of_the_models_view(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        journal = TurnJournal(session, "t1")
        await journal.begin(USER, blocked=False)
        journal.open(step := _step(1))
        await journal.set_aside(step)
        assert journal.step is None
        assert (await _stored(store))[-1] == ("assistant", "step 1", "incomplete")
        assert [m.role for m in session.messages] == ["user"]


async def _partial(store: HistoryStore) -> Any:
    import json

    rows = await store._db.read("SELECT partial FROM turns WHERE id = ?", ("t1",))
    return json.loads(rows[0][0]) if rows[0][0] else None


# ---- a whole turn, killed while it asks, resumed by a new daemon -----------------------

SCRIPT = {
    "replies": [
        {
            "when": {"step": 1},
            "text": "Writing.",
            "tool_calls": [
                {"id": "r1", "name": "read_file", "arguments": {"path": "README.md"}},
                {"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "one\n"}},
                {"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "two\n"}},
            ],
        },
        {"when": {"step": 2}, "text": "Both written."},
    ]
}


class AllowsAndSnapshots:
    """Allows every call; the first time it is asked about `w2`, copies the database as a
    daemon killed at that moment would leave it."""

    def __init__(self, db: Path, copy: Path) -> None:
        self.db, self.copy = db, copy

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        if request.call_id == "w2" and not self.copy.exists():
            for suffix in ("", "-wal"):
                source = Path(f"{self.db}{suffix}")
                if source.exists():
                    shutil.copyfile(source, f"{self.copy}{suffix}")
        return AskerAnswer("allow_once")


def _turn(session: AgentSession, store: HistoryStore, turn_id: str, asker: Any) -> AgentTurn:
    tools = ToolRegistry([*default_read_only_tools(), *default_mutating_tools()])
    return AgentTurn(
        session,
        ActiveTurn(turn_id),
        provider=ScriptedProvider(SCRIPT),
        tools=tools,
        sink=_Quiet(),
        max_steps=5,
        services=TurnServices(gate=ApprovalGate(store.rules), asker=asker, files=DiskFileIO(session.sandbox)),
    )


class _Quiet:
    def text(self, delta: str) -> None: ...

    def thought(self, delta: str) -> None: ...

    def emit(self, event: Any) -> None: ...

    def flush(self) -> None: ...


async def _conversation(store: HistoryStore) -> list[tuple[str, Any, str]]:
    return [(m.role, m.json_body(), m.status) for m in await store.load_messages("s1")]


async def test_a_turn_killed_while_asking_resumes_to_the_state_it_would_have_reached(tmp_path: Path) -> None:
    """The same turn twice: run through, and killed when asked about its second edit
    (the database copied at that moment), then resumed from that copy. Both end with the
    same stored conversation and the same files."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("hello\n")
    db, killed = tmp_path / "h.sqlite3", tmp_path / "killed.sqlite3"
    async with await HistoryStore.open(db) as store:
        await store.create_session("s1", str(ws), "ask")
        session = await _session(store, ws)
        outcome = await _turn(session, store, "t1", AllowsAndSnapshots(db, killed)).run([TextBlock("write both")])
        assert outcome.stop_reason == "end_turn"
        straight = await _conversation(store)

    (ws / "a.txt").unlink()  # what the edits did is redone (or not) by the resumed turn
    (ws / "b.txt").unlink()
    async with await HistoryStore.open(killed) as store:
        waiting = await store.waiting_turn("s1")
        assert waiting is not None and [c.id for c in waiting[1].calls] == ["w2"]
        stored = [(m.role, m.json_body(), m.status) for m in await store.load_messages("s1")]
        session = await _session(store, ws, model_view(stored))
        (ws / "a.txt").write_text("one\n")  # w1 had run before the kill
        outcome = await _turn(session, store, waiting[0], AllowsAndSnapshots(db, killed)).resume(waiting[1])
        assert outcome.stop_reason == "end_turn" and await store.waiting_turn("s1") is None
        assert await _conversation(store) == straight
    assert (ws / "b.txt").read_text() == "two\n"
    assert [m[0] for m in straight] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
