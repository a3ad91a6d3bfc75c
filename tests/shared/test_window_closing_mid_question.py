"""A window that closes while its user is asked something, with a second window watching the
session (so its turn goes on; a real shared daemon, real v2 windows): ask-first's question in
a form (SPEC §12.8), and an approval. The closed window's request is dropped; the turn must end
as an unanswered question does (an approval: the watching window, asked too, still decides):
no -32603, no hung turn, nothing of the session lost, and the watching window can prompt the
session next."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import ALLOW, V2Window, assert_valid

FORMS = {"elicitation": {"form": {}}}
VAGUE = "delete the old stuff"


def _script(folder: Path) -> Path:
    write = {"id": "call_w", "name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
    replies = [
        {"when": {"user": "^what is here", "step": 1}, "text": "A workspace."},
        {"when": {"user": "^write it", "step": 1}, "text": "Writing.", "tool_calls": [write]},
        {"when": {"user": "^write it", "step": 2}, "text": "Done."},
    ]
    path = folder / "closing.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


async def _window(windows: Any, script: Path, answer: Any, capabilities: dict | None = None) -> V2Window:
    window = V2Window(await windows.open(script=script, initialize=False), answer)
    await window.initialize(capabilities)
    return window


async def _asked_then_closed(windows: Any, workspace: Path, script: Path, capabilities: dict | None, text: str) -> Any:
    """Window A prompts `text` with window B watching the session; A closes with the question
    on its screen. Returns B, the session, and what A was asked."""
    shown = anyio.Event()

    async def never_answers(method: str, params: dict) -> Any:
        shown.set()
        await anyio.sleep_forever()

    window_a = await _window(windows, script, never_answers, capabilities)
    session = await window_a.new_session(workspace)
    a_closed = anyio.Event()

    async def answers_once_a_closed(method: str, params: dict) -> Any:
        await a_closed.wait()
        return ALLOW

    window_b = await _window(windows, script, answers_once_a_closed, capabilities)
    await window_b.client.request("session/resume", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
    await window_a.prompt(session, text)
    with anyio.fail_after(30):
        await shown.wait()
    await window_a.client.close()  # the window goes away with the question on its screen
    a_closed.set()
    await until(lambda: window_b.states(session)[-1:] == ["idle"], timeout=30)
    return window_b, session, window_a.asked


async def _prompted(window: V2Window, session: str) -> None:
    """The session takes the next prompt and answers it."""
    before = window.states(session).count("idle")
    await window.prompt(session, "what is here?")
    await until(lambda: window.states(session).count("idle") > before, timeout=30)
    assert window.of(session, "state_update")[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert window.of(session, "agent_message_chunk")[-1]["content"]["text"] == "A workspace."


def _said(window: V2Window, session: str) -> str:
    return "".join(u["content"]["text"] for u in window.of(session, "agent_message_chunk"))


async def test_a_window_closing_on_ask_firsts_form_ends_the_turn_as_an_unanswered_question(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    config = Path(windows.env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('ask_first = "on"\n')
    window_b, session, asked = await _asked_then_closed(windows, workspace, _script(tmp_path), FORMS, VAGUE)
    ((method, form),) = asked
    assert method == "elicitation/create" and "old stuff" in form["message"]
    # as an unanswered question: the turn ends `end_turn`, its reply the question (kept)
    assert window_b.states(session)[-3:] == ["running", "requires_action", "idle"]
    assert window_b.of(session, "state_update")[-1].get("stopReason") == "end_turn"
    assert _said(window_b, session) == form["message"]
    assert "details in the daemon log" not in json.dumps(window_b.updates)
    await _prompted(window_b, session)
    assert_valid(window_b)
    # nothing of the session lost: a window replaying it reads both turns whole
    replaying = await _window(windows, _script(tmp_path), None)
    await replaying.client.request(
        "session/resume",
        {"sessionId": session, "cwd": str(workspace), "mcpServers": [], "replayFrom": {"type": "start"}},
    )
    await until(lambda: replaying.of(session, "replay_complete"), timeout=30)
    told = [(u["sessionUpdate"], c["text"]) for u in replaying.of(session) if "content" in u for c in u["content"]]
    assert told == [
        ("user_message", VAGUE),
        ("agent_message", form["message"]),
        ("user_message", "what is here?"),
        ("agent_message", "A workspace."),
    ]


async def test_a_window_closing_on_an_approval_leaves_it_to_the_other_window(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    window_b, session, asked = await _asked_then_closed(windows, workspace, _script(tmp_path), None, "write it")
    assert [method for method, _ in asked] == ["session/request_permission"]
    # A's closing decided nothing: window B, asked too, allowed it once A had gone
    assert [method for method, _ in window_b.asked] == ["session/request_permission"]
    assert (workspace / "a.txt").read_text() == "x"
    # asked of both, the turn said `requires_action` once, `running` once B answered
    assert window_b.states(session)[-4:] == ["running", "requires_action", "running", "idle"]
    assert window_b.of(session, "state_update")[-1].get("stopReason") == "end_turn"
    assert _said(window_b, session) == "Writing.Done."
    assert "details in the daemon log" not in json.dumps(window_b.updates)
    await _prompted(window_b, session)
    assert_valid(window_b)
