"""ACP's session config options: the `configOptions` of `session/new|load|resume`
answers, `session/set_config_option` and the unstable `session/set_model` (SPEC §3.36),
and `_tether/session/cleared` (`/clear` in a client that declared `clearSession`, SPEC §4.11).

Owns: their params and results (msgspec Structs; selects only: Tether offers no boolean option).
Must not: hold behaviour (which options a session has is the daemon's).
"""

from __future__ import annotations

from typing import Union

import msgspec

from ._codec import Meta, Wire

__all__ = [
    "SessionConfigOption", "SessionConfigSelectOption", "SetConfigOptionParams",
    "SessionClearedParams", "SetConfigOptionResult", "SetModelParams",
]


class SessionConfigSelectOption(Wire):
    value: str
    name: str
    description: Union[str, None] = None


class SessionConfigOption(Wire, tag_field="type", tag="select"):
    """A select option: `category` is ACP's ("model", "mode", ...), UX only."""

    id: str
    name: str
    current_value: str
    options: list[SessionConfigSelectOption]
    category: Union[str, None] = None
    description: Union[str, None] = None


class SetConfigOptionParams(Wire):
    session_id: str
    config_id: str
    value: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class SetConfigOptionResult(Wire):
    """The full set of options, with their values after the change."""

    config_options: list[SessionConfigOption]
    meta: Meta = msgspec.field(default=None, name="_meta")


class SetModelParams(Wire):
    """`session/set_model` (ACP, unstable; avante uses it): the `model` option by another name."""

    session_id: str
    model_id: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class SessionClearedParams(Wire):
    """`_tether/session/cleared` (daemon -> client): `/clear` made `new_session_id` (same
    workspace, mode, model and reasoning) for the view that showed `session_id`."""

    session_id: str
    new_session_id: str
    config_options: list[SessionConfigOption]
    meta: Meta = msgspec.field(default=None, name="_meta")
