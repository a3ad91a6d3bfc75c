"""`_tether/rules/list` and `_tether/rules/remove` (extensions): a session workspace's approval rules.

Owns: listing the "always" answers and the configured and built-in deny rules, each with what
it covers in words (`scope`), and removing an "always" rule by id (the others cannot be).
Must not: decide what a rule allows (the approval gate does).
"""

from __future__ import annotations

from typing import Literal, cast

from tether_protocol import (
    EmptyResult,
    RemoveRuleParams,
    Rule,
    RuleDecision,
    RuleKind,
    RulesParams,
    RulesResult,
    SessionNotFound,
)

from ..approvals import ApprovalGate
from ..server.context import ClientConnection


def _gate_of(ctx: ClientConnection, session_id: str) -> ApprovalGate:
    session = ctx.daemon.registry.get_live(session_id)
    return ctx.gate_for(session.workspace, session.store)


async def rules_list(ctx: ClientConnection, params: RulesParams) -> RulesResult:
    gate = _gate_of(ctx, params.session_id)
    return RulesResult([
        Rule(
            rule.id, cast(RuleKind, rule.kind), rule.pattern, cast(RuleDecision, rule.decision),
            cast(Literal["built-in", "config", "user"], rule.source), rule.covers_text(),
        )
        for rule in await gate.rules()
    ])


async def rules_remove(ctx: ClientConnection, params: RemoveRuleParams) -> EmptyResult:
    gate = _gate_of(ctx, params.session_id)
    if not await gate.remove_rule(params.id):
        raise SessionNotFound(f"no rule #{params.id} in this workspace; built-in and config rules cannot be removed")
    return EmptyResult()
