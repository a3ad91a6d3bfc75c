"""Tether's `_meta` in the client's `initialize` capabilities (SPEC §3.1, §3.22, §4.9, §4.11).

Owns: `ClientTetherCapabilities` and `ClientCapabilitiesMeta`, hand-declared (ACP's
`terminal_output` key and Tether's extension); `ClientCapabilities` itself is generated
(`acp_v1/initialize.py`). Must not: read them (`server/handshake.py` does).
"""

from __future__ import annotations

import msgspec

from ._codec import Wire

__all__ = ["ClientCapabilitiesMeta", "ClientTetherCapabilities"]


class ClientTetherCapabilities(Wire, omit_defaults=False):
    """`namedPermissionOptions: true`: the client shows permission options by name, so it
    is offered "Allow once, with network", a second option of kind `allow_once` (SPEC §3.22).
    `clearSession: true`: `/clear` opens a new session and tells the client by
    `_tether/session/cleared`, for it to show in the same view (SPEC §4.11)."""

    named_permission_options: bool = False
    clear_session: bool = False


class ClientCapabilitiesMeta(Wire):  # ACP's key `terminal_output` is snake_case
    """`terminal_output: true` asks for command output as terminal `_meta` (SPEC §4.9)."""

    terminal_output: bool | None = msgspec.field(default=None, name="terminal_output")
    tether: ClientTetherCapabilities | None = None
