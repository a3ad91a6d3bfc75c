"""What the gate is asked and answers: a call to approve, the user's answer, the verdict.

Owns: `ApprovalRequest` (what the call does and how it would run), `AskerAnswer`, the
`Asker` protocol the server implements, `Verdict`, and the option ids. Must not: decide
(`gate.py`) or talk to the client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from tether_protocol import JsonObject

from ..tools.base import ChangePreview, ToolLocation
from .scope import AlwaysScope

OPTIONS = ("allow_once", "allow_always", "reject_once", "reject_always", "allow_once_network")


@dataclass(slots=True)
class ApprovalRequest:
    session_id: str
    call_id: str
    tool_name: str
    kind: str  # ACP ToolKind of the tool
    title: str
    arguments: JsonObject
    mode: str
    command: str | None = None
    cwd: str | None = None
    rel_paths: list[str] = field(default_factory=list)
    previews: list[ChangePreview] = field(default_factory=list)
    # where the call points (absolute, first changed line where known), as its tool call shows
    locations: list[ToolLocation] = field(default_factory=list)
    # True when the command will run inside an OS sandbox; `sandbox_note` says why there
    # is none when there is none. A command without one is always asked.
    sandboxed: bool = False
    sandbox_note: str = ""
    # which backend ("bwrap", "landlock"): only bubblewrap keeps `.git` and `.tether/`
    # read-only, which sandbox-aware asking rests on (sandboxed_asking.py)
    sandbox_backend: str = ""
    # set by the gate before it asks: the command already has the network (setting or
    # `network_commands`), so "allow once, with network" is not offered
    network_granted: bool = False
    # what the `pre_tool` hooks decided (allow | deny | ask; None: nothing) and why
    hook_decision: str | None = None
    hook_reason: str = ""
    # set by the gate before it asks: nothing but the mode's default asks for this call, so
    # a `permission_request` hook or the reviewer may approve it
    reviewable: bool = False
    # the approval reviewer's concern, shown with the prompt (`_meta.tether.reviewer`)
    reviewer_note: str = ""
    # what the prompt shows of a call that is neither a diff nor a command (an MCP
    # tool's server, name and arguments)
    detail: str = ""
    # a sub-agent's call (agent/subagent.py): the `delegate` call it runs under
    parent_call_id: str | None = None
    # a sub-agent's call: its own session and call id there (ACP v2 asks with those)
    child_session_id: str | None = None
    child_call_id: str | None = None
    # set by the gate before it asks: the rules "allow always" stores, and what they allow
    always: AlwaysScope | None = None


@dataclass(slots=True)
class AskerAnswer:
    # one of OPTIONS, or "cancelled" (the turn was cancelled) or "unavailable" (the
    # client cannot show prompts)
    option: str
    accepted_hunks: dict[str, list[int]] | None = None
    detail: str = ""
    # who answered in the user's place ("hook guard", "the reviewer"): `detail` is their reason
    decided_by: str = ""


class Asker(Protocol):
    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer: ...


@dataclass(slots=True)
class Verdict:
    allowed: bool
    reason: str
    accepted_hunks: dict[str, list[int]] | None = None
    asked: bool = False
    cancelled: bool = False
    network: bool = False  # the command may use the network
    # run unasked because the sandbox alone keeps it in: not even `allowlist`'s proxy (and
    # the credentials it adds); its approval said "no network"
    offline: bool = False
    # run without the user's answer (sandbox-aware asking, an allow rule): a command's changes
    # to autorun paths (autoruns.py) are put back after it (tools/autorun_guard.py)
    guard_autoruns: bool = False
