"""Choosing the provider: explicit settings first, then what the machine offers.

Owns: the order: configuration, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, a local OpenAI-compatible server on
127.0.0.1 (Ollama, llama.cpp, LM Studio), else an error saying how to configure one (the reason doctor prints).
Must not: probe anything but loopback, or put a key anywhere but the provider object.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio

from tether_protocol import ConfigInvalid, NoProviderConfigured

from ..config import Settings
from .base import Provider

# The HTTP layer (wire.py, h11) is imported only when a network provider is used: a daemon
# on the scripted provider never pays for them (~8 MB of RSS, ~60 ms of imports); nor
# does a network provider's daemon import the scripted one.

HOW_TO_CONFIGURE = (
    "set ANTHROPIC_API_KEY or OPENAI_API_KEY, start a local server (Ollama, llama.cpp, "
    "LM Studio), or choose one explicitly: `tether serve --provider openai|anthropic|scripted`, "
    "TETHER_PROVIDER, `provider = \"...\"` in ~/.config/tether/config.toml, or "
    "initializationOptions {\"provider\": ...}; `tether doctor` shows what was found"
)
DEFAULT_MODELS = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
LOCAL_SERVERS: tuple[tuple[str, int], ...] = (("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234))
_PROBE_TIMEOUT_S = 0.3


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    provider: str
    model: str
    base_url: str
    reason: str
    key_env: str = ""
    api_key: str = ""  # secret: never shown (see __repr__)

    def __repr__(self) -> str:
        key = "***" if self.api_key else ""
        return (
            f"ProviderChoice(provider={self.provider!r}, model={self.model!r}, "
            f"base_url={self.base_url!r}, reason={self.reason!r}, api_key={key!r})"
        )


def _local_ports(env: Mapping[str, str]) -> tuple[tuple[str, int], ...]:
    # TETHER_PROBE_PORTS narrows (or, empty, disables) the local probe.
    raw = env.get("TETHER_PROBE_PORTS")
    if raw is None:
        return LOCAL_SERVERS
    return tuple(("local server", int(p)) for p in raw.split(",") if p.strip().isdigit())


async def probe_local(env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(label, base_url, first model) of the first local server that answers, in order."""
    servers = _local_ports(env)
    if not servers:
        return None
    found: dict[int, tuple[str, str, str]] = {}

    async def probe(label: str, port: int) -> None:
        base = f"http://127.0.0.1:{port}/v1"
        models = await _models_at(base, _PROBE_TIMEOUT_S)
        if models:
            found[port] = (label, base, models[0])

    async with anyio.create_task_group() as group:
        for label, port in servers:
            group.start_soon(probe, label, port)
    for _label, port in servers:
        if port in found:
            return found[port]
    return None


async def choose_provider(settings: Settings, env: Mapping[str, str] | None = None) -> ProviderChoice:
    env = os.environ if env is None else env
    name = settings.provider
    if name in ("scripted", "replay"):
        return ProviderChoice(name, settings.model, "", f"provider = {name} ({settings.sources.get('provider')})")
    if name in ("openai", "anthropic"):
        key = settings.api_key or env.get(KEY_ENV[name], "")
        base = settings.base_url or env.get(BASE_URL_ENV[name], "") or DEFAULT_BASE_URLS[name]
        model = settings.model
        if not model and name == "openai" and not key:
            local = await _models_at(base)
            model = local[0] if local else ""
        return ProviderChoice(
            name, model or DEFAULT_MODELS[name], base,
            f"provider = {name} ({settings.sources.get('provider')})", KEY_ENV[name], key,
        )
    for candidate in ("anthropic", "openai"):
        key = env.get(KEY_ENV[candidate], "")
        if key:
            base = settings.base_url or env.get(BASE_URL_ENV[candidate], "") or DEFAULT_BASE_URLS[candidate]
            return ProviderChoice(
                candidate, settings.model or DEFAULT_MODELS[candidate], base,
                f"{KEY_ENV[candidate]} is set", KEY_ENV[candidate], key,
            )
    probed = await probe_local(env)
    if probed is not None:
        label, base, model = probed
        return ProviderChoice(
            "openai", settings.model or model, base,
            f"{label} answered at {base} (first model listed: {model})", "OPENAI_API_KEY", "",
        )
    raise NoProviderConfigured(f"no model provider is configured: {HOW_TO_CONFIGURE}")


async def _models_at(base: str, timeout: float = 2.0) -> list[str]:
    """The model ids a local server lists (no proxy: loopback), or [] for any failure."""
    from .wire import WireClient, get_json

    client = WireClient(base, {}, connect=timeout)
    try:
        data = await get_json(client, f"{base}/models", {}, timeout)
        return [m["id"] for m in data.get("data", []) if "id" in m]
    except Exception:
        return []
    finally:
        await client.aclose()


def build_provider(choice: ProviderChoice, settings: Settings) -> Provider:
    if choice.provider == "scripted":
        retry = None
    else:
        from .http import RetryPolicy

        retry = RetryPolicy(max_retries=settings.max_retries)
    window = settings.context_window or None
    provider: Provider
    if choice.provider == "scripted":
        from .scripted import ScriptedProvider, ScriptError

        if not settings.script:
            raise ConfigInvalid(
                "provider 'scripted' needs a script file: pass --script FILE or set TETHER_SCRIPT"
            )
        try:
            provider = ScriptedProvider.from_file(Path(settings.script))
        except ScriptError as exc:
            raise ConfigInvalid(str(exc)) from None
        if window:
            provider.context_window = window
    elif choice.provider == "replay":
        from .replay import ReplayProvider

        if not settings.cassette:
            raise ConfigInvalid("provider 'replay' needs a cassette: pass --cassette FILE or set TETHER_CASSETTE")
        provider = ReplayProvider.from_file(Path(settings.cassette), retry=retry)
    elif choice.provider == "openai":
        from .openai import OpenAIProvider

        provider = OpenAIProvider(
            model=choice.model, base_url=choice.base_url, api_key=choice.api_key,
            key_env=choice.key_env, context_window=window, retry=retry,
            max_output_tokens=settings.max_output_tokens,
        )
    elif choice.provider == "anthropic":
        from .anthropic import AnthropicProvider

        provider = AnthropicProvider(
            model=choice.model, base_url=choice.base_url, api_key=choice.api_key,
            key_env=choice.key_env, context_window=window, retry=retry,
            max_output_tokens=settings.max_output_tokens,
        )
    else:
        raise ConfigInvalid(f"unknown provider {choice.provider!r}")
    if settings.record:
        from .record import RecordingProvider

        provider = RecordingProvider(provider, Path(settings.record))
    return provider


async def make_provider(settings: Settings, env: Mapping[str, str] | None = None) -> Provider:
    return build_provider(await choose_provider(settings, env), settings)
