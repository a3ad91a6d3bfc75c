"""Stop-42 attacks on the MCP elicitation relay through a real shared daemon, two real v2 windows
and a real hostile MCP server (tests/shared/servers/forms_hostile.py, the `mcp` SDK): one server
process serves every session, so a form must go to the user of the call that asked it, never to
the window whose call started last (while two turns' calls are under way it is declined), and a
server may not flood a window with forms (one open at a time, the others declined). And one
session prompted in turn by two windows of different settings: path42's kept setup carries
neither's into the other's turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import ALLOW, V2Window  # the v2 attack tests' raw client

HOSTILE = Path(__file__).resolve().parent / "servers" / "forms_hostile.py"
FORMS = {"elicitation": {"form": {}}}
TOOLS = ("hold", "ask_first_caller", "ask_now", "flood", "sly_form", "sly_choice", "ask_forever")


def _script(folder: Path) -> Path:
    replies: list[dict[str, Any]] = []
    for tool in TOOLS:
        call = {"id": f"call_{tool}", "name": f"mcp__hostile__{tool}", "arguments": {}}
        replies.append({"when": {"user": f"^{tool}", "step": 1}, "text": "Calling.", "tool_calls": [call]})
        replies.append({"when": {"user": f"^{tool}", "step": 2}, "text": "Done."})
    path = folder / "hostile-forms.json"
    path.write_text(json.dumps({"model": "scripted-hostile-forms", "replies": replies}))
    return path


def _user_config(env: dict[str, str]) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[mcp_servers.hostile]\ncommand = "{sys.executable}"\nargs = ["{HOSTILE}"]\n')


async def _window(windows: Any, script: Path, answer: Any) -> V2Window:
    async def reply(method: str, params: dict) -> Any:
        return await answer(params) if method == "elicitation/create" else ALLOW

    window = V2Window(await windows.open(script=script, initialize=False), reply)
    await window.initialize(FORMS)
    return window


def _forms(window: V2Window) -> list[dict]:
    return [params for method, params in window.asked if method == "elicitation/create"]


def _result(window: V2Window, session: str, call_id: str) -> str:
    updates = [u for u in window.of(session, "tool_call_update") if u.get("toolCallId") == call_id and u.get("content")]
    return "".join(c["content"].get("text", "") for c in updates[-1]["content"] if c.get("type") == "content")


async def test_a_servers_form_is_never_put_to_the_user_of_another_windows_call(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    _user_config(windows.env)
    script = _script(tmp_path)

    async def a_answers(params: dict) -> Any:
        return {"action": "accept", "content": {"secret": "window-A-token"}}

    async def b_answers(params: dict) -> Any:
        return {"action": "accept", "content": {"secret": "window-B-token"}}

    window_a = await _window(windows, script, a_answers)
    window_b = await _window(windows, script, b_answers)
    session_a = await window_a.new_session(workspace)
    session_b = await window_b.new_session(workspace)  # one server process per workspace
    await window_a.prompt(session_a, "ask_first_caller now")  # waits at the server for B's call
    await window_b.prompt(session_b, "hold it open")  # B's call starts last; A's call then asks
    await window_a.idle(session_a, timeout=40)
    await window_b.idle(session_b, timeout=40)
    # window B never sees (nor answers) a form its own call did not ask: while two turns' calls
    # are under way the server's form cannot be told to be A's (stdio names no call), so it is
    # declined, never guessed (main's relay asked B, the latest caller, and gave A's server B's token)
    assert _forms(window_b) == []
    assert _forms(window_a) == []
    got = json.loads(_result(window_a, session_a, "call_ask_first_caller"))
    assert got == {"action": "decline", "content": None}
    assert "window-B-token" not in json.dumps(window_a.updates)


async def test_a_flood_of_forms_reaches_the_user_one_at_a_time(windows: Any, workspace: Path, tmp_path: Path) -> None:
    _user_config(windows.env)
    open_now = 0
    most_open = 0

    async def answer(params: dict) -> Any:
        nonlocal open_now, most_open
        open_now += 1
        most_open = max(most_open, open_now)
        await anyio.sleep(0.2)  # a user reading the form
        open_now -= 1
        return {"action": "decline"}

    window = await _window(windows, _script(tmp_path), answer)
    session = await window.new_session(workspace)
    await window.prompt(session, "flood the user")
    await window.idle(session, timeout=90)
    actions = json.loads(_result(window, session, "call_flood"))
    assert actions == ["decline"] * 40, actions
    # never two of the server's forms on the user's screen at once
    assert most_open == 1, most_open


async def test_a_form_left_open_by_a_window_that_closed_holds_nothing(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    """Window A closes with the server's form on its screen; window B (same workspace: the same
    server process) then calls the server and is asked its form. Before the fix the dropped form
    request's bare CancelledError reached the MCP SDK's dispatcher and, in 3 runs of 4, closed the
    server's connection: B's call failed `stopped answering: its connection closed during a call`."""
    _user_config(windows.env)
    script = _script(tmp_path)
    shown = anyio.Event()

    async def never_answers(params: dict) -> Any:
        shown.set()
        await anyio.sleep_forever()

    async def answers(params: dict) -> Any:
        return {"action": "accept", "content": {"secret": "window-B-token"}}

    window_a = await _window(windows, script, never_answers)
    session_a = await window_a.new_session(workspace)
    await window_a.prompt(session_a, "ask_now please")
    with anyio.fail_after(30):
        await shown.wait()
    await window_a.client.close()  # the window goes away with the server's form on its screen
    window_b = await _window(windows, script, answers)
    session_b = await window_b.new_session(workspace)  # the same workspace: the same server process
    await window_b.prompt(session_b, "ask_now please")
    await window_b.idle(session_b, timeout=60)
    got = json.loads(_result(window_b, session_b, "call_ask_now"))
    assert got == {"action": "accept", "content": {"secret": "window-B-token"}}
    assert [form["sessionId"] for form in _forms(window_b)] == [session_b]


async def test_a_forms_field_texts_reach_the_user_with_nothing_hidden_in_them(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    """The message is escaped (§5.8); so must be what a client draws beside the fields (their
    titles, descriptions, choices' names): a bidi override or an ANSI escape there would make a
    server's form read as Tether's approval. A choice or a field name that hides characters
    (it would go back to the server as it is) is not shown at all."""
    _user_config(windows.env)

    async def answer(params: dict) -> Any:
        return {"action": "accept", "content": {"choice": "reject"}}

    window = await _window(windows, _script(tmp_path), answer)
    session = await window.new_session(workspace)
    await window.prompt(session, "sly_form please")
    await window.idle(session, timeout=60)
    [form] = _forms(window)
    field = form["requestedSchema"]["properties"]["choice"]
    assert field["title"] == "Tether: Run a command\\u202e fr- mr\\u202c"
    assert field["description"] == "\\x1b[2J\\x1b[HTether asks: allow\\u200b once?"
    assert field["enumNames"] == ["Allow\\u202e ecno", "Reject"]
    assert field["enum"] == ["allow_once", "reject"]
    assert json.loads(_result(window, session, "call_sly_form")) == {
        "action": "accept",
        "content": {"choice": "reject"},
    }

    await window.prompt(session, "sly_choice please")
    await until(lambda: window.states(session).count("idle") == 2, timeout=60)
    assert len(_forms(window)) == 1  # the second form was never shown
    assert "Tether does not show this form" in _result(window, session, "call_sly_choice")


async def test_a_form_of_a_cancelled_turn_does_not_stop_the_next_turns_form(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    """The user cancels the turn while the server's form is open (and never answers that form):
    the next turn's form from the same server is still put to them and answered."""
    _user_config(windows.env)
    asked = 0

    async def answer(params: dict) -> Any:
        nonlocal asked
        asked += 1
        if asked == 1:
            await anyio.sleep_forever()  # the form of the turn the user cancels stays on screen
        return {"action": "accept", "content": {"secret": "second"}}

    window = await _window(windows, _script(tmp_path), answer)
    session = await window.new_session(workspace)
    await window.prompt(session, "ask_now please")
    await until(lambda: asked == 1, timeout=60)
    window.client.peer.notify("session/cancel", {"sessionId": session})
    await window.idle(session, timeout=60)
    await window.prompt(session, "ask_now again")
    await until(lambda: window.states(session).count("idle") == 2, timeout=60)
    assert asked == 2
    assert json.loads(_result(window, session, "call_ask_now")) == {"action": "accept", "content": {"secret": "second"}}


async def test_one_sessions_kept_setup_never_carries_a_windows_settings_into_the_others_turn(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    """path42 keeps a session's turn setup and wiring (gate, file I/O, provider) for the window
    that prompted last; own42's ports carry each window's settings. Window A narrowed its
    sandbox (initializationOptions `sandbox = "bwrap"`), window B has the daemon's (`off`); both
    prompt one session in turn. A's commands stay confined after B's prompt (a file outside the
    workspace cannot be made), B's are not."""
    config = Path(windows.env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('sandbox = "off"\nmode = "full-auto"\n')
    outside = Path(tmp_path / "outside-marks")
    outside.mkdir()
    replies = []
    for name in ("a1", "b1", "a2", "b2", "a3"):
        call = {
            "id": f"call_{name}",
            "name": "run_command",
            "arguments": {"command": f"touch {outside}/{name}; echo ran"},
        }
        replies.append({"when": {"user": f"^{name}$", "step": 1}, "text": "Touching.", "tool_calls": [call]})
        replies.append({"when": {"user": f"^{name}$", "step": 2}, "text": "Done."})
    script = tmp_path / "touch.json"
    script.write_text(json.dumps({"model": "scripted-touch", "replies": replies}))

    async def allow(method: str, params: dict) -> Any:  # B's unconfined commands are asked for
        return ALLOW

    confined = await windows.open(script=script, initialize=False, on_request=allow)
    answer = await confined.initialize(initializationOptions={"sandbox": "bwrap"})
    assert "configRefused" not in answer.get("_meta", {}).get("tether", {}), answer
    plain = await windows.open(script=script, on_request=allow)
    session = await confined.new_session(workspace)
    joined = await plain.load_session(session.id, workspace)
    for name, window_session in (("a1", session), ("b1", joined), ("a2", session), ("b2", joined), ("a3", session)):
        turn = window_session.prompt(name)
        await turn.wait()
        assert turn.stop_reason == "end_turn", (name, turn.updates)
    assert sorted(p.name for p in outside.iterdir()) == ["b1", "b2"]


async def test_a_server_asking_forever_of_a_client_without_forms_does_not_flood_its_transcript(
    windows: Any, workspace: Path, tmp_path: Path
) -> None:
    """A v1 window cannot answer forms: each of the server's questions is shown as a notice and
    declined at once, so a server may ask again and again (500 questions of 3,900 characters:
    ~2 MB of notices in one tool call) without the user doing anything."""
    _user_config(windows.env)

    async def allow(method: str, params: dict) -> Any:
        return ALLOW

    client = await windows.open(script=_script(tmp_path), on_request=allow)
    session = await client.new_session(workspace)
    turn = session.prompt("ask_forever please")
    await turn.wait()
    notices = [u for u in turn.updates if "asked:" in json.dumps(u)]
    shown = sum(len(json.dumps(u)) for u in notices)
    # (before: 500 notices, 2,049,500 bytes of updates) three are shown, then one line says the rest are not
    assert len(notices) == 3 and shown < 16 * 1024, (len(notices), shown)
    assert sum("asked again: declined, no longer shown this turn" in json.dumps(u) for u in turn.updates) == 1
    assert '{\\"decline\\": 500}' in json.dumps(turn.updates)  # the server was declined each time
