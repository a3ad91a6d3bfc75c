"""Choosing the provider from settings.

Owns: turning `Settings` into a `Provider`, with an error that says exactly how to
configure one when nothing is set. Must not: probe the network (the providers issue adds
zero-configuration discovery here).
"""

from __future__ import annotations

from pathlib import Path

from tether_protocol._errors import ConfigInvalid, NoProviderConfigured

from ..config import Settings
from .base import Provider
from .scripted import ScriptedProvider, ScriptError

HOW_TO_CONFIGURE = (
    "set one with `tether serve --provider scripted --script FILE`, the TETHER_PROVIDER "
    "environment variable, `provider = \"...\"` in ~/.config/tether/config.toml, or "
    "initializationOptions {\"provider\": ...}"
)


def make_provider(settings: Settings) -> Provider:
    if settings.provider == "scripted":
        if not settings.script:
            raise ConfigInvalid(
                "provider 'scripted' needs a script file: pass --script FILE or set TETHER_SCRIPT"
            )
        try:
            provider = ScriptedProvider.from_file(Path(settings.script))
        except ScriptError as exc:
            raise ConfigInvalid(str(exc)) from None
        if settings.context_window:
            provider.context_window = settings.context_window
        return provider
    if settings.provider:
        raise NoProviderConfigured(
            f"provider {settings.provider!r} is not available in this build yet; "
            f"use 'scripted' ({HOW_TO_CONFIGURE})"
        )
    raise NoProviderConfigured(f"no model provider is configured: {HOW_TO_CONFIGURE}")
