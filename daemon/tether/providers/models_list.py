"""The models a provider offers (`GET /models`, Anthropic's `GET /v1/models`), for the model picker.

Owns: asking the provider's own HTTP client for its model ids and display names, with a timeout, and
reading the OpenAI, Anthropic and OpenRouter answer shapes.
Must not: choose a model, change the provider, retry, or raise (a failure is `None` and a log line).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from .base import Provider

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai import OpenAIProvider

log = logging.getLogger("tether.providers")

LIST_TIMEOUT_S = 10.0
# OpenRouter lists hundreds; a picker of more is no picker.
MAX_LISTED = 200


@dataclass(frozen=True, slots=True)
class ListedModel:
    id: str
    name: str  # what a picker shows: the provider's display name, else the id


@dataclass(frozen=True, slots=True)
class ModelCatalog:
    """What the daemon learnt of its provider for the pickers, once per daemon."""

    kind: str  # the provider's name: "openai", "anthropic", "scripted", ...
    listed: tuple[ListedModel, ...] = ()


def kind_of(provider: Provider) -> str:
    inner = getattr(provider, "inner", None)  # a recording or a replay of another provider
    return inner.name if isinstance(inner, Provider) else provider.name


def _http_provider(provider: Provider) -> OpenAIProvider | AnthropicProvider | None:
    """The OpenAI-compatible or Anthropic provider doing the HTTP (a recording wraps one);
    None for the scripted provider and a replay (which must not send what it did not record)."""
    from .anthropic import AnthropicProvider
    from .openai import OpenAIProvider
    from .record import RecordingProvider

    if isinstance(provider, RecordingProvider):
        provider = provider.inner
    return provider if isinstance(provider, (OpenAIProvider, AnthropicProvider)) else None


def parse(answer: Any) -> list[ListedModel]:
    """The models of a `/models` answer (both APIs put them under "data"), in its order."""
    entries = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(entries, list):
        raise ValueError('the answer has no "data" list of models')
    found: dict[str, ListedModel] = {}
    for entry in entries:
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model_id, str) or not model_id or model_id in found:
            continue
        name = entry.get("display_name") or entry.get("name")
        found[model_id] = ListedModel(model_id, name if isinstance(name, str) and name else model_id)
    return list(found.values())[:MAX_LISTED]


async def list_models(provider: Provider, timeout: float = LIST_TIMEOUT_S) -> list[ListedModel] | None:
    """The provider's models, or None when it has no list to give (see the module docstring)."""
    from .anthropic import AnthropicProvider

    http = _http_provider(provider)
    if http is None:
        return None
    path = "/v1/models?limit=1000" if isinstance(http, AnthropicProvider) else "/models"
    where = f"{http.name} ({getattr(http, 'base_url', '')}{path.partition('?')[0]})"
    try:
        with anyio.fail_after(timeout):
            answer = await http.client.get_json(path)
        models = parse(answer)
    except Exception as exc:
        reason = "no answer in time" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
        log.info("the model picker keeps the configured models: %s did not list models: %s", where, reason)
        return None
    log.info("%s lists %d models for the model picker", where, len(models))
    return models
