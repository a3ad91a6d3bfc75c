"""An MCP server's own questions (`elicitation/create` during a tool call, SPEC §5.22) relayed to
the user through the real daemon: a real MCP server (tests/mcp/servers/asking.py, the `mcp`
SDK) asks; a v2 client that shows forms is asked (the session `requires_action` meanwhile)
and its answer goes back to the server; a client that cannot answer forms (v1, or v2 without
the capability) is shown the question as the server's and the server is declined. A hostile
server's form is shown as its own, never as Tether's, and a form too large or not flat is
never shown (the server is told why)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import HERE, final, new_session, text, user_config

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import ALLOW, V2Window  # the v2 attack tests' raw client

ASKING = HERE / "servers" / "asking.py"
FORMS = {"elicitation": {"form": {}}}
TOOLS = ("pick_name", "pose_as_tether", "huge_form", "nested_form", "open_url")


def _script(folder: Path) -> Path:
    """`<tool>` prompts call `mcp__asking__<tool>`; the step after it ends the turn."""
    replies: list[dict[str, Any]] = []
    for tool in TOOLS:
        call = {"id": f"call_{tool}", "name": f"mcp__asking__{tool}", "arguments": {}}
        replies.append({"when": {"user": f"^{tool}", "step": 1}, "text": "Asking.", "tool_calls": [call]})
        replies.append({"when": {"user": f"^{tool}", "step": 2}, "text": "Done."})
    path = folder / "asking-turns.json"
    path.write_text(json.dumps({"model": "scripted-asking", "replies": replies}))
    return path


async def _v2(
    spawn_daemon, tmp_path: Path, workspace: Path, answer, capabilities: dict | None = FORMS, timeout: str = ""
):
    user_config(tmp_path, f'[mcp_servers.asking]\ncommand = "{sys.executable}"\nargs = ["{ASKING}"]\n{timeout}')
    daemon = await spawn_daemon(script=_script(tmp_path), initialize=False)

    async def reply(method: str, params: dict) -> Any:
        return await answer(params) if method == "elicitation/create" else ALLOW

    window = V2Window(daemon.client, reply)
    await window.initialize(capabilities)
    return window, await window.new_session(workspace)


async def _run(window: V2Window, session: str, prompt: str) -> None:
    """A v2 prompt is answered as it lands: its turn has ended once the session is idle."""
    await window.prompt(session, prompt)
    await window.idle(session, timeout=45)


def _result(window: V2Window, session: str, call_id: str) -> str:
    """The text of the call's last update that carries content (its result)."""
    updates = [u for u in window.of(session, "tool_call_update") if u.get("toolCallId") == call_id and u.get("content")]
    return "".join(c["content"].get("text", "") for c in updates[-1]["content"] if c.get("type") == "content")


def _forms(window: V2Window) -> list[dict]:
    return [params for method, params in window.asked if method == "elicitation/create"]


async def test_a_v2_client_is_asked_the_servers_form_and_its_answer_goes_back(
    spawn_daemon, tmp_path: Path, workspace: Path
) -> None:
    states: list[list[str]] = []

    async def answer(params: dict) -> Any:
        states.append(window.states(session))
        # a field the form did not declare is not passed on
        return {"action": "accept", "content": {"name": "Orbit", "loud": True, "injected": "rm -rf ~"}}

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer)
    await _run(window, session, "pick_name please")
    (form,) = _forms(window)
    assert form["mode"] == "form" and form["sessionId"] == session
    assert form["message"] == "MCP server `asking` asks: Which name should the project get?"
    assert form["_meta"] == {"tether": {"mcpServer": "asking"}}
    assert form["requestedSchema"]["required"] == ["name"]
    assert set(form["requestedSchema"]["properties"]) == {"name", "loud"}
    # (its approval first: the tool is not read-only) then the form: the session waits on the user
    assert states == [["running", "requires_action", "running", "requires_action"]]
    assert json.loads(_result(window, session, "call_pick_name")) == {
        "action": "accept",
        "content": {"name": "Orbit", "loud": True},
    }
    assert window.states(session) == ["running", "requires_action", "running", "requires_action", "running", "idle"]


@pytest.mark.parametrize(
    ("answer", "server_got"),
    [
        ({"action": "decline"}, {"action": "decline", "content": None}),
        ({"action": "cancel"}, {"action": "cancel", "content": None}),
        ({"action": "accept", "content": {"loud": True}}, {"action": "cancel", "content": None}),  # no `name`
        ({"action": "accept", "content": {"name": ["a", {"x": 1}]}}, {"action": "cancel", "content": None}),
        ({"action": "sure"}, {"action": "cancel", "content": None}),
        (None, {"action": "cancel", "content": None}),
    ],
)
async def test_a_declined_cancelled_or_malformed_answer_reaches_the_server_as_what_it_means(
    spawn_daemon, tmp_path: Path, workspace: Path, answer: Any, server_got: dict
) -> None:
    async def reply(params: dict) -> Any:
        return answer

    window, session = await _v2(spawn_daemon, tmp_path, workspace, reply)
    await _run(window, session, "pick_name please")
    assert json.loads(_result(window, session, "call_pick_name")) == server_got


