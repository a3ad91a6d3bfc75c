"""The approval gate: the one place the order of approval decisions lives.

Owns: that order (deny rules > hooks' deny > mode > hooks' allow > rules > ask; in full: SPEC §5.8 and
docs/decisions/0004-approvals.md), `reviewable`, and the verdict with its reason and network decision.
Must not: talk to the client (the `Asker` does) or run anything.
"""

from __future__ import annotations

import anyio

from .autoruns import autorun_why
from .network_reach import OFF, CommandNetwork, NetworkReach
from .requests import OPTIONS as OPTIONS  # the option ids, as permission.py knows them
from .requests import ApprovalRequest, Asker, AskerAnswer, Verdict
from .rules import (
    FILE_KINDS,
    MCP_KIND,
    MCP_PREFIX,
    DenyHit,
    Rule,
    allow_for_parts,
    builtin_rules,
    deny_for_command,
    match_paths,
    mcp_rule,
    patterns_for_always,
)
from .scope import always_scope
from .write_targets import unapprovable_write

TYPE_CHECKING = False  # the command analysis (~10 ms of imports) waits for a turn's first command
if TYPE_CHECKING:
    from pathlib import Path

    from ..store.rules import RuleStore
    from .commands import ParsedCommand


class WorkspaceRules:
    """A workspace's stored rules as its gates read them (loaded once), and its one line of
    questions: the gates of one workspace made with different settings (the shared daemon's
    windows) share it, so an "always" answered through one holds in all."""

    def __init__(self) -> None:
        self.stored: list[Rule] | None = None
        # Several calls of one step (and several sessions) ask one at a time, in order.
        self.ask_lock = anyio.Lock()


