"""`_tether/rules/list` and `_tether/rules/remove` (extensions): the approval rules of a
session's workspace — "always" answers and the configured and built-in deny rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol._errors import InvalidParams, SessionNotFound

from ..transport.rpc import Route

if TYPE_CHECKING:
    from .app import TetherServer


def routes(server: TetherServer) -> list[Route]:
    def session_of(params: Any):
        if not isinstance(params, dict) or not isinstance(params.get("sessionId"), str):
            raise InvalidParams("invalid params: sessionId (a string) is required")
        session = server.registry.get_live(params["sessionId"])
        return session, server.gate_for(session.workspace, session.store)

    async def list_rules(params: Any) -> dict[str, Any]:
        _session, gate = session_of(params)
        return {
            "rules": [
                {
                    "id": rule.id,
                    "kind": rule.kind,
                    "pattern": rule.pattern,
                    "decision": rule.decision,
                    "source": rule.source,
                }
                for rule in await gate.rules()
            ]
        }

    async def remove_rule(params: Any) -> dict[str, Any]:
        _session, gate = session_of(params)
        rule_id = params.get("id")
        if not isinstance(rule_id, int) or isinstance(rule_id, bool):
            raise InvalidParams("invalid params: id (an integer from _tether/rules/list) is required")
        if not await gate.remove_rule(rule_id):
            raise SessionNotFound(
                f"no rule #{rule_id} in this workspace; built-in and config rules cannot be removed"
            )
        return {}

    return [
        Route("_tether/rules/list", list_rules, None),
        Route("_tether/rules/remove", remove_rule, None),
    ]
