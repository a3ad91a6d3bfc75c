"""Tether's `_meta` on the permission request and its answer (SPEC §3.22, §5.9, §5.10).

Owns: those shapes, hand-declared (Tether's extension: hunks, the reason, what "allow always"
stores); the requests themselves are generated (`acp_v1/client_requests.py`).
Must not: decide how an answer is read (`tether.server.permission` does).
"""

from __future__ import annotations

from ._codec import Wire

__all__ = [
    "AcceptedHunksMeta",
    "AllowAlwaysRule",
    "AllowAlwaysScope",
    "Hunk",
    "PermissionRequestMeta",
    "PermissionResultMeta",
    "PermissionTetherMeta",
]


class Hunk(Wire):
    """A hunk of a text change the user may pick (SPEC §5.10): `path` absolute, `index`
    0-based per file in diff order, `header` the unified-diff hunk header."""

    path: str
    index: int
    header: str


class AllowAlwaysRule(Wire):
    """A rule "allow always" stores: a tool kind (`execute`, `edit`, `delete`, `move`, `mcp`) and a pattern."""

    kind: str
    pattern: str


class AllowAlwaysScope(Wire):
    """What the "allow always" option allows, before it is picked (SPEC §5.9): `text` is
    also the option's name; `rules` what is stored (empty: nothing, it allows once);
    `sandboxed`/`network`: how the commands it allows run."""

    text: str
    rules: list[AllowAlwaysRule]
    sandboxed: bool
    network: bool


class PermissionTetherMeta(Wire):
    reason: str
    hunks: list[Hunk]
    # the approval reviewer's concern (it did not approve the call on its own)
    reviewer: str | None = None
    # a sub-agent's call: the `delegate` call of the session's turn it runs under
    parent_call_id: str | None = None
    # what "allow always" would store and allow
    allow_always: AllowAlwaysScope | None = None


class PermissionRequestMeta(Wire):
    tether: PermissionTetherMeta


class AcceptedHunksMeta(Wire):
    """Apply only these hunks of an allowed edit: absolute path -> hunk indexes."""

    accepted_hunks: dict[str, list[int]] | None = None


class PermissionResultMeta(Wire):
    tether: AcceptedHunksMeta | None = None