async def test_a_hostile_servers_question_is_shown_as_the_servers_never_as_tethers(
    spawn_daemon, tmp_path: Path, workspace: Path
) -> None:
    async def answer(params: dict) -> Any:
        return {"action": "decline"}

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer)
    await _run(window, session, "pose_as_tether")
    (form,) = _forms(window)
    assert form["message"].startswith("MCP server `asking` asks: Tether: Run a command")
    assert form["_meta"]["tether"]["mcpServer"] == "asking"
    assert [m for m, _ in window.asked].count("session/request_permission") == 1  # its own call's only


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("huge_form", "its requestedSchema is "),
        ("nested_form", "its field 'inner' must be a string, number, integer, boolean or array of choices"),
    ],
)
async def test_a_form_too_large_or_not_flat_is_never_shown_and_the_server_is_told_why(
    spawn_daemon, tmp_path: Path, workspace: Path, tool: str, why: str
) -> None:
    async def answer(params: dict) -> Any:
        raise AssertionError("a refused form was shown")

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer)
    await _run(window, session, tool)
    assert _forms(window) == []
    result = _result(window, session, f"call_{tool}")
    assert "Tether does not show this form: " + why in result
    if tool == "huge_form":
        assert "over Tether's limit of 32768" in result


async def test_a_url_elicitation_is_declined_without_asking(spawn_daemon, tmp_path: Path, workspace: Path) -> None:
    async def answer(params: dict) -> Any:
        raise AssertionError("a URL elicitation was shown")

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer)
    await _run(window, session, "open_url")
    assert _forms(window) == []
    assert json.loads(_result(window, session, "call_open_url"))["action"] == "decline"


async def test_a_v2_client_without_forms_is_told_and_the_server_declined(
    spawn_daemon, tmp_path: Path, workspace: Path
) -> None:
    async def answer(params: dict) -> Any:
        raise AssertionError("a client without forms was sent one")

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer, capabilities={})
    await _run(window, session, "pick_name please")
    assert json.loads(_result(window, session, "call_pick_name")) == {"action": "decline", "content": None}
    said = [u["title"] for u in window.of(session, "notice")]
    assert any("MCP server `asking` asked: Which name should the project get?" in title for title in said), said


async def test_a_v1_client_is_shown_the_servers_question_and_the_server_declined(
    spawn_daemon, tmp_path: Path, workspace: Path
) -> None:
    user_config(tmp_path, f'[mcp_servers.asking]\ncommand = "{sys.executable}"\nargs = ["{ASKING}"]\n')
    daemon = await spawn_daemon(script=_script(tmp_path))
    asked: list[str] = []

    async def allow(method: str, params: dict) -> Any:
        asked.append(method)
        return ALLOW

    daemon.client.peer.on_request = allow
    session = await new_session(daemon, workspace)
    turn = session.prompt("pick_name please")
    await turn.wait()
    assert asked == ["session/request_permission"]  # no form: v1 has none
    assert json.loads(text(final(turn.updates, "call_pick_name"))) == {"action": "decline", "content": None}
    shown = "".join(u["content"]["text"] for u in turn.updates if u["sessionUpdate"] == "agent_message_chunk")
    assert (
        "[MCP server `asking` asked: Which name should the project get?\n(declined: this client cannot answer forms)]"
        in shown
    )


async def test_a_question_while_two_sessions_call_the_shared_server_is_asked_of_nobody(
    spawn_daemon, tmp_path: Path, workspace: Path
) -> None:
    """The user config's server is the daemon's, shared by its sessions: while calls of two
    sessions are under way, a question cannot be told to be either's, so it is never put to
    the wrong session's user: the server is declined (the first session's question, asked
    before the second call began, is answered as usual)."""
    forms: list[str] = []

    async def answer(params: dict) -> Any:
        forms.append(params["sessionId"])
        # hold the first session's form until the second session's call has its result
        await until(lambda: any(u.get("content") for u in window.of(second, "tool_call_update")), timeout=30)
        return {"action": "accept", "content": {"name": "Orbit"}}

    window, first = await _v2(spawn_daemon, tmp_path, workspace, answer)
    second = await window.new_session(workspace)
    await window.prompt(first, "pick_name please")
    await until(lambda: forms == [first], timeout=30)
    await _run(window, second, "pick_name please")
    await window.idle(first, timeout=45)
    assert forms == [first]  # the second session's question was asked of nobody
    assert json.loads(_result(window, second, "call_pick_name")) == {"action": "decline", "content": None}
    assert json.loads(_result(window, first, "call_pick_name")) == {"action": "accept", "content": {"name": "Orbit"}}


async def test_the_calls_timeout_waits_while_the_user_answers(spawn_daemon, tmp_path: Path, workspace: Path) -> None:
    """`tool_timeout_sec` is the server's time, not the user's: a form answered after the
    call's timeout has passed still reaches the server, and its answer is the call's result."""

    async def answer(params: dict) -> Any:
        await asyncio.sleep(3)  # past the server's 1.5 s
        return {"action": "accept", "content": {"name": "Orbit"}}

    window, session = await _v2(spawn_daemon, tmp_path, workspace, answer, timeout="tool_timeout_sec = 1.5\n")
    await _run(window, session, "pick_name please")
    assert json.loads(_result(window, session, "call_pick_name")) == {"action": "accept", "content": {"name": "Orbit"}}
