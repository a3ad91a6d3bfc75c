"""A memory change Tether proposes itself: `/memory add` and the compaction's memory flush.

Owns: asking it exactly as a `remember` call, outside the conversation (dropped if the
daemon stops while asking; docs/decisions/0011-agent.md). Must not: write anything but
through the `remember` tool's write, or skip the gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..approvals import ApprovalRequest, AskerAnswer, Verdict
from ..tools.base import ToolContext, ToolError, ToolLocation, ToolResult
from ..tools.remember import RememberTool, memory_preview, write_memory
from .memory_files import HEADING, Scope
from .sink import ChangeContent, TextContent, ToolCallPatch, ToolCallStarted, TurnSink, failed

if TYPE_CHECKING:
    from tether_protocol import JsonObject

    from ..tools.base import ChangePreview
    from .session import AgentSession
    from .turn_services import TurnServices

__all__ = ["propose_memory_edit"]


class _NoAsker:
    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        return AskerAnswer("unavailable", detail="no way to ask the user was configured")


async def propose_memory_edit(
    session: AgentSession,
    services: TurnServices,
    sink: TurnSink,
    *,
    call_id: str,
    facts: list[str],
    scope: Scope = "workspace",
    title: str = "",
    heading: str = HEADING,
    quiet: bool = False,
) -> ToolResult:
    """Show the change adding `facts` to the MEMORY.md of `scope`, ask, and write it if allowed.
    With `quiet`, a change that cannot be made (the facts are all there already) shows nothing."""
    title = title or f"Remember ({scope}): " + "; ".join(facts)[:80]
    ctx = ToolContext(
        sandbox=session.sandbox,
        call_id=call_id,
        documents=services.documents,
        files=services.files,
        reads=session.ledger,
    )
    try:
        preview = await memory_preview(ctx, scope, facts, heading)
    except ToolError as exc:
        if not quiet:
            sink.emit(ToolCallStarted(call_id, title=title, kind=RememberTool.kind))
            sink.emit(failed(call_id, str(exc)))
        return ToolResult(str(exc), is_error=True)
    sink.emit(ToolCallStarted(call_id, title=title, kind=RememberTool.kind))
    arguments = {"facts": list(facts), "scope": scope, "heading": heading}
    location = ToolLocation(preview.path)
    sink.emit(
        ToolCallPatch(
            call_id,
            title=title,
            raw_input=arguments,
            content=(ChangeContent(preview),),
            locations=(location,),
        )
    )
    verdict = await _decide(services, _request(session, call_id, title, arguments, preview))
    if not verdict.allowed:
        sink.emit(failed(call_id, verdict.reason))
        return ToolResult(verdict.reason, is_error=True)
    sink.emit(ToolCallPatch(call_id, status="in_progress", approved_by=verdict.reason))
    try:
        result = await write_memory(ctx, scope, preview, verdict.accepted_hunks)
    except ToolError as exc:
        result = ToolResult(str(exc), is_error=True)
    sink.emit(
        ToolCallPatch(
            call_id,
            status="failed" if result.is_error else "completed",
            content=(TextContent(result.text),),
        )
    )
    return result


def _request(
    session: AgentSession, call_id: str, title: str, arguments: JsonObject, preview: ChangePreview
) -> ApprovalRequest:
    sandbox = session.sandbox
    inside = Path(preview.path).is_relative_to(sandbox.root)
    return ApprovalRequest(
        session_id=session.id,
        call_id=call_id,
        tool_name=RememberTool.name,
        kind=RememberTool.kind,
        title=title,
        arguments=arguments,
        mode=session.mode,
        rel_paths=[sandbox.relative(Path(preview.path)) if inside else preview.path],
        previews=[preview],
        locations=[ToolLocation(preview.path)],
    )


async def _decide(services: TurnServices, request: ApprovalRequest) -> Verdict:
    if services.gate is None:
        return Verdict(False, "no approval gate is configured; nothing that changes files runs")
    return await services.gate.decide(request, services.asker or _NoAsker())
