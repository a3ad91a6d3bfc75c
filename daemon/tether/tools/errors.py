"""The error a tool reports to the model.

Owns: `ToolError` (re-exported by `tools/base.py`, where tools import it from). It lives
apart so that the sandbox and the read ledger, which a session opens with, do not import
the tool interface and its argument validation (tools/args.py) before a turn needs them.
Must not: import anything.
"""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A failure the model should see as an error result (message is shown to the model)."""
