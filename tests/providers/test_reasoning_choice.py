"""A session's reasoning choice in the request body (`ModelRequest.reasoning`): OpenAI's
`reasoning_effort`, Anthropic's thinking budget; and which models take them."""

from __future__ import annotations

import pytest

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ModelRequest
from tether.providers.messages_anthropic import takes_thinking
from tether.providers.messages_openai import takes_reasoning_effort
from tether.providers.openai import OpenAIProvider


def request(reasoning: str) -> ModelRequest:
    return ModelRequest(system="s", messages=[], tools=[], reasoning=reasoning)


@pytest.mark.parametrize(("reasoning", "sent"), [("", None), ("default", None), ("low", "low"), ("high", "high")])
def test_openai_sends_reasoning_effort_only_when_chosen(reasoning: str, sent: str | None) -> None:
    body = OpenAIProvider(model="o3").build_body(request(reasoning))
    assert body.get("reasoning_effort") == sent


def test_anthropic_choice_wins_over_the_provider_budget() -> None:
    provider = AnthropicProvider(model="claude-sonnet-4-5", thinking_budget=2048)
    assert provider.build_body(request(""))["thinking"]["budget_tokens"] == 2048
    assert "thinking" not in provider.build_body(request("off"))
    high = provider.build_body(request("high"))
    assert high["thinking"] == {"type": "enabled", "budget_tokens": 24_000} and high["max_tokens"] > 24_000


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("o3", True),
        ("o4-mini", True),
        ("openai/o1", True),
        ("gpt-5", True),
        ("gpt-5.1-codex", True),
        ("gpt-4o", False),
        ("gpt-4.1", False),
        ("qwen3:8b", False),
        ("omni", False),
    ],
)
def test_which_openai_models_take_reasoning_effort(model: str, takes: bool) -> None:
    assert takes_reasoning_effort(model) is takes


def test_the_reasoning_models_setting_adds_models() -> None:
    assert takes_reasoning_effort("gpt-oss:20b", ["gpt-oss*"]) and not takes_reasoning_effort("gpt-oss:20b")


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("claude-sonnet-4-5", True),
        ("claude-opus-4-1-20250805", True),
        ("claude-3-7-sonnet-latest", True),
        ("claude-haiku-4-5", True),
        ("claude-3-5-haiku-latest", False),
        ("claude-3-opus", False),
    ],
)
def test_which_anthropic_models_think(model: str, takes: bool) -> None:
    assert takes_thinking(model) is takes
