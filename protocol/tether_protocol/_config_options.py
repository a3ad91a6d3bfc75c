"""ACP's session config options (`configOptions`, `session/set_config_option`: generated,
`acp_v1/config_options.py`), the unstable `session/set_model` (SPEC §3.36) and `_tether/session/cleared`.

Owns: the last two's params, hand-declared (not in ACP v1's stable schema; Tether's own).
Must not: hold behaviour (which options a session has is the daemon's).
"""

from __future__ import annotations

import msgspec

from ._codec import Meta, Wire
from .acp_v1.config_options import (
    SessionConfigOption,
    SessionConfigSelectOption,
    SetConfigOptionParams,
    SetConfigOptionResult,
)

__all__ = [
    "SessionClearedParams",
    "SessionConfigOption",
    "SessionConfigSelectOption",
    "SetConfigOptionParams",
    "SetConfigOptionResult",
    "SetModelParams",
]


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
