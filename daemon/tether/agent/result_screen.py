"""What a tool result goes through before the model sees it (and the history keeps it).

Owns: `screened`: secrets masked first (secret_mask.py, unless the user turned it off),
then the input guard's check (guard.py), each with its notice to the user.
Must not: change a result otherwise, or run per streamed delta (once per result).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .secret_mask import mask_secrets
from .sink import Notice

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..tools.base import ToolResult
    from .guard import InputGuard

__all__ = ["screened"]


def screened(
    result: ToolResult, tool_name: str, guard: InputGuard, mask: bool, emit: Callable[[Notice], None]
) -> ToolResult:
    """Tool output is untrusted: files and command output (a failing one's too) can carry
    injections, and secrets."""
    if mask:
        masked = mask_secrets(result.text)
        if masked.count:
            emit(Notice(f"\n{masked.notice()}\n"))
            result = dataclasses.replace(result, text=masked.text)
    checked = guard.check_tool_result(result.text, tool_name)
    if checked.notice:
        note = checked.notice if checked.notice.startswith("[") else f"[{checked.notice}]"
        emit(Notice(f"\n{note}\n"))
    if checked.blocked:
        return dataclasses.replace(result, text=checked.text, is_error=True)
    return result
