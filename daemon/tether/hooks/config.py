"""Which hooks are configured: the user config's `[hooks]` table (and a trusted workspace's), in Tether's or
Claude Code's shape (SPEC §5.20).

Owns: reading those tables into `HookSpec`s (with notices for what it ignored), the stage names and their
Claude Code aliases, and matching a spec against a tool call (tool glob, argument glob).
Must not: run anything, or take hooks from a workspace the user has not trusted (or whose hooks changed).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["STAGES", "HookSet", "HookSpec", "load_hooks", "trusts_workspace"]

STAGES = (
    "prompt_submit",
    "pre_tool",
    "post_tool",
    "permission_request",
    "step_end",
    "turn_end",
    "pre_compact",
    "session_start",
)
# Claude Code's event names, where they map cleanly
CLAUDE_STAGES = {
    "UserPromptSubmit": "prompt_submit",
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "Notification": "permission_request",
    "PermissionRequest": "permission_request",
    "Stop": "turn_end",
    "PreCompact": "pre_compact",
    "SessionStart": "session_start",
}
STAGE_TO_CLAUDE = {
    "prompt_submit": "UserPromptSubmit",
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "permission_request": "PermissionRequest",
    "turn_end": "Stop",
    "pre_compact": "PreCompact",
    "session_start": "SessionStart",
    "step_end": "StepEnd",
}
# Claude Code's tool names in a `matcher`, as Tether's tools
CLAUDE_TOOLS = {
    "Bash": "run_command",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Write": "write_file",
    "Read": "read_file",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "list_dir",
    "TodoWrite": "update_plan",
}
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class HookSpec:
    stage: str
    command: str
    name: str
    tools: tuple[str, ...] = ()  # globs on the tool name; () = every tool
    args: tuple[tuple[str, str], ...] = ()  # (argument name or "*", glob on its string value)
    timeout: float = DEFAULT_TIMEOUT
    source: str = "user config"

    def matches(self, tool: str | None, arguments: Mapping[str, Any] | None) -> bool:
        if tool is not None and self.tools and not any(fnmatch.fnmatchcase(tool, g) for g in self.tools):
            return False
        if not self.args:
            return True
        values = arguments or {}
        for key, pattern in self.args:
            texts = [v for k, v in values.items() if isinstance(v, str) and key in ("*", k)]
            if not any(fnmatch.fnmatchcase(t, pattern) for t in texts):
                return False
        return True


@dataclass(frozen=True, slots=True)
class HookSet:
    specs: tuple[HookSpec, ...] = ()
    notices: tuple[str, ...] = ()  # what was ignored, and why (shown once per session)
    # shown at every turn until the user acts: trusted hooks that changed since (not run)
    alerts: tuple[str, ...] = ()
    # the user trusts the workspace: its hooks' digest covers files they run, so a session
    # reads them again each turn (services/turn_setup.py)
    trusted_workspace: bool = field(default=False, compare=False)

    def for_stage(
        self, stage: str, tool: str | None = None, arguments: Mapping[str, Any] | None = None
    ) -> list[HookSpec]:
        return [s for s in self.specs if s.stage == stage and s.matches(tool, arguments)]

    def __bool__(self) -> bool:
        return bool(self.specs or self.notices or self.alerts)


def load_hooks(user_path: Path, workspace: Path, home: Path) -> HookSet:
    """The user's hooks, then (when the user trusts `workspace`, and its hooks are as they
    were when trusted: the digest pinned in Tether's data directory `home`) the
    workspace's. Never raises: a bad entry is skipped with a notice."""
    from ..config.layers import read_toml
    from ..config.settings import ConfigError

    notices: list[str] = []
    alerts: list[str] = []
    try:
        user = read_toml(user_path, f"user config {user_path}", required=False) or {}
    except ConfigError:
        return HookSet()  # the settings loader already refused this file
    specs = _read_table(user.get("hooks"), "user config", notices)
    ws_path = workspace / ".tether" / "config.toml"
    try:
        ws = read_toml(ws_path, f"workspace config {ws_path}", required=False) or {}
    except ConfigError:
        ws = {}
    trusted = trusts_workspace(user.get("workspaces"), workspace)
    if trusted:
        from .trust import pinned_check

        # pinned even while there are none: hooks a command adds later are a change too
        changed = pinned_check(home, workspace, ws.get("hooks"), ws_path)
        if changed is not None:
            alerts += [changed] if "hooks" in ws else []
        elif "hooks" in ws:
            specs += _read_table(ws["hooks"], f"workspace config {ws_path} (trusted)", notices)
    elif "hooks" in ws:
        notices.append(
            f"hooks in {ws_path} were not run: a workspace may not add hooks (they run programs) unless "
            f'your user config {user_path} trusts it with [workspaces."{workspace}"] trust_hooks = true'
        )
    return HookSet(tuple(specs), tuple(notices), tuple(alerts), trusted)


