"""A hostile client against the size cap on what the user sends (`max_message_mib`, SPEC §3.12):
the bytes a prompt makes the daemon store and queue without being block text — a block's
`_meta`, its `mimeType`, a flood of empty blocks — count too. With the user's cap at 1 MiB,
each is refused `-32602` on v1 and v2, as a prompt and as a steered message, and the
session's history holds none of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from v2_window import V2Window

from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

PAD = "p" * (2 * 1024 * 1024)

OVER_THE_CAP: dict[str, list[dict[str, Any]]] = {
    "_meta": [{"type": "text", "text": "hi", "_meta": {"pad": PAD}}],
    "blocks": [{"type": "text", "text": ""}] * 100_000 + [{"type": "text", "text": "hi"}],
    "mimeType": [{"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": PAD}],
    "resource.mimeType": [{"type": "resource", "resource": {"uri": "file:///x", "text": "t", "mimeType": PAD}}],
}


@pytest.fixture
def one_mib_cap(tmp_path: Path) -> None:
    config = tmp_path / "xdg-config" / "tether" / "config.toml"  # XDG_CONFIG_HOME of daemon_env
    config.parent.mkdir(parents=True)
    config.write_text("max_message_mib = 1\n")


def _refusal_names_the_cap(error: ClientError, method: str) -> None:
    assert error.code == -32602, error.message[:300]
    assert f"invalid params for {method}: prompt holds " in error.message
    assert "over the limit of 1 MiB per message; nothing was stored" in error.message


@pytest.mark.usefixtures("one_mib_cap")
async def test_what_is_not_block_text_counts_on_v1(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon()
    client = daemon.client
    session = await client.new_session(workspace)
    for name, prompt in OVER_THE_CAP.items():
        for method in ("session/prompt", "_tether/session/steer"):
            with pytest.raises(ClientError) as refused:
                await client.request(method, {"sessionId": session.id, "prompt": prompt})
            _refusal_names_the_cap(refused.value, method)
            assert name in refused.value.message, refused.value.message[:300]
    await session.prompt("small").wait()  # the session serves on, and holds only that
    dumped = await client.request("_tether/session/dump", {"sessionId": session.id})
    users = [m["body"]["content"] for m in dumped["messages"] if m["role"] == "user"]
    assert users == [[{"type": "text", "text": "small"}]]


@pytest.mark.usefixtures("one_mib_cap")
async def test_a_plain_prompt_over_the_cap_in_bytes_not_characters_is_refused(spawn_daemon, workspace: Path) -> None:
    # a quarter of the cap in characters, each four UTF-8 bytes: 1 KiB over it (the handler
    # measures only a prompt that could be over, so a count of characters would let it in)
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    prompt = [{"type": "text", "text": "\U0001f600" * (256 * 1024 + 256)}]
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("session/prompt", {"sessionId": session.id, "prompt": prompt})
    _refusal_names_the_cap(refused.value, "session/prompt")
    assert "prompt[0].text, 1.0 MiB" in refused.value.message, refused.value.message[:300]
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert [m for m in dumped["messages"] if m["role"] == "user"] == []


@pytest.mark.usefixtures("one_mib_cap")
async def test_what_is_not_block_text_counts_on_v2(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon(initialize=False)
    window = V2Window(daemon.client)
    await window.initialize()
    session = await window.new_session(workspace)
    for name, prompt in OVER_THE_CAP.items():
        error = await window.refused("session/prompt", {"sessionId": session, "prompt": prompt, "idempotencyKey": name})
        _refusal_names_the_cap(error, "session/prompt")
    await window.prompt(session, "small", idempotencyKey="_meta")  # a refused prompt took no key
    await window.idle(session)
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session})
    users = [m["body"]["content"] for m in dumped["messages"] if m["role"] == "user"]
    assert users == [[{"type": "text", "text": "small"}]]


@pytest.mark.usefixtures("one_mib_cap")
async def test_a_prompt_under_the_cap_with_meta_and_many_blocks_is_taken(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    prompt = [{"type": "text", "text": "hi", "_meta": {"pad": "p" * 100_000}}] + [{"type": "text", "text": "."}] * 1000
    answer = await session.prompt(prompt).wait()
    assert answer["stopReason"] == "end_turn"


def test_a_meta_nested_past_the_stack_is_refused_in_words() -> None:
    """The cap measures a block's `_meta` by encoding it: one nested past Python's stack (the
    wire reader takes ~990 levels, the handler's encoder fewer) is a refusal, not `-32603`."""
    from tether.services.message_size import refuse_oversized
    from tether_protocol import InvalidParams, TextContent

    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidParams) as refused:
        refuse_oversized([TextContent("hi"), TextContent("hi", meta={"d": deep})], 8, "session/prompt")
    assert str(refused.value) == (
        "invalid params for session/prompt: prompt[1]._meta is nested too deeply; send a flatter _meta"
    )
