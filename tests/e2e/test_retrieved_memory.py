"""Retrieved memory over real stdio: earlier sessions' messages matching a prompt reach the
model (the scripted provider answers according to what its request held) and the user is
shown the same hits; off by default, and a workspace cannot turn it on."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

FACT = "The deploy script lives in tools/ship.sh and needs the --staging flag"


def script(tmp_path: Path) -> Path:
    path = tmp_path / "recall.json"
    path.write_text(
        json.dumps(
            {
                "replies": [
                    # the request's prompt carries the block, ahead of the user's own words
                    {
                        "when": {"user": r"(?s)^<retrieved_memory>.*ship\.sh.*</retrieved_memory>how do I deploy"},
                        "text": "MEMORY-SEEN",
                    },
                    {"text": "NO-MEMORY"},
                ]
            }
        )
    )
    return path


def user_config(tmp_path: Path, text: str) -> None:
    config = tmp_path / "xdg-config" / "tether" / "config.toml"  # XDG_CONFIG_HOME of daemon_env
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


async def ask(session, text: str) -> tuple[str, list[dict]]:
    turn = session.prompt(text)
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    said = "".join(
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and not u.get("_meta", {}).get("tether", {}).get("notice")
    )
    return said, updates


def memory_meta(updates: list[dict]) -> list[dict]:
    return [u["_meta"]["tether"]["memory"] for u in updates if "memory" in u.get("_meta", {}).get("tether", {})]


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
async def test_an_earlier_session_is_recalled_given_to_the_model_and_shown(
    spawn_daemon, workspace: Path, tmp_path: Path, framing: str
) -> None:
    user_config(tmp_path, 'memory = "on"\nmemory_tokens = 400\n')
    daemon = await spawn_daemon(script=script(tmp_path), framing=framing)
    earlier = await daemon.client.new_session(workspace)
    assert (await ask(earlier, FACT))[0] == "NO-MEMORY"  # nothing earlier to recall
    await ask(earlier, "unrelated words about the weather")

    later = await daemon.client.new_session(workspace)
    said, updates = await ask(later, "how do I deploy with the ship script?")
    assert said == "MEMORY-SEEN"
    (meta,) = memory_meta(updates)
    assert 0 < meta["tokens"] <= 400
    (hit,) = [h for h in meta["hits"] if h["role"] == "user"]
    assert hit["sessionId"] == earlier.id and hit["messageSeq"] == 0
    assert "ship.sh" in hit["snippet"] and "weather" not in json.dumps(meta)
    notice = next(u for u in updates if "memory" in u.get("_meta", {}).get("tether", {}))
    assert notice["content"]["text"].startswith("\n[memory: ") and f"{FACT[:40]}" in notice["content"]["text"]
    # the session's own messages are never recalled into it
    said, updates = await ask(later, "how do I deploy, once more")
    assert all(h["sessionId"] == earlier.id for m in memory_meta(updates) for h in m["hits"])


async def test_off_by_default_and_a_workspace_config_cannot_turn_it_on(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text('memory = "on"\n')
    daemon = await spawn_daemon(script=script(tmp_path))
    earlier = await daemon.client.new_session(workspace)
    _, first = await ask(earlier, FACT)
    refused = "".join(u["content"]["text"] for u in first if u.get("_meta", {}).get("tether", {}).get("notice"))
    assert "a workspace must not turn on retrieved memory" in refused  # told in the first turn
    later = await daemon.client.new_session(workspace)
    said, updates = await ask(later, "how do I deploy with the ship script?")
    assert said == "NO-MEMORY" and memory_meta(updates) == []
