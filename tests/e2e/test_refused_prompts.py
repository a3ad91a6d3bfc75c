"""Prompts a client author gets wrong, through a real `tether serve`: each is refused with
-32602 naming the method, the field and what to send, and nothing is stored or run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path


async def _stored_turns(daemon, session_id: str) -> list[dict]:
    return list((await daemon.client.request("_tether/session/report", {"sessionId": session_id}))["reports"])


async def test_an_empty_prompt_is_refused_and_nothing_is_stored(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("session/prompt", {"sessionId": session.id, "prompt": []})
    assert refused.value.code == -32602
    assert refused.value.message.endswith(
        "invalid params for session/prompt: prompt is an empty list; send at least one content block, "
        'e.g. [{"type": "text", "text": "..."}]'
    )
    assert await _stored_turns(daemon, session.id) == []  # no turn: the model was not called
    other = await spawn_daemon()
    loaded = await other.client.load_session(session.id, workspace)
    assert [u for u in loaded.updates if u["sessionUpdate"] == "user_message_chunk"] == []
    # the session still works
    turn = session.prompt("what does the readme say?")
    await turn.wait()
    assert turn.stop_reason == "end_turn" and len(await _stored_turns(daemon, session.id)) == 1


async def test_a_steer_flag_that_is_not_a_boolean_is_refused(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    params = {
        "sessionId": session.id,
        "prompt": [{"type": "text", "text": "hi"}],
        "_meta": {"tether": {"steer": "yes"}},
    }
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("session/prompt", params)
    assert refused.value.code == -32602
    assert (
        "invalid params for session/prompt: _meta.tether.steer must be true or false, not 'yes'; "
        "send true to join the running turn" in refused.value.message
    )
    assert await _stored_turns(daemon, session.id) == []


async def test_a_client_may_lower_the_message_cap_but_not_raise_it(spawn_daemon, workspace: Path):
    """`max_message_mib` (SPEC §3.12, §9): a client's `initializationOptions` asking for more
    is refused and listed (the user's 8 MiB stays); asking for less is taken."""
    two_mib = [{"type": "text", "text": "é" * (1024 * 1024 + 10)}]  # 2 MiB of UTF-8 in 1 Mi characters
    raising = await spawn_daemon(initialize=False)
    reply = await raising.client.initialize(initializationOptions={"maxMessageMib": 64})
    refused = {item["key"]: item["reason"] for item in reply["_meta"]["tether"]["configRefused"]}
    assert (
        "a client may only make Tether stricter, not accept larger messages (yours: 8, asked: 64)"
        in refused["max_message_mib"]
    )
    session = await raising.client.new_session(workspace)
    with pytest.raises(ClientError) as over:
        await raising.client.request(
            "session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "x" * (9 * 1024 * 1024)}]}
        )
    assert over.value.code == -32602 and "over the limit of 8 MiB per message" in over.value.message

    lowering = await spawn_daemon(initialize=False)
    await lowering.client.initialize(initializationOptions={"maxMessageMib": 1})
    session = await lowering.client.new_session(workspace)
    with pytest.raises(ClientError) as lowered:
        await lowering.client.request("session/prompt", {"sessionId": session.id, "prompt": two_mib})
    assert lowered.value.code == -32602
    assert (
        "prompt holds 2.0 MiB of text (the largest part, prompt[0].text, 2.0 MiB), over the limit of 1 MiB"
        in lowered.value.message
    )
    assert await _stored_turns(lowering, session.id) == []
