"""Property: no change happens without the approval the mode and rules require, and
nothing outside the workspace is ever touched — over random sequences of tool calls,
modes, rules and user answers, through the real agent loop, tools, gate and store."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.agent.loop import AgentTurn, TurnServices
from tether.agent.session import ActiveTurn, AgentSession
from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.providers.scripted import ScriptedProvider
from tether.store import HistoryStore, new_turn_id
from tether.tools.disk_io import DiskFileIO
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox
from tether_protocol.conversation import TextBlock

MODES = ["read-only", "ask", "auto-edit", "full-auto"]
ANSWERS = ["allow_once", "allow_always", "reject_once", "reject_always"]
PATHS = ["a.txt", "sub/b.txt", "../outside/victim.txt", "/tmp/tether-never-here.txt", "link/escape.txt", ".git/config"]


class NullSink:
    def __getattr__(self, _name: str) -> Any:
        return lambda *a, **k: None


class ScriptedUser:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked = 0

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked += 1
        return AskerAnswer(self.answer)


call = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(["write_file", "edit_file", "delete_path", "move_path", "run_command"]),
        "path": st.sampled_from(PATHS),
        "mode": st.sampled_from(MODES),
        "answer": st.sampled_from(ANSWERS),
        "command": st.sampled_from(["touch made_by_{n}", "git push && touch made_by_{n}", "echo hi > made_by_{n}"]),
    }
)


def arguments(c: dict[str, Any], n: int) -> dict[str, Any]:
    if c["tool"] == "write_file":
        return {"path": c["path"], "content": f"written {n}\n"}
    if c["tool"] == "edit_file":
        return {"path": c["path"], "edits": [{"old_text": "original", "new_text": f"edited {n}"}]}
    if c["tool"] == "delete_path":
        return {"path": c["path"]}
    if c["tool"] == "move_path":
        return {"source": "a.txt", "destination": c["path"]}
    return {"command": c["command"].format(n=n)}


def _rule_kind(tool: str) -> str:
    return {"write_file": "edit", "edit_file": "edit", "delete_path": "delete", "move_path": "move"}.get(
        tool, "execute"
    )


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
        if not p.is_symlink()
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(call, min_size=1, max_size=6))
def test_no_change_without_the_approval_its_mode_and_rules_require(calls: list[dict[str, Any]]) -> None:
    anyio.run(_check, calls)


def test_the_harness_sees_changes_when_they_are_approved() -> None:
    """Guards the property above against passing vacuously (nothing ever changing)."""
    calls = [
        {"tool": "write_file", "path": "a.txt", "mode": "full-auto", "answer": "reject_once", "command": ""},
        {"tool": "run_command", "path": "a.txt", "mode": "ask", "answer": "allow_once", "command": "touch made_by_{n}"},
        {"tool": "edit_file", "path": "sub/b.txt", "mode": "ask", "answer": "reject_once", "command": ""},
    ]
    assert anyio.run(_check, calls) == [True, True, False]


async def _check(calls: list[dict[str, Any]]) -> list[bool]:
    changes: list[bool] = []
    base = Path(tempfile.mkdtemp(prefix="tether-prop-"))
    try:
        ws, outside = base / "ws", base / "outside"
        (ws / "sub").mkdir(parents=True)
        (ws / ".git").mkdir()
        (ws / ".git" / "config").write_text("[core]\n")
        outside.mkdir()
        (outside / "victim.txt").write_text("original\n")
        (ws / "link").symlink_to(outside)
        for rel in ("a.txt", "sub/b.txt"):
            (ws / rel).write_text("original\n")
        outside_before = snapshot(outside)
        store = await HistoryStore.open(base / "h.sqlite3")
        gate = ApprovalGate(store.rules)
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask")
        await store.create_session("s1", str(ws), "ask")
        tools = ToolRegistry([*default_read_only_tools(), *default_mutating_tools(), RunCommandTool()])
        allowed_always: list[str] = []
        for n, c in enumerate(calls):
            # the model has read every file, so only approvals stand between it and a change
            for rel in ("a.txt", "sub/b.txt"):
                if (ws / rel).is_file():
                    session.ledger.record((ws / rel).resolve(), (ws / rel).read_text())
            before = snapshot(ws)
            session.mode = c["mode"]
            user = ScriptedUser(c["answer"])
            script = {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": f"c{n}", "name": c["tool"], "arguments": arguments(c, n)}],
                    },
                    {"text": "ok"},
                ]
            }
            turn = AgentTurn(
                session,
                ActiveTurn(new_turn_id()),
                provider=ScriptedProvider(script),
                tools=tools,
                sink=NullSink(),
                max_steps=3,
                services=TurnServices(gate=gate, asker=user, files=DiskFileIO(session.sandbox)),
            )
            await turn.run([TextBlock(f"call {n}")])
            changed = snapshot(ws) != before
            changes.append(changed)
            if changed:
                kind = "execute" if c["tool"] == "run_command" else "file"
                approved = (
                    c["mode"] == "full-auto"
                    or (c["mode"] == "auto-edit" and kind == "file")
                    or (user.asked and c["answer"] in ("allow_once", "allow_always"))
                    or (c["mode"] != "read-only" and _rule_kind(c["tool"]) in allowed_always)
                )
                assert approved, (n, c)
                assert c["mode"] != "read-only", (n, c)
                assert "git push" not in arguments(c, n).get("command", ""), (n, c)
                assert (ws / ".git" / "config").read_text() == "[core]\n", (n, c)
            if user.asked and c["answer"] == "allow_always":
                # a rule is per kind, not per tool: write_file and edit_file are both edits
                allowed_always.append(_rule_kind(c["tool"]))
            assert snapshot(outside) == outside_before, (n, c)
            assert not Path("/tmp/tether-never-here.txt").exists()
        await store.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return changes
