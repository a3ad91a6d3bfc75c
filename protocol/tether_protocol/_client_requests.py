"""The ACP requests Tether sends the client: `session/request_permission`,
`fs/read_text_file`, `fs/write_text_file` (SPEC §3.21-§3.25).

Owns: their params and results as sent and as read back. Must not: decide how an
answer is read (a missing or odd answer counts as "cancelled" or "reject": that is
`tether.server.permission`'s rule, not a shape).
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._codec import Wire
from ._common import ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind
from ._json import JsonObject
from ._sessions import EmptyResult

__all__ = [
    "AcceptedHunksMeta", "AllowAlwaysRule", "AllowAlwaysScope", "CancelledOutcome", "Hunk", "PermissionOption",
    "PermissionOptionKind", "PermissionRequestMeta", "PermissionResultMeta",
    "PermissionTetherMeta", "PermissionToolCall", "ReadTextFileParams",
    "ReadTextFileResult", "RequestPermissionOutcome", "RequestPermissionParams",
    "RequestPermissionResult", "SelectedOutcome", "WriteTextFileParams",
    "WriteTextFileResult",
]

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionToolCall(Wire):
    """The tool call asked about: the same `toolCallId`, `title`, `kind` and `locations`
    as its `session/update`s (locations absolute, with the first changed line where
    known; none for a command); `content` holds `diff` blocks for file changes or the
    command as a text block."""

    tool_call_id: str
    title: Union[str, None] = None
    kind: Union[ToolKind, None] = None
    status: Union[ToolCallStatus, None] = None
    content: Union[list[ToolCallContent], None] = None
    locations: Union[list[ToolCallLocation], None] = None
    raw_input: Union[JsonObject, None] = None


class PermissionOption(Wire):
    """`optionId` is the kind, or `allow_once_network` (kind `allow_once`) for a
    sandboxed command that may be given the network."""

    option_id: str
    name: str
    kind: PermissionOptionKind


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
    reviewer: Union[str, None] = None
    # a sub-agent's call: the `delegate` call of the session's turn it runs under
    parent_call_id: Union[str, None] = None
    # what "allow always" would store and allow
    allow_always: Union[AllowAlwaysScope, None] = None


class PermissionRequestMeta(Wire):
    tether: PermissionTetherMeta


class RequestPermissionParams(Wire):
    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]
    meta: Union[PermissionRequestMeta, None] = msgspec.field(default=None, name="_meta")


class AcceptedHunksMeta(Wire):
    """Apply only these hunks of an allowed edit: absolute path -> hunk indexes."""

    accepted_hunks: Union[dict[str, list[int]], None] = None


class PermissionResultMeta(Wire):
    tether: Union[AcceptedHunksMeta, None] = None


class SelectedOutcome(Wire, tag_field="outcome", tag="selected"):
    option_id: str
    meta: Union[PermissionResultMeta, None] = msgspec.field(default=None, name="_meta")


class CancelledOutcome(Wire, tag_field="outcome", tag="cancelled"):
    """`{"outcome": "cancelled"}`: the prompt turn was cancelled while the client asked."""


RequestPermissionOutcome = Union[SelectedOutcome, CancelledOutcome]


class RequestPermissionResult(Wire):
    """`_meta.tether.acceptedHunks` may sit here or on the selected outcome."""

    outcome: RequestPermissionOutcome
    meta: Union[PermissionResultMeta, None] = msgspec.field(default=None, name="_meta")


class ReadTextFileParams(Wire):
    """Always the whole file: Tether never sends `line` or `limit`."""

    session_id: str
    path: str


class ReadTextFileResult(Wire):
    content: str


class WriteTextFileParams(Wire):
    """`content` is the whole new text; `path` is absolute."""

    session_id: str
    path: str
    content: str


WriteTextFileResult = Union[EmptyResult, None]
