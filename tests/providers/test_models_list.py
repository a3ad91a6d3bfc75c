"""`models_list.list_models`: the provider's own model list over real HTTP (a local server),
with a timeout, and `None` (never an exception) for every way it can fail."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply, json_reply

from tether.providers.anthropic import AnthropicProvider
from tether.providers.models_list import MAX_LISTED, ListedModel, list_models
from tether.providers.openai import OpenAIProvider
from tether.providers.scripted import ScriptedProvider


async def test_openai_compatible_ids_in_order_with_router_names() -> None:
    async with LocalHTTPServer() as server:
        server.models = [{"id": "gpt-4.1"}, {"id": "openai/o3", "name": "OpenAI: o3"}, {"id": "gpt-4.1"}, {"x": 1}]
        provider = OpenAIProvider(model="m", base_url=server.url + "/v1", api_key="sk-x")
        try:
            found = await list_models(provider)
        finally:
            await provider.aclose()
    assert found == [ListedModel("gpt-4.1", "gpt-4.1"), ListedModel("openai/o3", "OpenAI: o3")]
    assert server.listings[0].headers["authorization"] == "Bearer sk-x"


async def test_anthropic_asks_v1_models_with_its_headers() -> None:
    async with LocalHTTPServer() as server:
        server.models = [{"type": "model", "id": "claude-opus-4-1", "display_name": "Claude Opus 4.1"}]
        provider = AnthropicProvider(model="claude-opus-4-1", base_url=server.url, api_key="sk-ant")
        try:
            found = await list_models(provider)
        finally:
            await provider.aclose()
    assert found == [ListedModel("claude-opus-4-1", "Claude Opus 4.1")]
    (seen,) = server.listings
    assert seen.path == "/v1/models?limit=1000"
    assert seen.headers["x-api-key"] == "sk-ant" and seen.headers["anthropic-version"]


async def test_a_long_list_is_capped() -> None:
    async with LocalHTTPServer() as server:
        server.models = [{"id": f"model-{i}"} for i in range(MAX_LISTED + 50)]
        provider = OpenAIProvider(model="m", base_url=server.url + "/v1")
        try:
            found = await list_models(provider)
        finally:
            await provider.aclose()
    assert found is not None and len(found) == MAX_LISTED and found[0].id == "model-0"


@pytest.mark.parametrize(
    "reply",
    [
        json_reply(404, {"error": {"message": "Not Found"}}),
        json_reply(200, {"models": ["a"]}),  # another shape
        Reply(status=200, chunks=[b"<html>proxy login</html>"], headers={"content-type": "text/html"}),
    ],
    ids=["404", "other-shape", "not-json"],
)
async def test_failures_are_none(reply: Reply) -> None:
    async with LocalHTTPServer() as server:
        server.queue(reply)
        provider = OpenAIProvider(model="m", base_url=server.url + "/v1")
        try:
            assert await list_models(provider) is None
        finally:
            await provider.aclose()
    assert len(server.requests) == 1


async def test_a_server_that_does_not_answer_in_time_is_none() -> None:
    async with LocalHTTPServer() as server:
        server.models_pause = 3.0
        provider = OpenAIProvider(model="m", base_url=server.url + "/v1")
        try:
            assert await list_models(provider, timeout=0.2) is None
        finally:
            await provider.aclose()
    assert len(server.listings) == 1


async def test_the_scripted_provider_has_no_list() -> None:
    provider = ScriptedProvider.from_file(Path(__file__).resolve().parents[2] / "examples" / "basic-turn.json")
    assert await list_models(provider) is None
