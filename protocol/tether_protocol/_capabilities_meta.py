"""Tether's `_meta` in `initialize`: the client's capabilities' and the answer's (SPEC §3.1, §3.22, §4.9, §4.11, §9).

Owns: `ClientTetherCapabilities`, `ClientCapabilitiesMeta` (ACP's `terminal_output` key and
Tether's extension) and the answer's `InitializeResultMeta`, hand-declared; ACP's classes around
them are generated (`acp_v1/initialize.py`). Must not: read or build them (`server/handshake.py`
does), or pull in more than the start path's modules.
"""

from __future__ import annotations

import msgspec

from ._codec import Wire
from ._lsp_lifecycle import LspInitializeResult

__all__ = [
    "ClientCapabilitiesMeta",
    "ClientTetherCapabilities",
    "InitializeResultMeta",
    "InitializeTetherMeta",
    "RefusedSetting",
]


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


class RefusedSetting(Wire):
    """A workspace-config key Tether refused and ignored (SPEC §9)."""

    key: str
    file: str
    reason: str
    message: str


class InitializeTetherMeta(Wire):
    """The answer's `_meta.tether`: an ACP client's LSP half, the ACP versions Tether speaks
    (a v1 client may reconnect asking for 2), the workspace-config keys refused (§9)."""

    lsp: LspInitializeResult | None = None
    protocol_versions: list[int] | None = None
    config_refused: list[RefusedSetting] | None = None


class InitializeResultMeta(Wire):
    tether: InitializeTetherMeta | None = None
