"""Approval rules: what a rule covers, and the rule an "always" answer creates.

A rule has a tool kind (`execute`, `edit`, `delete`, `move`), a pattern and a decision.
For commands the pattern is a prefix of words (`npm test` covers `npm test -- -k x`); a
compound command is covered only when every part is. For file changes it is a glob
relative to the workspace (`src/**`). Built-in deny rules and the `deny_commands`
setting win over every mode and allow rule.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import pathspec

from .commands import ParsedCommand, command_prefix, words_start_with

BUILTIN_DENY_COMMANDS: tuple[str, ...] = (
    "git push",
    "rm -rf /",
    "rm -rf /*",
    "rm -rf ~",
    "rm -fr /",
    "sudo",
)
FILE_KINDS = frozenset({"edit", "delete", "move"})


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: str
    decision: str  # "allow" | "deny"
    id: int | None = None  # stored rules have one; built-in and config rules do not
    source: str = "user"  # "user" (an "always" answer or _tether/rules), "config", "built-in"

    def describe(self) -> str:
        origin = f"rule #{self.id}" if self.id is not None else f"{self.source} rule"
        what = f"`{self.pattern}`" if self.kind == "execute" else f"{self.kind} {self.pattern}"
        return f"{origin}: {self.decision} {what}"

    def covers_command_part(self, words: tuple[str, ...]) -> bool:
        return self.kind == "execute" and words_start_with(words, self.pattern)

    def covers_path(self, kind: str, rel_path: str) -> bool:
        if self.kind != kind:
            return False
        spec = pathspec.GitIgnoreSpec.from_lines([self.pattern])
        return spec.match_file(rel_path)


def deny_for_command(rules: list[Rule], parsed: ParsedCommand) -> Rule | None:
    """The deny rule any part of the command hits, if any."""
    for words in parsed.parts:
        for rule in rules:
            if rule.decision == "deny" and rule.covers_command_part(words):
                return rule
    return None


def allow_for_command(rules: list[Rule], parsed: ParsedCommand) -> list[Rule] | None:
    """The allow rules covering every part, or None if some part is not covered."""
    if parsed.opaque or not parsed.parts:
        return None
    used: list[Rule] = []
    for words in parsed.parts:
        rule = next(
            (r for r in rules if r.decision == "allow" and r.covers_command_part(words)), None
        )
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


def patterns_for_always(kind: str, command: str | None, parsed: ParsedCommand | None, rel_paths: list[str]) -> list[str]:
    """The patterns an "always" answer stores: command prefixes, or directory globs."""
    if kind == "execute" and parsed is not None:
        return sorted({command_prefix(words) for words in parsed.parts if words})
    patterns = []
    for rel in rel_paths:
        folder = posixpath.dirname(rel)
        # anchored: a root file's rule must not cover docs/README.md too
        patterns.append(f"/{folder}/**" if folder else f"/{rel}")
    return sorted(set(patterns))


def builtin_rules(deny_commands: tuple[str, ...] = ()) -> list[Rule]:
    rules = [Rule("execute", p, "deny", source="built-in") for p in BUILTIN_DENY_COMMANDS]
    rules += [Rule(kind, ".git/**", "deny", source="built-in") for kind in sorted(FILE_KINDS)]
    rules += [Rule("execute", p, "deny", source="config") for p in deny_commands]
    return rules
