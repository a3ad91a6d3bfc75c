"""The approval gate: deny rules, then the mode, then allow rules, then the user.

    deny rules (built-in, `deny_commands`, "reject always")   -> refused, whatever the mode
    mode read-only                                            -> refused
    mode full-auto                                            -> allowed
    mode auto-edit, a file change                             -> allowed
    an allow rule ("allow always") covers every part          -> allowed
    otherwise                                                 -> ask the user (one at a time)

Every verdict says why (`reason`): the mode or the rule that allowed it, or what the
model should know about a refusal. "Always" answers become rules for this workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ..store.rules import RuleStore
from ..tools.base import ChangePreview
from .commands import ParsedCommand, parse_command
from .rules import (
    FILE_KINDS,
    Rule,
    allow_for_command,
    builtin_rules,
    deny_for_command,
    match_paths,
    patterns_for_always,
)

OPTIONS = ("allow_once", "allow_always", "reject_once", "reject_always")


@dataclass(slots=True)
class ApprovalRequest:
    session_id: str
    call_id: str
    tool_name: str
    kind: str  # ACP ToolKind of the tool
    title: str
    arguments: dict[str, Any]
    mode: str
    command: str | None = None
    cwd: str | None = None
    rel_paths: list[str] = field(default_factory=list)
    previews: list[ChangePreview] = field(default_factory=list)


@dataclass(slots=True)
class AskerAnswer:
    # one of OPTIONS, or "cancelled" (the turn was cancelled) or "unavailable" (the
    # client cannot show prompts)
    option: str
    accepted_hunks: dict[str, list[int]] | None = None
    detail: str = ""


class Asker(Protocol):
    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer: ...


@dataclass(slots=True)
class Verdict:
    allowed: bool
    reason: str
    accepted_hunks: dict[str, list[int]] | None = None
    asked: bool = False
    cancelled: bool = False


class ApprovalGate:
    """One per workspace: its stored rules, the configured deny rules, and an asker."""

    def __init__(self, store: RuleStore, deny_commands: tuple[str, ...] = ()) -> None:
        self._store = store
        self._fixed = builtin_rules(deny_commands)
        self._stored: list[Rule] | None = None
        # Several calls of one step (and several sessions) ask one at a time, in order.
        self._ask_lock = anyio.Lock()

    async def rules(self) -> list[Rule]:
        if self._stored is None:
            self._stored = [
                Rule(r.tool_kind, r.pattern, r.decision, id=r.id)
                for r in await self._store.list()
            ]
        return [*self._fixed, *self._stored]

    async def add_rule(self, kind: str, pattern: str, decision: str) -> Rule:
        record = await self._store.add(kind, pattern, decision)
        rule = Rule(kind, pattern, decision, id=record.id)
        stored = [r for r in (await self._stored_rules()) if r.id != record.id]
        self._stored = [*stored, rule]
        return rule

    async def remove_rule(self, rule_id: int) -> bool:
        removed = await self._store.delete(rule_id)
        self._stored = [r for r in await self._stored_rules() if r.id != rule_id]
        return removed

    async def _stored_rules(self) -> list[Rule]:
        await self.rules()
        assert self._stored is not None
        return self._stored

    async def decide(self, request: ApprovalRequest, asker: Asker) -> Verdict:
        rules = await self.rules()
        parsed = parse_command(request.command) if request.command is not None else None
        verdict = self._by_rules_and_mode(request, rules, parsed)
        if verdict is not None:
            return verdict
        reason = f"mode {request.mode} asks before {_action(request)}"
        async with self._ask_lock:
            answer = await asker.ask(request, reason)
        return await self._from_answer(request, answer, parsed)

    def _by_rules_and_mode(
        self, request: ApprovalRequest, rules: list[Rule], parsed: ParsedCommand | None
    ) -> Verdict | None:
        if parsed is not None:
            denied = deny_for_command(rules, parsed)
            if denied is not None:
                return Verdict(False, f"refused by {denied.describe()}; this command is never run")
        elif request.kind in FILE_KINDS:
            hit = match_paths(rules, request.kind, request.rel_paths, "deny")
            if hit:
                return Verdict(False, f"refused by {hit[0].describe()}; this change is never made")
        if request.mode == "read-only":
            return Verdict(
                False,
                f"not allowed in read-only mode: {_action(request)} needs the user to switch "
                f"the session to ask, auto-edit or full-auto",
            )
        if request.mode == "full-auto":
            return Verdict(True, "allowed by mode full-auto")
        if request.mode == "auto-edit" and request.kind in FILE_KINDS:
            return Verdict(True, "allowed by mode auto-edit")
        if parsed is not None:
            allowed = allow_for_command(rules, parsed)
        elif request.kind in FILE_KINDS:
            allowed = match_paths(rules, request.kind, request.rel_paths, "allow")
        else:
            allowed = None
        if allowed:
            return Verdict(True, "allowed by " + ", ".join(r.describe() for r in allowed))
        return None

    async def _from_answer(
        self, request: ApprovalRequest, answer: AskerAnswer, parsed: ParsedCommand | None
    ) -> Verdict:
        option = answer.option
        if option == "cancelled":
            return Verdict(False, "the turn was cancelled before the user answered", cancelled=True)
        if option == "unavailable":
            return Verdict(
                False,
                f"not approved: mode {request.mode} needs the user's approval for "
                f"{_action(request)}, and this editor cannot show approval prompts"
                f"{f' ({answer.detail})' if answer.detail else ''}; the user can switch the "
                f"session to auto-edit or full-auto",
            )
        opaque = parsed is not None and parsed.opaque
        if option in ("allow_always", "reject_always") and not (opaque and option == "allow_always"):
            decision = "allow" if option == "allow_always" else "deny"
            for pattern in patterns_for_always(request.kind, request.command, parsed, request.rel_paths):
                await self.add_rule(request.kind, pattern, decision)
        if option in ("allow_once", "allow_always"):
            how = "once" if option == "allow_once" else "always (a rule now covers it)"
            if opaque and option == "allow_always":
                # redirections/substitutions: a prefix rule could not vouch for the next one
                how = "once (no rule: this command redirects or substitutes, so it is asked again)"
            return Verdict(True, f"allowed by the user, {how}", answer.accepted_hunks, asked=True)
        return Verdict(
            False,
            f"the user rejected {_action(request)}"
            f"{' and will reject it again (a deny rule now covers it)' if option == 'reject_always' else ''}; "
            f"do not retry it unless the user asks for it",
            asked=True,
        )


def _action(request: ApprovalRequest) -> str:
    if request.command is not None:
        return f"running `{request.command}`"
    paths = ", ".join(request.rel_paths) or request.title
    return {
        "edit": f"editing {paths}",
        "delete": f"deleting {paths}",
        "move": f"moving {paths}",
    }.get(request.kind, request.title)
