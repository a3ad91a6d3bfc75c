"""The ACP requests Tether sends the client: `session/request_permission`,
`fs/read_text_file`, `fs/write_text_file` (SPEC §3.21-§3.25).

Owns: naming their params and results for Tether: generated (`acp_v1/client_requests.py`),
their `_meta.tether` is `_permission_meta`'s. Must not: decide how an answer is read (a missing
or odd answer counts as "cancelled" or "reject": `tether.server.permission`'s rule).
"""

from __future__ import annotations

from ._permission_meta import (
    AcceptedHunksMeta,
    AllowAlwaysRule,
    AllowAlwaysScope,
    Hunk,
    PermissionRequestMeta,
    PermissionResultMeta,
    PermissionTetherMeta,
)
from .acp_v1.client_requests import (
    CancelledOutcome,
    PermissionOption,
    PermissionOptionKind,
    PermissionToolCall,
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionOutcome,
    RequestPermissionParams,
    RequestPermissionResult,
    SelectedOutcome,
    WriteTextFileParams,
    WriteTextFileResult,
)

__all__ = [
    "AcceptedHunksMeta",
    "AllowAlwaysRule",
    "AllowAlwaysScope",
    "CancelledOutcome",
    "Hunk",
    "PermissionOption",
    "PermissionOptionKind",
    "PermissionRequestMeta",
    "PermissionResultMeta",
    "PermissionTetherMeta",
    "PermissionToolCall",
    "ReadTextFileParams",
    "ReadTextFileResult",
    "RequestPermissionOutcome",
    "RequestPermissionParams",
    "RequestPermissionResult",
    "SelectedOutcome",
    "WriteTextFileParams",
    "WriteTextFileResult",
]
