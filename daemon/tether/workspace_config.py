"""The workspace config layer: what a repository's ``.tether/config.toml`` may set.

Owns: `WORKSPACE_KEYS`, the explicit allowlist (with the reason for each key left out), reading the file as
one more layer that refuses and logs what is not allowed or looser, and adding its `deny_commands`/`deny_read`.
Must not: raise `ConfigError` for anything in the file (a repository can never stop the daemon), apply a
refused key in any form, write files, or import anything beyond the standard library (decision 0006).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from .config.layers import merge, read_toml, validated
from .config.settings import (
    MODE_STRICTNESS,
    SETTING_KEYS,
    ConfigError,
    RefusedSetting,
    Settings,
    unknown_key,
    with_extra,
)

__all__ = ["WORKSPACE_KEYS", "workspace_layer"]

# The allowlist. Each key here cannot move data out of the machine or change who answers.
WORKSPACE_KEYS: frozenset[str] = frozenset(
    {
        "model",  # a model of the provider the user chose, with the user's key and endpoint
        "max_steps",  # bounded 1..1000; only how long a turn may run
        "mode",  # no looser than "ask" nor than the user's own (checked below)
        "guard",  # no looser than "warn" nor than the user's own (checked below)
        "keep_user_turns",  # how much of the same conversation is sent to the same model
        "deny_commands",  # only adds deny rules (see merge in config.layers)
        "deny_read",  # only hides more from commands (kept apart: `workspace_deny_read`)
        # The same conversation to the same model, only sized: a project may know the
        # window of the model it is used with. At worst more tokens are spent.
        "context_window",
        "max_output_tokens",
        "max_retries",  # bounded 0..10, retries of a failed request before any output
        "sandbox_auto_allow",  # only "off": commands asked again (checked below)
    }
)

_YOURS = "put it in your user config ({user}), the environment or a flag"
# Why each key outside the allowlist is refused; a setting not named here gets _OTHER.
_REASONS: dict[str, str] = {
    "provider": "a workspace must not choose who answers you; " + _YOURS,
    "script": "a workspace must not replace your model with answers it wrote; " + _YOURS,
    "cassette": "a workspace must not replace your model with recorded answers it wrote; " + _YOURS,
    "record": "a workspace must not copy your conversation to a file it names; " + _YOURS,
    "api_key": "a workspace must not choose which API key is used; put api_key in your user config "
    "({user}) or the TETHER_API_KEY environment variable",
    "models": "a workspace must not choose which models your sessions may switch to; " + _YOURS,
    "reasoning_models": "a workspace must not choose what is sent to your provider; " + _YOURS,
    "base_url": "a workspace must not choose where your API key and conversation are sent; " + _YOURS,
    "home": "a workspace must not choose where Tether keeps your history; " + _YOURS,
    "max_message_mib": "a workspace must not let larger messages be stored and sent to your model; " + _YOURS,
    "allow_env": "a workspace must not choose which of your secrets its commands can see; " + _YOURS,
    "sandbox": "a workspace must not turn off or change the sandbox its own commands run in; " + _YOURS,
    "network": "a workspace must not give its own commands the network; " + _YOURS,
    "network_commands": "a workspace must not give its own commands the network; " + _YOURS,
    "allowed_domains": "a workspace must not let its own commands reach more of the network; " + _YOURS,
    "credentials": "a workspace must not choose which of your credentials are sent where; " + _YOURS,
    "allow_unix_sockets": "a workspace must not let its own commands reach services on this machine; " + _YOURS,
    "allow_read": "a workspace must not let its own commands read your credential stores; " + _YOURS,
    "mask_secrets": "a workspace must not let secrets in tool output reach the model unmasked; " + _YOURS,
    "shared": "a workspace must not move your sessions into the daemon every window shares; " + _YOURS,
    "shared_idle_timeout": "a workspace must not keep the shared daemon running; " + _YOURS,
    "memory": "a workspace must not turn on retrieved memory (it spends your tokens on your history); " + _YOURS,
    "memory_tokens": "a workspace must not choose how many of your tokens retrieved memory spends; " + _YOURS,
    "checkpoint_max_kib": "a workspace must not change what Tether records for you to undo its changes; " + _YOURS,
    # tether's debug lines carry prompts and tool results into the editor's log files
    "log_level": "a workspace must not make Tether log more of your conversation; " + _YOURS,
    "reviewer": "a workspace must not let a model approve its own tool calls; " + _YOURS,
    "reviewer_model": "a workspace must not choose the model that approves tool calls; " + _YOURS,
    "reviewer_timeout": "a workspace must not change how the approval reviewer is run; " + _YOURS,
    "ask_first": "a workspace must not change when Tether asks you first; " + _YOURS,
    "mcp_servers": "a workspace must not start programs or connect to servers (a cloned repository "
    "could run anything); add MCP servers to your user config ({user})",
    "delegate": "a workspace must not choose whether the model may start sub-agents (they spend your tokens); "
    + _YOURS,
    "delegate_max_steps": "a workspace must not choose how many steps sub-agents may take; " + _YOURS,
    "delegate_tokens": "a workspace must not choose how many of your tokens sub-agents may spend; " + _YOURS,
    "acp_v2": "a workspace must not choose which protocol your editor speaks to Tether; " + _YOURS,
}
# A workspace's hooks are programs: run only when the user trusts that workspace.
_HOOKS = (
    "a workspace must not add hooks (they run programs); put them in your user config ({user}), or trust "
    'this workspace\'s hooks there with [workspaces."<workspace path>"] trust_hooks = true'
)
_OTHER = "a workspace config may set only " + ", ".join(sorted(WORKSPACE_KEYS)) + "; " + _YOURS

_GUARD_STRICTNESS = ("off", "log", "warn", "block")
# (order from loosest to strictest, the loosest a workspace may choose)
_NO_LOOSER: dict[str, tuple[tuple[str, ...], str]] = {
    "mode": (MODE_STRICTNESS, "ask"),
    "guard": (_GUARD_STRICTNESS, "warn"),
    "sandbox_auto_allow": (("on", "off"), "off"),
}


def workspace_layer(settings: Settings, path: Path, user_path: Path) -> Settings:
    """``settings`` with the allowed keys of the workspace config at ``path`` merged in.

    Refusals are appended to ``settings.refused`` and logged; never raises ConfigError.
    """
    source = f"workspace config {path}"
    refused: list[RefusedSetting] = []
    try:
        data = read_toml(path, source, required=False) or {}
    except ConfigError as exc:
        data = {}
        refused.append(RefusedSetting("", str(path), f"{exc}; Tether goes on with your own settings"))
    accepted: dict[str, object] = {}
    if "hooks" in data and _trusts_hooks(user_path, path.parent.parent):
        del data["hooks"]  # not a setting: tether.hooks runs them (the user trusts this workspace)
    for key, raw in data.items():
        try:
            accepted[key] = _accept(settings, key, raw, path, source, user_path)
        except _Refused as exc:
            refused.append(RefusedSetting(key, str(path), str(exc)))
    added = cast("tuple[str, ...]", accepted.pop("deny_commands", ()))  # `_accept`'s value for it
    hidden = cast("tuple[str, ...]", accepted.pop("deny_read", ()))  # added to the user's wherever set
    merged = merge(settings, accepted, dict.fromkeys(accepted, source))
    if hidden:
        merged = replace(merged, workspace_deny_read=with_extra(merged.workspace_deny_read, hidden))
    if added:
        own = merged.deny_commands
        label = f"{merged.sources['deny_commands']} + {source}" if own else source
        merged = replace(
            merged,
            deny_commands=with_extra(own, added),
            workspace_deny_commands=added,
            sources={**merged.sources, "deny_commands": label},
        )
    if refused:
        _log(refused)
        merged = replace(merged, refused=merged.refused + tuple(refused))
    return merged


def _trusts_hooks(user_path: Path, workspace: Path) -> bool:
    """The user config has `[workspaces."<workspace>"] trust_hooks = true`."""
    try:
        table = (read_toml(user_path, f"user config {user_path}", required=False) or {}).get("workspaces")
    except ConfigError:
        return False
    if not isinstance(table, dict):
        return False
    mine = workspace.resolve()
    return any(
        isinstance(v, dict)
        and v.get("trust_hooks") is True
        and Path(k).expanduser().is_absolute()
        and Path(k).expanduser().resolve() == mine
        for k, v in table.items()
    )


class _Refused(Exception):
    """A workspace-config key or value that is ignored; the message says why."""


def _accept(settings: Settings, key: str, raw: object, path: Path, source: str, user_path: Path) -> Any:
    """The value ``key = raw`` takes when a workspace may set it; :class:`_Refused` otherwise."""
    if key == "hooks":
        raise _Refused(_HOOKS.format(user=user_path))
    if key not in SETTING_KEYS and key not in _REASONS:
        raise _Refused(str(unknown_key(key, source, camel_ok=False)).replace(f" in {source}", "", 1))
    if key not in WORKSPACE_KEYS:
        raise _Refused(_REASONS.get(key, _OTHER).format(user=user_path))
    try:
        value = validated({key: raw}, {key: source}, strings_ok=False, base_dir=path.parent)[key]
    except ConfigError as exc:
        raise _Refused(str(exc)) from None
    if key in _NO_LOOSER:
        order, ceiling = _NO_LOOSER[key]
        current = getattr(settings, key)
        floor = max(order.index(ceiling), order.index(current))
        if order.index(str(value)) < floor:
            raise _Refused(
                f"{key} = {value!r} would loosen Tether; a workspace may only make it stricter "
                f"({' or '.join(order[floor:])}: not looser than {ceiling!r}, nor than {current!r} from "
                f"your own settings); put a looser {key} in your user config ({user_path}), the "
                "environment or a flag"
            )
    return value


def _log(refused: list[RefusedSetting]) -> None:
    import logging  # only when something is refused

    from .daemon_log import start_log

    start_log()  # in the daemon's format, even before `tether serve` has started its log
    log = logging.getLogger("tether.config")
    for item in refused:
        log.warning("%s", item.message())