class ApprovalGate:
    """One per workspace and settings: its stored rules, the configured deny rules, and an asker."""

    def __init__(
        self,
        store: RuleStore,
        deny_commands: tuple[str, ...] = (),
        network_commands: tuple[str, ...] = (),
        network_all: bool = False,
        network_proxy: bool = False,
        workspace: Path | None = None,
        sandbox_auto_allow: bool = False,
        allowed_domains: tuple[str, ...] = (),
        shared: WorkspaceRules | None = None,
    ) -> None:
        self._store = store
        self._shared = shared or WorkspaceRules()
        # where a command's writes are checked (None: every write may overwrite a file)
        self._workspace = workspace
        self._fixed = builtin_rules(deny_commands)
        self._net = CommandNetwork(network_commands, network_all, network_proxy, allowed_domains)
        self._sandbox_auto_allow = sandbox_auto_allow  # in mode auto-edit (sandboxed_asking.py)

    async def rules(self) -> list[Rule]:
        if self._shared.stored is None:
            self._shared.stored = [
                Rule(r.tool_kind, r.pattern, r.decision, id=r.id, network=NetworkReach.parse(r.network))
                for r in await self._store.list()
            ]
        return [*self._fixed, *self._shared.stored]

    async def add_rule(self, kind: str, pattern: str, decision: str, network: NetworkReach = OFF) -> Rule:
        record = await self._store.add(kind, pattern, decision, network.stored())
        rule = Rule(kind, pattern, decision, id=record.id, network=network)
        stored = [r for r in (await self._stored_rules()) if r.id != record.id]
        self._shared.stored = [*stored, rule]
        return rule

    async def remove_rule(self, rule_id: int) -> bool:
        removed = await self._store.delete(rule_id)
        self._shared.stored = [r for r in await self._stored_rules() if r.id != rule_id]
        return removed

    async def _stored_rules(self) -> list[Rule]:
        await self.rules()
        assert self._shared.stored is not None
        return self._shared.stored

    async def decide(self, request: ApprovalRequest, asker: Asker) -> Verdict:
        rules = await self.rules()
        parsed = None
        if request.command is not None:
            from .commands import parse_command

            parsed = parse_command(request.command)
        decided = self._by_rules_and_mode(request, rules, parsed)
        if isinstance(decided, Verdict):
            if decided.allowed and parsed is not None:
                decided.network = self._net.full(parsed)
            return decided
        request.network_granted = parsed is not None and self._net.full(parsed)
        request.always = always_scope(
            request.kind,
            request.tool_name,
            request.command,
            parsed,
            request.rel_paths,
            sandboxed=request.sandboxed,
            network=request.network_granted,
            # the proxy runs only under bubblewrap; Landlock falls back to no network
            proxied=self._net.proxy and request.sandbox_backend == "bwrap" and not request.network_granted,
            git_writable=request.sandbox_backend not in ("", "bwrap"),
            reach=OFF if parsed is None else self._net.reach(parsed, request.command or "", request.sandbox_backend),
        )
        async with self._shared.ask_lock:
            answer = await asker.ask(request, decided)
        return await self._from_answer(request, answer, parsed)

    async def read_refusal(self, tool_name: str) -> str | None:
        """Why a call that only reads is refused: a deny rule on an MCP tool wins over
        the server's `readOnlyHint` (a server must not exempt its tools from the user's rules)."""
        if not tool_name.startswith(MCP_PREFIX):
            return None
        denied = mcp_rule(await self.rules(), tool_name, "deny")
        return None if denied is None else f"refused by {denied.describe()}; this tool is never called"

    def network_domains(self, command: str) -> tuple[str, ...]:
        """The domains the table form of `network_commands` adds for `command` (every part
        of a plain command covered by a table entry), for the proxy in `allowlist` mode."""
        return self._net.domains(command)

    def _by_rules_and_mode(
        self, request: ApprovalRequest, rules: list[Rule], parsed: ParsedCommand | None
    ) -> Verdict | str:
        """The verdict the rules, the hooks and the mode give, or why the user must be asked."""
        if request.tool_name.startswith(MCP_PREFIX):
            return _mcp_verdict(request, rules)
        hit: DenyHit | None = None
        if parsed is not None:
            hit = deny_for_command(rules, parsed)
            if hit is not None and hit.definite:
                return Verdict(False, f"refused by {hit.rule.describe()}; this command is never run")
        elif request.kind in FILE_KINDS:
            found = match_paths(rules, request.kind, request.rel_paths, "deny")
            if found:
                return Verdict(False, f"refused by {found[0].describe()}; this change is never made")
        if request.hook_decision == "deny":
            return Verdict(False, request.hook_reason)
        read_only_command = request.kind == "execute" and request.sandboxed
        if request.mode == "read-only" and not read_only_command:
            return Verdict(
                False,
                f"not allowed in read-only mode: {_action(request)} needs the user to switch "
                f"the session to ask, auto-edit or full-auto",
            )
        if request.kind == "execute" and not request.sandboxed:
            note = f" ({request.sandbox_note})" if request.sandbox_note else ""
            return f"commands run without an OS sandbox here{note}, so every command is asked"
        outside = [p for p in request.rel_paths if p.startswith("/")]  # the user's MEMORY.md
        if outside:
            return f"{outside[0]} is outside the workspace (it applies to every workspace), so it is always asked"
        if request.hook_decision == "ask":
            return request.hook_reason
        return self._by_mode_and_rules(request, rules, parsed, hit)

    def _by_mode_and_rules(
        self, request: ApprovalRequest, rules: list[Rule], parsed: ParsedCommand | None, hit: DenyHit | None
    ) -> Verdict | str:
        unseen = _unseen(parsed, hit)
        if request.mode == "full-auto":
            if unseen:
                return (
                    f"{_action(request)} cannot be fully checked against the deny rules ({unseen}); "
                    f"asking instead of running"
                )
            return Verdict(True, "allowed by mode full-auto")
        autorun = _autorun(request) if request.mode == "auto-edit" and request.kind in FILE_KINDS else ""
        if request.mode == "auto-edit" and request.kind in FILE_KINDS and not autorun:
            return Verdict(True, "allowed by mode auto-edit")
        sandbox_why = self._why_asked_in_sandbox(request, parsed, hit)
        if sandbox_why == "":
            from .sandboxed_asking import RAN_SANDBOXED

            return Verdict(True, RAN_SANDBOXED, offline=True, guard_autoruns=True)
        if request.hook_decision == "allow" and not unseen:
            return Verdict(True, request.hook_reason)
        unsafe = beyond = ""
        if parsed is not None:
            # a part that may be denied is never approved by an allow rule either
            allowed, beyond = self._allow_within_network(request, rules, parsed) if hit is None else (None, "")
            # rules cover every part, yet the command writes or runs more than it shows
            unsafe = (
                (
                    parsed.not_plain[0]
                    if parsed.not_plain
                    else unapprovable_write(parsed.writes, self._workspace, request.cwd or ".")
                )
                if allowed
                else ""
            )
        elif request.kind in FILE_KINDS:
            allowed = match_paths(rules, request.kind, request.rel_paths, "allow")
        else:
            allowed = None
        if allowed and not unsafe:
            # a rule's command runs unasked too: what it does to autoruns is put back
            return Verdict(
                True, "allowed by " + ", ".join(r.describe() for r in allowed), guard_autoruns=parsed is not None
            )
        if request.mode == "read-only":
            return f"mode read-only asks before {_action(request)} (in a read-only sandbox: nothing in the workspace can change)"
        request.reviewable = not unseen and not autorun  # only the user may let an autorun change
        if unsafe:
            return f"no allow rule may approve {_action(request)}: {unsafe}"
        # what keeps a rule from approving it, so the user sees what runs beyond the words
        why = (
            unseen
            or sandbox_why
            or autorun
            or beyond
            or (parsed.not_plain[0] if parsed is not None and parsed.not_plain else "")
        )
        return f"mode {request.mode} asks before {_action(request)}{f' ({why})' if why else ''}"

    def _allow_within_network(
        self, request: ApprovalRequest, rules: list[Rule], parsed: ParsedCommand
    ) -> tuple[list[Rule] | None, str]:
        """The allow rules covering every part whose network condition this command keeps,
        or None and why the rules that cover it by their words do not (a rule allows no
        more network than its sentence named when it was granted)."""
        reach = self._net.reach(parsed, request.command or "", request.sandbox_backend)
        allowed = allow_for_parts([r for r in rules if reach.within(r.network)], parsed)
        if allowed is not None:
            return allowed, ""
        by_words = allow_for_parts(rules, parsed)
        if not by_words:
            return None, ""
        short = next(r for r in by_words if not reach.within(r.network))
        return None, (
            f"{short.describe()} was granted {short.network.words()}, and this command would now run "
            f"{reach.words()} (your network settings)"
        )

    def _why_asked_in_sandbox(
        self, request: ApprovalRequest, parsed: ParsedCommand | None, hit: DenyHit | None
    ) -> str | None:
        """Why sandbox-aware asking does not run this call unasked ("" when it does; None:
        it does not apply: not a command, not auto-edit, or the setting is off)."""
        if not (self._sandbox_auto_allow and request.mode == "auto-edit" and parsed is not None):
            return None
        if hit is not None:
            return f"`{hit.part.show()}` may be {hit.rule.describe()}"
        if request.hook_decision == "allow" or not request.sandboxed:
            return None  # a hook's allow is its own verdict; an unsandboxed command was asked above
        from .sandboxed_asking import why_asked_in_sandbox  # with the command analysis

        return why_asked_in_sandbox(
            parsed, self._net.full(parsed), self._workspace, request.cwd or ".", request.sandbox_backend
        )

    async def _from_answer(
        self, request: ApprovalRequest, answer: AskerAnswer, parsed: ParsedCommand | None
    ) -> Verdict:
        option = answer.option
        if answer.decided_by:
            return self._decided_for_user(request, answer, parsed)
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
        # only a plain command may become an allow rule: a prefix cannot vouch for the rest
        not_plain = parsed is not None and not parsed.plain
        if option == "reject_always" and request.tool_name.startswith(MCP_PREFIX):
            await self.add_rule(MCP_KIND, request.tool_name, "deny")
        elif option == "allow_always" and request.always is not None:
            for rule in request.always.rules:  # exactly what the option's text described
                await self.add_rule(rule.kind, rule.pattern, rule.decision, rule.network)
        elif option == "reject_always":
            for pattern in patterns_for_always(request.kind, request.command, parsed, request.rel_paths):
                await self.add_rule(request.kind, pattern, "deny")
        if option in ("allow_once", "allow_always", "allow_once_network"):
            how = "once" if option == "allow_once" else "always (a rule now covers it)"
            network = parsed is not None and self._net.full(parsed)
            if option == "allow_once_network":
                how, network = "once, with network", request.kind == "execute"
            elif not_plain and option == "allow_always":
                how = "once (no rule: this command is not a plain list of words, so it is asked again)"
            verdict = Verdict(True, f"allowed by the user, {how}", answer.accepted_hunks, asked=True)
            verdict.network = network
            return verdict
        return Verdict(
            False,
            f"the user rejected {_action(request)}"
            f"{' and will reject it again (a deny rule now covers it)' if option == 'reject_always' else ''}; "
            f"do not retry it unless the user asks for it",
            asked=True,
        )

    def _decided_for_user(self, request: ApprovalRequest, answer: AskerAnswer, parsed: ParsedCommand | None) -> Verdict:
        """A `permission_request` hook or the reviewer answered; only a reviewable call may be
        allowed that way (anything else allowed so is refused: fail closed)."""
        if answer.option == "allow_once" and request.reviewable:
            verdict = Verdict(
                True, f"allowed by {answer.decided_by}: {answer.detail}", guard_autoruns=parsed is not None
            )
            verdict.network = parsed is not None and self._net.full(parsed)
            return verdict
        if answer.option == "allow_once":
            return Verdict(False, f"not approved: only the user may approve {_action(request)}")
        return Verdict(False, f"refused by {answer.decided_by}: {answer.detail}; do not retry it unless the user asks")


