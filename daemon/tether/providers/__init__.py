"""Providers: model backends behind one streaming interface.

Owns: `Provider` and the normalised stream events (`base.py`), the `scripted` provider
(`scripted.py`), and picking a provider from settings (`select.py`). Must not: touch
history, tools or the client; a provider turns a `ModelRequest` into events and
nothing else. Credentials stay inside the provider object.
"""

import sys

# httpx's package imports its command line (`httpx._main`: click, rich, pygments; ~45 ms
# of CPU) whenever click is installed, and it is (the MCP SDK's uvicorn needs it). The
# providers no longer use httpx (wire.py), but the MCP SDK's HTTP transports do; the
# daemon never runs that command line: marked absent, httpx keeps its stub.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

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
