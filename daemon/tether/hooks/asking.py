"""The asker with hooks and the reviewer in front: `permission_request` hooks, then the reviewer, may answer.

Owns: that order (a hook's deny refuses; a hook's allow or the reviewer's approve allows a `reviewable`
call; a hook's ask or breakage asks the user) and the notice for what the reviewer decided.
Must not: let anything but the user allow a call the gate did not mark `reviewable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.sink import Notice
from ..approvals import ApprovalRequest, Asker, AskerAnswer

if TYPE_CHECKING:
    from ..agent.sink import TurnSink
    from .engine import Hooks
    from .reviewer import Reviewer

__all__ = ["HookedAsker"]


class HookedAsker:
    def __init__(self, inner: Asker, hooks: Hooks | None, reviewer: Reviewer | None, sink: TurnSink) -> None:
        self.inner, self.hooks, self.reviewer, self.sink = inner, hooks, reviewer, sink

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        hooks, hook_asked = self.hooks, False
        if hooks is not None and hooks.wants("permission_request", request.tool_name, request.arguments):
            out = await hooks.fire(
                "permission_request",
                tool=request.tool_name,
                arguments=request.arguments,
                reason=reason,
                mode=request.mode,
                title=request.title,
            )
            why = out.reason or "no reason given"
            if out.decision == "deny":
                return AskerAnswer("reject_once", detail=why, decided_by=out.by)
            if out.decision == "allow" and request.reviewable:
                return AskerAnswer("allow_once", detail=why, decided_by=out.by)
            hook_asked = out.decision is not None
        if self.reviewer is not None and request.reviewable and not hook_asked:
            review = await self.reviewer.review(request, reason)
            if review.approved:
                self.sink.emit(Notice(f"\n[the approval reviewer approved `{request.title}`: {review.reason}]\n"))
                return AskerAnswer("allow_once", detail=review.reason, decided_by="the reviewer")
            request.reviewer_note = review.reason
            self.sink.emit(Notice(f"\n[the approval reviewer did not approve `{request.title}`: {review.reason}]\n"))
        return await self.inner.ask(request, reason)
