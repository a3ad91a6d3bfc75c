"""Approval rules: what a rule covers, and the rule an "always" answer creates.

Owns: rules (tool kind, pattern, decision), matching them (allow: a word prefix over every part of a plain
command, or a workspace glob, or an MCP name with `*`; deny: loosely, `deny_match.py`), the stored patterns.
Must not: parse shell text itself (`commands.py`) or decide (`gate.py`).
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass

from .network_reach import OFF, NetworkReach

TYPE_CHECKING = False  # the command analysis is imported on a turn's first command, not by a turn without one
if TYPE_CHECKING:
    from .commands import CommandPart, ParsedCommand

BUILTIN_DENY_COMMANDS: tuple[str, ...] = (
    "git push",
    # flags are a subset of the part's: `rm -r /` also covers `rm -rf /`, `rm -fr /`, `rm -R --force /`
    "rm -r /",
    "rm -r /*",
    "rm -r ~",
    "rm -r ~/*",
    "sudo",
    "doas",
)
FILE_KINDS = frozenset({"edit", "delete", "move"})
# The rule kind of MCP tools; their patterns are tool names, `*` allowed (`mcp__github__*`).
MCP_KIND = "mcp"
MCP_PREFIX = "mcp__"


def mcp_rule(rules: list[Rule], name: str, decision: str) -> Rule | None:
    """The first rule of `decision` covering the MCP tool `name`."""
    return next((r for r in rules if r.decision == decision and r.covers_tool(name)), None)


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: str
    decision: str  # "allow" | "deny"
    id: int | None = None  # stored rules have one; built-in and config rules do not
    source: str = "user"  # "user" (an "always" answer or _tether/rules), "config", "built-in"
    # a command allow rule: the most network its commands may run with (what its sentence said)
    network: NetworkReach = OFF

    def describe(self) -> str:
        origin = f"rule #{self.id}" if self.id is not None else f"{self.source} rule"
        what = f"`{self.pattern}`" if self.kind == "execute" else f"{self.kind} {self.pattern}"
        return f"{origin}: {self.decision} {what}"

    def covers_text(self) -> str:
        """What the rule covers, in words (`npm test` (any arguments); edits to files under `src/`)."""
        if self.kind == "execute":
            return f"`{self.pattern}` (any arguments)"
        if self.kind == MCP_KIND:
            plural = "s" if "*" in self.pattern else ""
            return f"MCP tool{plural} `{self.pattern}` (any arguments)"
        verb = {"edit": "edits to", "delete": "deleting", "move": "moving"}.get(self.kind, self.kind)
        if self.pattern.endswith("/**"):
            folder = self.pattern[:-3].lstrip("/")
            return f"{verb} files under `{folder}/`" if folder else f"{verb} any file"
        return f"{verb} `{self.pattern.lstrip('/')}`"

    def covers_command_part(self, words: tuple[str, ...]) -> bool:
        from .commands import words_start_with

        return self.kind == "execute" and words_start_with(words, self.pattern)

    def covers_tool(self, name: str) -> bool:
        """An MCP tool rule: `mcp__github__create_issue`, or `mcp__github__*` for a server."""
        return self.kind == MCP_KIND and fnmatch.fnmatchcase(name, self.pattern)

    def covers_path(self, kind: str, rel_path: str) -> bool:
        if self.kind != kind:
            return False
        import pathspec  # imported by the first path rule checked, not at start-up

        spec = pathspec.GitIgnoreSpec.from_lines([self.pattern])
        return spec.match_file(rel_path)


@dataclass(frozen=True, slots=True)
class DenyHit:
    rule: Rule
    part: CommandPart
    # False: the part has words only running it can tell (`rm -rf $DIR`), and they could
    # make it match the rule
    definite: bool


def deny_for_command(rules: list[Rule], parsed: ParsedCommand) -> DenyHit | None:
    """The deny rule a part of the command hits (a definite hit first), if any."""
    from .deny_match import deny_match

    possible: DenyHit | None = None
    for part in parsed.parts:
        for rule in rules:
            if rule.decision != "deny" or rule.kind != "execute":
                continue
            how = deny_match(rule.pattern, part.words)
            if how == "definite" and part.maybe:
                how = "possible"  # a guess at what a wrapper runs (`taskset -c 0 touch x`)
            if how == "definite":
                return DenyHit(rule, part, True)
            if how == "possible" and possible is None:
                possible = DenyHit(rule, part, False)
    return possible


def allow_for_parts(rules: list[Rule], parsed: ParsedCommand) -> list[Rule] | None:
    """The allow rules covering every part of a command, or None. They approve it only
    when it is plain and writes only new, inert files (the gate checks both)."""
    own = parsed.own_parts
    if not own:
        return None
    used: list[Rule] = []
    for part in own:
        rule = next((r for r in rules if r.decision == "allow" and r.covers_command_part(part.texts)), None)
        if rule is None:
            return None
        if rule not in used:
            used.append(rule)
    return used


def match_paths(rules: list[Rule], kind: str, rel_paths: list[str], decision: str) -> list[Rule] | None:
    """Rules of `decision` covering every path (deny: any path), or None."""
    used: list[Rule] = []
    for rel in rel_paths:
        rule = next((r for r in rules if r.decision == decision and r.covers_path(kind, rel)), None)
        if rule is None:
            if decision == "allow":
                return None
            continue
        if decision == "deny":
            return [rule]
        if rule not in used:
            used.append(rule)
    return used if (decision == "allow" and used) else None


def patterns_for_always(
    kind: str, command: str | None, parsed: ParsedCommand | None, rel_paths: list[str]
) -> list[str]:
    """The patterns an "always" answer stores: command prefixes, or directory globs."""
    if kind == "execute" and parsed is not None:
        from .commands import command_prefix

        return sorted({command_prefix(part.texts) for part in parsed.own_parts})
    patterns = []
    for rel in rel_paths:
        folder = posixpath.dirname(rel)
        # anchored: a root file's rule must not cover docs/README.md too
        patterns.append(f"/{folder}/**" if folder else f"/{rel}")
    return sorted(set(patterns))


def builtin_rules(deny_commands: tuple[str, ...] = ()) -> list[Rule]:
    rules = [Rule("execute", p, "deny", source="built-in") for p in BUILTIN_DENY_COMMANDS]
    rules += [Rule(kind, ".git/**", "deny", source="built-in") for kind in sorted(FILE_KINDS)]
    # a `deny_commands` entry naming MCP tools (`mcp__github__*`) is a deny rule for them
    rules += [
        Rule(MCP_KIND if p.startswith(MCP_PREFIX) else "execute", p, "deny", source="config") for p in deny_commands
    ]
    return rules
