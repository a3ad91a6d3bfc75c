"""ACP's `session/prompt` params and result (SPEC §3.8).

Owns: naming them for Tether: `PromptParams`, `PromptResult` are generated (`acp_v1/prompt.py`),
their `_meta.tether` is `_queue`'s (re-exported by `_sessions` on first use; their own
module keeps content blocks off the start path: docs/decisions/0017). Must not: hold behaviour.
"""

from __future__ import annotations

from ._queue import PromptResultMeta, PromptTetherMeta
from .acp_v1.prompt import PromptParams, PromptResult

__all__ = ["PromptParams", "PromptResult", "PromptResultMeta", "PromptTetherMeta"]