def trusts_workspace(table: object, workspace: Path) -> bool:
    """The user config's `workspaces` table has `trust_hooks = true` for `workspace`."""
    if not isinstance(table, dict):
        return False
    for key, value in table.items():
        if not (isinstance(key, str) and isinstance(value, dict) and value.get("trust_hooks") is True):
            continue
        try:
            path = Path(key).expanduser()
            if path.is_absolute() and path.resolve() == workspace.resolve():  # "" is not "the cwd"
                return True
        except OSError:
            continue
    return False


def _read_table(table: object, source: str, notices: list[str]) -> list[HookSpec]:
    if table is None:
        return []
    if not isinstance(table, dict):
        notices.append(f"[hooks] in the {source} must be a table; no hooks from it run")
        return []
    default = _timeout(table.get("timeout", DEFAULT_TIMEOUT), DEFAULT_TIMEOUT)
    specs: list[HookSpec] = []
    for key, entries in table.items():
        if key == "timeout":
            continue
        stage = key if key in STAGES else CLAUDE_STAGES.get(key)
        if stage is None or not isinstance(entries, list):
            notices.append(
                f"hooks.{key} in the {source} is not a hook stage (a list of hooks at one of: "
                f"{', '.join(STAGES)}, or Claude Code's {', '.join(CLAUDE_STAGES)}); ignored"
            )
            continue
        for i, entry in enumerate(entries):
            specs += _entry(stage, entry, default, f"hooks.{key}[{i}] in the {source}", source, notices)
    return specs


def _entry(stage: str, entry: object, default: float, where: str, source: str, notices: list[str]) -> list[HookSpec]:
    if not isinstance(entry, dict):
        notices.append(f"{where} must be a table with a command; ignored")
        return []
    tools = _tools(entry.get("tool", entry.get("matcher")))
    args = _args(entry.get("args"))
    if tools is None or args is None:
        notices.append(
            f"{where}: `tool`/`matcher` must be a glob or a list of them, `args` a glob or a table of globs; ignored"
        )
        return []
    commands = entry.get("hooks") if "hooks" in entry else [entry]  # Claude Code nests them
    found: list[HookSpec] = []
    for command in commands if isinstance(commands, list) else [{}]:
        command = command if isinstance(command, dict) else {}
        text = command.get("command")
        if not isinstance(text, str) or not text.strip():
            notices.append(f"{where} has no `command` (a non-empty string); ignored")
            continue
        name = command.get("name") if isinstance(command.get("name"), str) else None
        timeout = _timeout(command.get("timeout", entry.get("timeout", default)), default)
        shown = name or (text if len(text) <= 60 else text[:59] + "…")
        found.append(HookSpec(stage, text, shown, tools, args, timeout, source))
    return found


def _tools(value: object) -> tuple[str, ...] | None:
    if value is None or value == "" or value == "*":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return None
    globs = [part.strip() for item in items for part in item.split("|") if part.strip()]
    return tuple(CLAUDE_TOOLS.get(g, g) for g in globs)


def _args(value: object) -> tuple[tuple[str, str], ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        return (("*", value),)
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return tuple(value.items())
    return None


def _timeout(value: object, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_TIMEOUT:
        return float(value)
    return default
