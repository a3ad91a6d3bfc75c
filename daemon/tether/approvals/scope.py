"""What an "allow always" answer would store, and the sentence saying what that allows.

Owns: `AlwaysScope`: the very `Rule` objects stored if the user picks "allow always", and the option's
sentence, whose conditions come from how this call would run (sandbox, network), never a separate text.
Must not: decide, store rules or talk to the client.
"""

from __future__ import annotations

from dataclasses import dataclass

from .network_reach import OFF, NetworkReach
from .rules import MCP_KIND, MCP_PREFIX, Rule, patterns_for_always

TYPE_CHECKING = False  # the command analysis is imported on a turn's first command
if TYPE_CHECKING:
    from .commands import ParsedCommand

__all__ = ["AlwaysScope", "always_scope"]

# how a removable rule is removed, named in every sentence (`/rules` in `tether chat`,
# `:TetherRules` in Neovim, "Tether: Approval rules" in VS Code)
_UNTIL = "until you remove it (approval rules)"


@dataclass(frozen=True, slots=True)
class AlwaysScope:
    rules: tuple[Rule, ...]  # what "allow always" stores (empty: nothing; it acts once)
    text: str  # the option's name: what those rules allow, and under which conditions
    sandboxed: bool = False  # the commands it allows run in the OS sandbox
    network: bool = False  # ... with the network (the `network` setting or `network_commands`)


def always_scope(
    kind: str,
    tool_name: str,
    command: str | None,
    parsed: ParsedCommand | None,
    rel_paths: list[str],
    *,
    sandboxed: bool,
    network: bool,
    proxied: bool = False,
    git_writable: bool = False,
    reach: NetworkReach = OFF,
) -> AlwaysScope:
    """The rules "allow always" would store for this call, and what they allow; a command's
    rules keep `reach`, the network it runs with now (no more, later)."""
    if tool_name.startswith(MCP_PREFIX):
        rule = Rule(MCP_KIND, tool_name, "allow")
        return AlwaysScope((rule,), f"Always allow {rule.covers_text()}, {_UNTIL}")
    if parsed is not None and not parsed.plain:
        return AlwaysScope((), "Allow this once (no rule can cover it: not a plain list of words)")
    patterns = patterns_for_always(kind, command, parsed, rel_paths)
    rules = tuple(Rule(kind, pattern, "allow", network=reach if kind == "execute" else OFF) for pattern in patterns)
    if not rules:
        return AlwaysScope((), "Allow this once (there is nothing a rule could name)")
    covered = ", ".join(rule.covers_text() for rule in rules)
    if kind != "execute":
        return AlwaysScope(rules, f"Always allow {covered} in this workspace, {_UNTIL}")
    how = _how_it_runs(sandboxed, network, proxied)
    if sandboxed and git_writable:  # Landlock: what it writes in `.git` runs later, outside the sandbox
        how += " (but `.git` stays writable here: a hook it plants runs outside the sandbox at your next git command)"
    return AlwaysScope(
        rules, f"Always allow {covered} in this workspace: {how}; {_UNTIL}", sandboxed, network and sandboxed
    )


def _how_it_runs(sandboxed: bool, network: bool, proxied: bool) -> str:
    if not sandboxed:
        # the gate asks for every unsandboxed command: the rule takes effect only in a sandbox
        return "commands here run WITHOUT a sandbox, so each is still asked until one is available"
    if network:
        return "sandboxed, writes only inside the workspace and a private temp dir, WITH the network (your network settings)"
    if proxied:  # `network = "allowlist"`: every command it allows gets the proxy
        return (
            "sandboxed, writes only inside the workspace and a private temp dir, network only through Tether's "
            "proxy to your allowed_domains (with the credentials your config adds there)"
        )
    return "sandboxed, writes only inside the workspace and a private temp dir, no network"
