"""Choosing a provider: explicit settings, then keys in the environment, then loopback."""

from __future__ import annotations

import pytest
from local_http import LocalHTTPServer, json_reply

from tether.config import Settings, load_settings
from tether.providers.select import build_provider, choose_provider
from tether_protocol import NoProviderConfigured


def _settings(**flags) -> Settings:
    return load_settings(None, flags=flags, env={}, user_config=None)


async def test_explicit_provider_wins_over_keys_in_the_environment():
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "TETHER_PROBE_PORTS": ""}
    choice = await choose_provider(_settings(provider="openai", model="m1"), env)
    assert (choice.provider, choice.model, choice.api_key) == ("openai", "m1", "o")
    assert "provider = openai" in choice.reason


async def test_anthropic_key_comes_before_openai_key():
    env = {"ANTHROPIC_API_KEY": "sk-ant-SECRET", "OPENAI_API_KEY": "o", "TETHER_PROBE_PORTS": ""}
    choice = await choose_provider(_settings(), env)
    assert choice.provider == "anthropic" and choice.base_url == "https://api.anthropic.com"
    assert choice.reason == "ANTHROPIC_API_KEY is set"
    assert choice.api_key == "sk-ant-SECRET" and "SECRET" not in repr(choice)


async def test_openai_key_with_its_base_url():
    env = {"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "http://10.0.0.9/v1", "TETHER_PROBE_PORTS": ""}
    choice = await choose_provider(_settings(), env)
    assert (choice.provider, choice.base_url) == ("openai", "http://10.0.0.9/v1")


async def test_a_local_server_on_loopback_is_found_with_its_first_model():
    async with LocalHTTPServer() as server:
        server.queue(json_reply(200, {"data": [{"id": "qwen3:8b"}, {"id": "llama3"}]}))
        env = {"TETHER_PROBE_PORTS": f"1,{server.port}"}
        choice = await choose_provider(_settings(), env)
    assert (choice.provider, choice.model) == ("openai", "qwen3:8b")
    assert choice.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert "answered" in choice.reason
    assert server.requests[0].path == "/v1/models"


async def test_nothing_found_says_how_to_configure_a_provider():
    with pytest.raises(NoProviderConfigured) as err:
        await choose_provider(_settings(), {"TETHER_PROBE_PORTS": ""})
    message = err.value.message
    for hint in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "Ollama", "--provider", "tether doctor"):
        assert hint in message


async def test_settings_key_and_base_url_reach_the_built_provider():
    settings = _settings(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", max_retries=5)
    choice = await choose_provider(settings, {"TETHER_PROBE_PORTS": ""})
    provider = build_provider(choice, settings)
    try:
        assert provider.name == "openai" and provider.model == "m"
        assert provider.client.base_url == "http://127.0.0.1:9/v1"
    finally:
        await provider.aclose()
