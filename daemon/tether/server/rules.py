"""`_tether/rules/list` and `_tether/rules/remove` (extensions): the approval rules of a
session's workspace — "always" answers and the configured and built-in deny rules.

Must not: decide what a rule allows (the approval gate does).
"""

from __future__ import annotations

from typing import Any

from tether_protocol._errors import InvalidParams, SessionNotFound

from ..approvals import ApprovalGate
from .context import ServerContext


def _gate_of(ctx: ServerContext, params: Any) -> ApprovalGate:
    if not isinstance(params, dict) or not isinstance(params.get("sessionId"), str):
        raise InvalidParams("invalid params: sessionId (a string) is required")
    session = ctx.registry.get_live(params["sessionId"])
    return ctx.gate_for(session.workspace, session.store)


async def rules_list(ctx: ServerContext, params: Any) -> dict[str, Any]:
    gate = _gate_of(ctx, params)
    return {
        "rules": [
            {"id": rule.id, "kind": rule.kind, "pattern": rule.pattern, "decision": rule.decision, "source": rule.source}
            for rule in await gate.rules()
        ]
    }


async def rules_remove(ctx: ServerContext, params: Any) -> dict[str, Any]:
    gate = _gate_of(ctx, params)
    rule_id = params.get("id")
    if not isinstance(rule_id, int) or isinstance(rule_id, bool):
        raise InvalidParams("invalid params: id (an integer from _tether/rules/list) is required")
    if not await gate.remove_rule(rule_id):
        raise SessionNotFound(f"no rule #{rule_id} in this workspace; built-in and config rules cannot be removed")
    return {}
