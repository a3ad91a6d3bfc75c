"""Prompts a client author gets wrong, through a real `tether serve`: each is refused with
-32602 naming the method, the field and what to send, and nothing is stored or run."""

from __future__ import annotations

from pathlib import Path

import pytest
from tether_client import ClientError


async def _stored_turns(daemon, session_id: str) -> list[dict]:
    return list((await daemon.client.request("_tether/session/report", {"sessionId": session_id}))["reports"])


async def test_an_empty_prompt_is_refused_and_nothing_is_stored(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("session/prompt", {"sessionId": session.id, "prompt": []})
    assert refused.value.code == -32602
    assert refused.value.message.endswith(
        'invalid params for session/prompt: prompt is an empty list; send at least one content block, '
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
    params = {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}], "_meta": {"tether": {"steer": "yes"}}}
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("session/prompt", params)
    assert refused.value.code == -32602
    assert "invalid params for session/prompt: _meta.tether.steer must be true or false, not 'yes'; " \
        "send true to join the running turn" in refused.value.message
    assert await _stored_turns(daemon, session.id) == []