def _mcp_verdict(request: ApprovalRequest, rules: list[Rule]) -> Verdict | str:
    """An MCP tool that is not a read, in the gate's order: deny rules, a hook's deny,
    read-only refuses, a hook's ask, full-auto allows, a hook's allow, an allow rule, else ask."""
    denied = mcp_rule(rules, request.tool_name, "deny")
    if denied is not None:
        return Verdict(False, f"refused by {denied.describe()}; this tool is never called")
    if request.hook_decision == "deny":
        return Verdict(False, request.hook_reason)
    if request.mode == "read-only":
        return Verdict(
            False,
            f"not allowed in read-only mode: {_action(request)} needs the user to switch the "
            f"session to ask, auto-edit or full-auto",
        )
    if request.hook_decision == "ask":
        return request.hook_reason
    if request.mode == "full-auto":
        return Verdict(True, "allowed by mode full-auto")
    if request.hook_decision == "allow":
        return Verdict(True, request.hook_reason)
    allowed = mcp_rule(rules, request.tool_name, "allow")
    if allowed is not None:
        return Verdict(True, f"allowed by {allowed.describe()}")
    request.reviewable = True
    return f"mode {request.mode} asks before {_action(request)}"


def _unseen(parsed: ParsedCommand | None, hit: DenyHit | None) -> str:
    """Why the deny rules cannot vouch for a command ("" when they can)."""
    if parsed is None:
        return ""
    if hit is not None:
        return f"`{hit.part.show()}` may be {hit.rule.describe()}"
    return parsed.unseen[0] if parsed.unseen else ""


def _autorun(request: ApprovalRequest) -> str:
    """Why a file change touches a path something runs later outside the sandbox ("": none)."""
    for rel in request.rel_paths:
        why = autorun_why(rel)
        if why:
            return f"`{rel}` runs outside the sandbox later: {why}"
    return ""


def _action(request: ApprovalRequest) -> str:
    if request.command is not None:
        return f"running `{request.command}`"
    if request.tool_name.startswith(MCP_PREFIX):
        return f"calling MCP tool {request.title}"
    paths = ", ".join(request.rel_paths) or request.title
    return {
        "edit": f"editing {paths}",
        "delete": f"deleting {paths}",
        "move": f"moving {paths}",
    }.get(request.kind, request.title)
