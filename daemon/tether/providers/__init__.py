"""Providers: model backends behind one streaming interface.

Owns: `Provider` and the normalised stream events (`base.py`), the `scripted` provider
(`scripted.py`), and picking a provider from settings (`select.py`). Must not: touch
history, tools or the client; a provider turns a `ModelRequest` into events and
nothing else. Credentials stay inside the provider object.
"""

from .base import (
    Finish,
    ModelRequest,
    Provider,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)

__all__ = [
    "Finish",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "UsageReport",
]
