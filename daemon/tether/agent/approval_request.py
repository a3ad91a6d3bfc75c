"""The approval request for one tool call: what the gate and the user are shown.

Owns: `approval_request` (the call's arguments as JSON, its paths, previews, locations and
the command's sandbox as the gate sees them).
Must not: decide or ask (the gate does) or run the call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..approvals import ApprovalRequest
from .tool_view import asked_locations, known_locations, safe_title

if TYPE_CHECKING:
    from ..sandbox import SandboxChoice
    from ..tools.base import ChangePreview, Tool
    from .session import AgentSession
    from .state import PendingCall


def approval_request(
    session: AgentSession,
    call: PendingCall,
    tool: Tool[Any],
    args: object,
    previews: list[ChangePreview],
    confined: SandboxChoice | None,
) -> ApprovalRequest:
    """What the gate is asked about one call (`previews`: the changes it would make; `confined`:
    the OS sandbox a command would run in, None for other tools)."""
    shown = tool.dump(args)  # the typed args as JSON, defaults filled in
    command = shown.get("command") if tool.kind == "execute" else None
    sandbox = session.sandbox
    return ApprovalRequest(
        session_id=session.id,
        call_id=call.call_id,
        tool_name=tool.name,
        kind=tool.kind,
        title=safe_title(tool, args),
        arguments=shown,
        mode=session.mode,
        command=command if isinstance(command, str) else None,
        cwd=str(shown.get("cwd") or "."),
        # a file outside the workspace (the user's MEMORY.md) is named in full
        rel_paths=[
            sandbox.relative(Path(p.path)) if Path(p.path).is_relative_to(sandbox.root) else p.path for p in previews
        ],
        previews=previews,
        locations=asked_locations(known_locations(tool, args, session), previews),
        sandboxed=confined is not None and confined.sandboxed,  # else always asked
        sandbox_backend=confined.sandbox.name if confined is not None and confined.sandbox else "",
        sandbox_note="" if confined is None or confined.sandboxed else confined.reason,
        detail=tool.approval_text(args),
    )
