"""The model picker filled from the provider's model list, the reasoning option, `/model`
and `/clear`, over the real daemon (SPEC §3.36, §4.11).

`tether serve --provider openai|anthropic` against `LocalHTTPServer`, which answers the
daemon's background `GET /models` from `server.models` (recorded in `server.listings`) and
records every model request: a choice shows in the body of the NEXT request.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
from local_http import LocalHTTPServer, Reply
from test_real_provider_turn import FAKE_KEY, KEY_ENV, serve_command, text_chunks

OPENAI_MODELS = [
    {"id": "m", "object": "model", "owned_by": "test"},
    {"id": "o3", "object": "model", "owned_by": "test"},
    {"id": "gpt-4.1", "object": "model", "owned_by": "test"},
]
ANTHROPIC_MODELS = [
    {
        "type": "model",
        "id": "claude-sonnet-4-5",
        "display_name": "Claude Sonnet 4.5",
        "created_at": "2025-09-29T00:00:00Z",
    },
    {
        "type": "model",
        "id": "claude-3-5-haiku-latest",
        "display_name": "Claude Haiku 3.5",
        "created_at": "2024-10-22T00:00:00Z",
    },
]


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    (found,) = [o for o in options if o["id"] == config_id]
    return found


def values(opt: dict[str, Any]) -> list[str]:
    return [o["value"] for o in opt["options"]]


async def options_update(session: Any, timeout: float = 15.0) -> list[dict[str, Any]]:
    """The configOptions of the session's latest `config_option_update` (waits for one)."""

    async def first() -> list[dict[str, Any]]:
        while True:
            found = [u for u in session.updates if u["sessionUpdate"] == "config_option_update"]
            if found:
                return list(found[-1]["configOptions"])
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(first(), timeout)


async def ask(session: Any, text: str = "hello") -> list[dict[str, Any]]:
    turn = session.prompt(text)
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    return updates


def notices(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u.get("_meta", {}).get("tether", {}).get("notice"))


async def test_the_provider_s_models_fill_the_picker_and_reasoning_effort_reaches_the_request(
    spawn_daemon, workspace: Path
) -> None:
    async with LocalHTTPServer() as server:
        server.models = OPENAI_MODELS
        server.queue(*(Reply(chunks=text_chunks("openai", "ok")) for _ in range(3)))
        daemon = await spawn_daemon(
            command=serve_command("openai", server), env={"OPENAI_API_KEY": FAKE_KEY, "TETHER_MODELS": "big-model"}
        )
        session = await daemon.client.new_session(workspace)
        options = await options_update(session)  # the list arrives after the answer
        assert values(option(options, "model")) == ["m", "big-model", "o3", "gpt-4.1"]
        assert [o["id"] for o in options] == ["model", "mode"]  # "m" takes no reasoning effort
        assert len(server.listings) == 1 and server.listings[0].path == "/v1/models"
        assert server.listings[0].headers["authorization"] == f"Bearer {FAKE_KEY}"

        answer = await daemon.client.request(
            "session/set_config_option", {"sessionId": session.id, "configId": "model", "value": "o3"}
        )
        reasoning = option(answer["configOptions"], "reasoning")
        assert reasoning["category"] == "thought_level"
        assert values(reasoning) == ["default", "low", "medium", "high"] and reasoning["currentValue"] == "default"
        await ask(session)
        answer = await daemon.client.request(
            "session/set_config_option", {"sessionId": session.id, "configId": "reasoning", "value": "high"}
        )
        assert option(answer["configOptions"], "reasoning")["currentValue"] == "high"
        await ask(session)
        # a model that takes no reasoning effort: the option goes, and the choice with it
        await daemon.client.request("session/set_model", {"sessionId": session.id, "modelId": "gpt-4.1"})
        await ask(session)
        other = await daemon.client.new_session(workspace)  # the list is fetched once per daemon
        assert values(option(other.info["configOptions"], "model")) == ["m", "big-model", "o3", "gpt-4.1"]

    bodies = [r.body for r in server.requests]
    assert [(b["model"], b.get("reasoning_effort")) for b in bodies] == [
        ("o3", None),
        ("o3", "high"),
        ("gpt-4.1", None),
    ]
    assert len(server.listings) == 1


