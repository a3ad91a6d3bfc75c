"""What a client's `initializationOptions` may change: only make Tether stricter.

Owns: `keep_user_limits`, which puts back every security setting a client loosened, each listed on
`Settings.refused` with where the user can set it, and makes a client's `deny_commands` and `deny_read` add
to the user's (whoever speaks to the daemon is not the user's config: SPEC §9).
Must not: import anything outside the standard library (`initialize` is answered first), or refuse a stricter value.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .settings import MODE_STRICTNESS, SOURCE_INIT_OPTIONS, RefusedSetting, Settings, with_extra

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["keep_user_limits"]

_GUARD_STRICTNESS = ("off", "log", "warn", "block")


def _looser_in(order: tuple[str, ...]) -> Callable[[object, object], bool]:
    return lambda mine, theirs: order.index(str(theirs)) < order.index(str(mine))


def _more_items(mine: object, theirs: object) -> bool:
    return not set(theirs) <= set(mine)  # type: ignore[call-overload]


# key -> (is the client's value looser than the user's?, what it would have done)
_LIMITS: dict[str, tuple[Callable[[object, object], bool], str]] = {
    # from "off" a client may ask for a sandbox; any other change could weaken it
    # (Landlock keeps `.git` writable where bubblewrap does not)
    "sandbox": (lambda mine, theirs: theirs != mine and mine != "off", "turn off or change the sandbox"),
    "mode": (_looser_in(MODE_STRICTNESS), "run tools with fewer approvals than your mode"),
    "guard": (_looser_in(_GUARD_STRICTNESS), "loosen the input guard"),
    "network": (_looser_in(("on", "allowlist", "off")), "give commands more of the network"),
    "network_commands": (_more_items, "give more commands the network"),
    "allowed_domains": (_more_items, "let commands reach more domains"),
    "credentials": (lambda mine, theirs: theirs != mine, "choose which credentials the proxy sends"),
    "allow_env": (_more_items, "let commands see more of your environment"),
    "allow_unix_sockets": (_more_items, "let commands reach more unix sockets"),
    "allow_read": (_more_items, "let commands read more of your credential stores"),
    "mask_secrets": (
        lambda mine, theirs: theirs == "off" and mine != "off",
        "let secrets in tool output reach the model unmasked",
    ),
    "sandbox_auto_allow": (lambda mine, theirs: theirs == "on" and mine != "on", "run commands without asking"),
    "reviewer": (lambda mine, theirs: theirs == "on" and mine != "on", "let a model approve tool calls"),
    "reviewer_model": (lambda mine, theirs: theirs != mine, "choose the model that approves tool calls"),
    "ask_first": (lambda mine, theirs: theirs == "off" and mine == "on", "stop Tether asking first"),
    "max_message_mib": (lambda mine, theirs: int(str(theirs)) > int(str(mine)), "accept larger messages"),
    # the history is opened with the start-up value; the sandbox hides this one (§5.13)
    "home": (lambda mine, theirs: theirs != mine, "move the history commands must not read"),
}


def keep_user_limits(before: Settings, after: Settings, user_config: str) -> Settings:
    """`after` (the client's options merged over `before`) with every loosened security
    setting put back to `before`'s value and listed on `refused`."""
    kept: dict[str, Any] = {}  # values of several types, each its key's
    refused: list[RefusedSetting] = []
    for key, (looser, what) in _LIMITS.items():
        mine, theirs = getattr(before, key), getattr(after, key)
        if theirs != mine and looser(mine, theirs):
            kept[key] = mine
            refused.append(
                RefusedSetting(
                    key,
                    SOURCE_INIT_OPTIONS,
                    (
                        f"a client may only make Tether stricter, not {what} (yours: {_shown(mine)}, asked: "
                        f"{_shown(theirs)}); set {key} in your user config ({user_config}), the environment "
                        f"(TETHER_{key.upper()}) or a flag"
                    ),
                )
            )
    for key in ("deny_commands", "deny_read"):  # added to the user's, never in their place
        if getattr(after, key) != getattr(before, key):
            kept[key] = with_extra(getattr(before, key), getattr(after, key))
    if not kept:
        return after
    sources = dict(after.sources)
    sources.update({key: before.sources[key] for key in kept if key not in ("deny_commands", "deny_read")})
    return replace(after, **kept, sources=sources, refused=(*after.refused, *refused))


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]" if value else "none"
    return repr(value)
