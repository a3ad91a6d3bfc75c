"""A hostile ACP v2 client's answers to ask-first's form (SPEC §12.8): `accept` with no
content, content that is not an object, an answer that is not a string, no result at
all; and an answer that comes after the turn was cancelled. None of them joins the turn or
calls the model (the script has no reply for it: a model call would fail the turn), the
turn ends as SPEC says, and the session takes its next prompt."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from v2_window import V2Window

from daemon_harness import until

if TYPE_CHECKING:
    from pathlib import Path

FORMS = {"elicitation": {"form": {}}}
VAGUE = "delete the old stuff"


def _script(folder: Path) -> Path:
    path = folder / "elicitation.json"  # only the next, clear prompt has a reply
    path.write_text(json.dumps({"replies": [{"when": {"user": "^list", "step": 1}, "text": "Here they are."}]}))
    return path


async def _asked(spawn_daemon, folder: Path, answer) -> tuple[V2Window, str]:
    daemon = await spawn_daemon(script=_script(folder), initialize=False, env={"TETHER_ASK_FIRST": "on"})
    window = V2Window(daemon.client, answer)
    await window.initialize(FORMS)
    session = await window.new_session(folder / "ws")
    await window.prompt(session, VAGUE)
    return window, session


async def _serves_on(window: V2Window, session: str) -> None:
    await window.prompt(session, "list the files")
    await until(lambda: window.states(session).count("idle") == 2)
    assert window.of(session, "state_update")[-1]["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "accept"},
        {"action": "accept", "content": ["only build/"]},
        {"action": "accept", "content": "only build/"},
        {"action": "accept", "content": {"answer": 5}},
        {"action": "accept", "content": {"answer": "   "}},
        {"action": "accept", "content": {"other": "only build/"}},
        {"action": "maybe", "content": {"answer": "only build/"}},
        None,
        [],
    ],
)
async def test_a_malformed_answer_ends_the_turn_as_an_unanswered_question(
    spawn_daemon,
    workspace: Path,
    answer: Any,
) -> None:
    async def reply(method: str, params: dict) -> Any:
        return answer

    window, session = await _asked(spawn_daemon, workspace.parent, reply)
    ended = await window.idle(session)

    assert [m for m, _ in window.asked] == ["elicitation/create"]
    assert ended == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    assert window.states(session) == ["running", "requires_action", "idle"]
    assert len(window.of(session, "user_message")) == 1  # the prompt; nothing joined
    said = "".join(u["content"]["text"] for u in window.of(session, "agent_message_chunk"))
    assert said.startswith("Before I delete anything")  # the question is the reply
    await _serves_on(window, session)


async def test_an_answer_after_the_turn_was_cancelled_joins_nothing(spawn_daemon, workspace: Path) -> None:
    cancelled = asyncio.Event()

    async def late(method: str, params: dict) -> Any:
        await cancelled.wait()
        await asyncio.sleep(0.3)  # after the daemon gave the form up
        return {"action": "accept", "content": {"answer": "only build/"}}

    window, session = await _asked(spawn_daemon, workspace.parent, late)
    await until(lambda: "requires_action" in window.states(session))
    window.client.peer.notify("session/cancel", {"sessionId": session})
    ended = await window.idle(session)
    cancelled.set()
    await asyncio.sleep(0.6)

    assert ended == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    assert len(window.of(session, "user_message")) == 1
    await _serves_on(window, session)
    assert len(window.of(session, "user_message")) == 2  # the next prompt's own, and only it


async def test_the_form_carries_no_control_characters_of_a_hostile_prompt(spawn_daemon, workspace: Path) -> None:
    async def decline(method: str, params: dict) -> Any:
        return {"action": "decline"}

    daemon = await spawn_daemon(script=_script(workspace.parent), initialize=False, env={"TETHER_ASK_FIRST": "on"})
    window = V2Window(daemon.client, decline)
    await window.initialize(FORMS)
    session = await window.new_session(workspace)
    hostile = "delete the old stuff \x1b]0;owned\x07\x1b[2J\x1b[31m\u202e\u0000 " + "now please " * 20_000
    await window.prompt(session, hostile)
    await window.idle(session)

    [(method, form)] = window.asked
    assert method == "elicitation/create"
    message = form["message"]
    assert message.startswith('Before I delete anything: which files or directories do you mean by "old stuff"?')
    assert len(message) < 1_000
    assert not any(ord(c) < 0x20 or c in "\x7f\u202e" for c in message), repr(message)


async def test_an_answer_over_the_message_cap_joins_nothing_and_says_why(spawn_daemon, workspace: Path) -> None:
    """A form answer over `max_message_mib` (here 1 MiB, from the user's environment) is not
    stored or sent (the script has no reply for it): the turn ends as an unanswered question
    does, and a notice names the size and the limit (SPEC §3.12)."""

    async def huge(method: str, params: dict) -> Any:
        return {"action": "accept", "content": {"answer": "only " + "build/ " * 300_000}}

    daemon = await spawn_daemon(
        script=_script(workspace.parent),
        initialize=False,
        env={"TETHER_ASK_FIRST": "on", "TETHER_MAX_MESSAGE_MIB": "1"},
    )
    window = V2Window(daemon.client, huge)
    await window.initialize(FORMS)
    session = await window.new_session(workspace)
    await window.prompt(session, VAGUE)
    ended = await window.idle(session)

    assert ended == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    assert len(window.of(session, "user_message")) == 1  # the prompt; the answer joined nothing
    [told] = [u["title"] for u in window.of(session, "notice")]
    assert told.startswith("[your answer was 2.0 MiB, over the limit of 1 MiB per message; it was not sent")
    await _serves_on(window, session)