async def test_a_provider_without_a_model_list_keeps_the_configured_models(spawn_daemon, workspace: Path) -> None:
    async with LocalHTTPServer() as server:
        server.models = None  # GET /models answers 404
        server.queue(Reply(chunks=text_chunks("openai", "ok")))
        daemon = await spawn_daemon(
            command=serve_command("openai", server), env={"OPENAI_API_KEY": FAKE_KEY, "TETHER_MODELS": "m,big-model"}
        )
        session = await daemon.client.new_session(workspace)
        for _ in range(200):  # the listing was asked for, and refused
            if server.listings:
                break
            await asyncio.sleep(0.02)
        updates = await ask(session)
        assert len(server.listings) == 1
        assert values(option(session.info["configOptions"], "model")) == ["m", "big-model"]
    assert not [u for u in session.updates if u["sessionUpdate"] == "config_option_update"]
    assert not notices(updates)  # a log line, not the user's problem
    assert "error" not in daemon.stderr().lower()


async def test_anthropic_lists_models_with_their_names_and_the_thinking_budget_is_sent(
    spawn_daemon, workspace: Path
) -> None:
    async with LocalHTTPServer() as server:
        server.models = ANTHROPIC_MODELS
        server.queue(*(Reply(chunks=text_chunks("anthropic", "ok")) for _ in range(2)))
        command = [*serve_command("anthropic", server)[:-2], "--model", "claude-sonnet-4-5"]
        daemon = await spawn_daemon(command=command, env={KEY_ENV["anthropic"]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        options = await options_update(session)
        model = option(options, "model")
        assert [(o["value"], o["name"]) for o in model["options"]] == [
            ("claude-sonnet-4-5", "Claude Sonnet 4.5"),
            ("claude-3-5-haiku-latest", "Claude Haiku 3.5"),
        ]
        thinking = option(options, "reasoning")
        assert thinking["name"] == "Thinking" and thinking["currentValue"] == "off"
        assert values(thinking) == ["off", "low", "medium", "high"]
        assert server.listings[0].path == "/v1/models?limit=1000"
        assert server.listings[0].headers["x-api-key"] == FAKE_KEY
        await ask(session)
        await daemon.client.request(
            "session/set_config_option", {"sessionId": session.id, "configId": "reasoning", "value": "medium"}
        )
        await ask(session)
    first, second = (r.body for r in server.requests)
    assert "thinking" not in first
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert second["max_tokens"] > 10_000


async def test_the_reasoning_choice_survives_a_restart_and_a_snapshot(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    async with LocalHTTPServer() as server:
        server.models = OPENAI_MODELS
        server.queue(Reply(chunks=text_chunks("openai", "ok")))
        env = {"OPENAI_API_KEY": FAKE_KEY}
        command = [*serve_command("openai", server)[:-2], "--model", "o3"]
        first = await spawn_daemon(command=command, env=env)
        session = await first.client.new_session(workspace)
        await options_update(session)
        await first.client.request(
            "session/set_config_option", {"sessionId": session.id, "configId": "reasoning", "value": "low"}
        )
        await first.client.close()

        second = await spawn_daemon(command=command, env=env)
        loaded = await second.client.load_session(session.id, workspace)
        if not any(o["id"] == "reasoning" for o in loaded.info["configOptions"]):
            loaded_options = await options_update(loaded)  # the provider was not known yet
        else:
            loaded_options = loaded.info["configOptions"]
        assert option(loaded_options, "reasoning")["currentValue"] == "low"
        snapshot = await second.client.request("_tether/session/dump", {"sessionId": session.id})
        other = tmp_path / "other"
        other.mkdir()
        restored = await second.client.request("_tether/session/restore", {"snapshot": snapshot, "cwd": str(other)})
        resumed = await second.client.resume_session(restored["sessionId"], other)
        assert option(resumed.info["configOptions"], "reasoning")["currentValue"] == "low"
        await ask(resumed)
    assert server.requests[-1].body["reasoning_effort"] == "low"


async def test_slash_model_lists_and_switches_the_model(spawn_daemon, workspace: Path) -> None:
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=text_chunks("openai", "ok")))
        daemon = await spawn_daemon(
            command=serve_command("openai", server), env={"OPENAI_API_KEY": FAKE_KEY, "TETHER_MODELS": "m,big-model"}
        )
        session = await daemon.client.new_session(workspace)
        await daemon.client.request("session/list", {})  # the command list is in before this answer
        commands = [u for u in session.updates if u["sessionUpdate"] == "available_commands_update"]
        assert "model" in [c["name"] for c in commands[-1]["availableCommands"]]
        listed = notices(await ask(session, "/model"))
        assert "m (current)" in listed and "big-model" in listed
        wrong = notices(await ask(session, "/model nope"))
        assert "'nope' is not one of them" in wrong
        switched = await ask(session, "/model big-model")
        assert "model: big-model" in notices(switched)
        (update,) = [u for u in switched if u["sessionUpdate"] == "config_option_update"]
        assert option(update["configOptions"], "model")["currentValue"] == "big-model"
        await ask(session)
    assert [r.body["model"] for r in server.requests] == ["big-model"]  # the commands asked no model


async def test_clear_opens_a_new_session_for_a_client_that_declares_it(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon(initialize=False, env={"TETHER_MODELS": "a,b"})
    caps = {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "_meta": {"tether": {"clearSession": True, "namedPermissionOptions": True}},
    }
    await daemon.client.initialize(clientCapabilities=caps)
    session = await daemon.client.new_session(workspace)
    await daemon.client.request("session/set_model", {"sessionId": session.id, "modelId": "b"})
    await ask(session)
    updates = await ask(session, "/clear")
    assert "a new conversation starts" in notices(updates)
    (cleared,) = [p for m, p in daemon.client.notifications if m == "_tether/session/cleared"]
    assert cleared["sessionId"] == session.id and cleared["newSessionId"] != session.id
    assert option(cleared["configOptions"], "model")["currentValue"] == "b"  # same choices
    new = await daemon.client.load_session(cleared["newSessionId"], workspace)
    assert not [u for u in new.replay if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")]
    assert option(new.info["configOptions"], "model")["currentValue"] == "b"
    listed = await daemon.client.request("session/list", {"cwd": str(workspace)})
    assert session.id in [s["sessionId"] for s in listed["sessions"]]  # the old one is kept


async def test_clear_explains_how_in_a_client_that_does_not_declare_it(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    updates = await ask(session, "/clear")
    assert "start a new session in your editor" in notices(updates)
    assert not [m for m, _p in daemon.client.notifications if m == "_tether/session/cleared"]


async def test_a_first_prompt_sent_the_instant_the_session_opens_streams_and_the_picker_still_fills(
    spawn_daemon, workspace: Path
) -> None:
    """The warm-up puts the model list (and the imports only later requests need) after a
    first prompt that is already running: the prompt still gets its whole reply, and the
    list still comes."""
    async with LocalHTTPServer() as server:
        server.models = OPENAI_MODELS
        server.queue(Reply(chunks=text_chunks("openai", "cold ", "start ", "reply")))
        daemon = await spawn_daemon(command=serve_command("openai", server), env={"OPENAI_API_KEY": FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        updates = await ask(session, "hi")  # written as soon as `session/new` is answered
        assert "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk") == (
            "cold start reply"
        )
        assert [r.path for r in server.requests] == ["/v1/chat/completions"]
        options = await options_update(session)
        assert values(option(options, "model")) == ["m", "o3", "gpt-4.1"]
        assert [r.path for r in server.listings] == ["/v1/models"]
