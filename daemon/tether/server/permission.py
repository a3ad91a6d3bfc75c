"""The questions to the user: ACP `session/request_permission` (v1, v2) and LSP `window/showMessageRequest`.

Owns: building from an `ApprovalRequest` the prompt each kind of client understands (SPEC §3.22, §3.23:
options, `_meta.tether` reasons and hunks; docs/decisions/0004, 0018) and reading its answer.
Must not: decide anything itself, choose or send the question (`asker.py`), or import LSP's types
for an ACP client.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, cast, get_args

from tether_protocol import (
    AllowAlwaysRule,
    AllowAlwaysScope,
    Hunk,
    InvalidParams,
    JsonObject,
    PermissionOption,
    PermissionOptionKind,
    PermissionRequestMeta,
    PermissionTetherMeta,
    PermissionToolCall,
    RequestPermissionParams,
    RequestPermissionResult,
    SelectedOutcome,
    TextContent,
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallLocation,
    ToolKind,
    structure,
)

from ..approvals import ApprovalRequest, AskerAnswer
from ..approvals.gate import OPTIONS
from ..rendering.acp_v1 import change_content
from ..tools.diffs import hunks
from ..tools.visible_text import visible

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from tether_protocol import MessageActionItem

    from ..agent.sink import TurnSink
    from ..transport.rpc import TetherRPC

_OPTION_NAMES = {
    "allow_once": "Allow once",
    "allow_always": "Allow always",
    "reject_once": "Reject",
    "reject_always": "Reject always",
    "allow_once_network": "Allow once, with network",
}
_PLAIN_OPTIONS: tuple[PermissionOptionKind, ...] = ("allow_once", "allow_always", "reject_once", "reject_always")
_TOOL_KINDS = frozenset(get_args(ToolKind))
LSP_ACTIONS = {
    "Allow once": "allow_once",
    "Allow once with network": "allow_once_network",
    "Allow always": "allow_always",
    "Reject": "reject_once",
}


def offers_network(request: ApprovalRequest) -> bool:
    """A command that will run in the sandbox without the network can be allowed with it."""
    return request.kind == "execute" and request.sandboxed and not request.network_granted


def acp_options(request: ApprovalRequest, *, by_name: bool) -> list[PermissionOption]:
    """ACP's four options, one per kind; the network option only for a client that shows
    options by name (``by_name``): it is a second `allow_once`, and a client that keys its
    answers by kind (CodeCompanion: one key per kind, the last option of a kind wins) would
    grant the network to a user who pressed "Accept"."""
    options = [PermissionOption(option, _option_name(request, option), option) for option in _PLAIN_OPTIONS]
    if by_name and offers_network(request):
        options.append(PermissionOption("allow_once_network", _OPTION_NAMES["allow_once_network"], "allow_once"))
    return options


def _option_name(request: ApprovalRequest, option: str) -> str:
    """ "Allow always" is named by what it stores and allows (`scope.py`), before it is picked."""
    if option == "allow_always" and request.always is not None:
        return visible(request.always.text)
    return _OPTION_NAMES[option]


def _always_meta(request: ApprovalRequest) -> AllowAlwaysScope | None:
    scope = request.always
    if scope is None:
        return None
    rules = [AllowAlwaysRule(rule.kind, rule.pattern) for rule in scope.rules]
    return AllowAlwaysScope(visible(scope.text), rules, scope.sandboxed, scope.network)


def lsp_actions(request: ApprovalRequest) -> list[MessageActionItem]:
    from tether_protocol import MessageActionItem  # LSP's types: for stock LSP clients only

    return [
        MessageActionItem(title)
        for title, option in LSP_ACTIONS.items()
        if option != "allow_once_network" or offers_network(request)
    ]


def tool_call_content(request: ApprovalRequest) -> list[ToolCallContent]:
    """ACP content showing what would happen: diffs for file changes, the command otherwise."""
    if request.previews:
        return change_content(request.previews)
    if request.command is not None:
        # every character shown as itself or escaped: what is approved is what runs
        text = f"$ {visible(request.command)}\n(in {visible(request.cwd or '.')})"
        return [ToolCallContentBlock(TextContent(text))]
    if request.detail:  # an MCP tool: its server, name and arguments
        return [ToolCallContentBlock(TextContent(visible(request.detail)))]
    return []


def _hunk_list(request: ApprovalRequest) -> list[Hunk]:
    return [
        Hunk(p.path, hunk.index, hunk.header())
        for p in request.previews
        if p.old_text is not None and p.new_text is not None
        for hunk in hunks(p.old_text, p.new_text)
    ]


def permission_params(request: ApprovalRequest, reason: str, *, by_name: bool = False) -> RequestPermissionParams:
    """The `session/request_permission` params asking about `request` (``by_name``: the client
    declared `clientCapabilities._meta.tether.namedPermissionOptions`, see `acp_options`)."""
    tool_call = PermissionToolCall(
        request.call_id,
        title=visible(request.title),
        kind=_tool_kind(request.kind),
        status="pending",
        content=tool_call_content(request),
        # as the tool_call update has them: CodeCompanion takes the first as the diff's file
        locations=[ToolCallLocation(loc.path, loc.line) for loc in request.locations] or None,
        raw_input=request.arguments,
    )
    note = visible(request.reviewer_note) if request.reviewer_note else None
    meta = PermissionRequestMeta(
        PermissionTetherMeta(visible(reason), _hunk_list(request), note, request.parent_call_id, _always_meta(request))
    )
    options = acp_options(request, by_name=by_name)
    return RequestPermissionParams(request.session_id, tool_call, options, meta=meta)


def read_answer(result: object, offered: Collection[str] = OPTIONS) -> AskerAnswer:
    """The user's answer to `session/request_permission`: a missing or odd answer is
    "cancelled", an option Tether did not offer (not in ``offered``) is a "no"."""
    try:
        answer = structure(result, RequestPermissionResult, method="session/request_permission")
    except InvalidParams:
        return AskerAnswer("cancelled")
    outcome = answer.outcome
    if not isinstance(outcome, SelectedOutcome):
        return AskerAnswer("cancelled")
    if outcome.option_id not in offered:
        return AskerAnswer("reject_once", detail=f"option {outcome.option_id!r} was not offered")
    return AskerAnswer(outcome.option_id, accepted_hunks=_accepted_hunks(answer, outcome))


def _tool_kind(kind: str) -> ToolKind:
    return cast("ToolKind", kind) if kind in _TOOL_KINDS else "other"


def _accepted_hunks(answer: RequestPermissionResult, outcome: SelectedOutcome) -> dict[str, list[int]] | None:
    for meta in (outcome.meta, answer.meta):
        if meta is not None and meta.tether is not None and meta.tether.accepted_hunks is not None:
            return meta.tether.accepted_hunks
    return None


def permission_params_v2(request: ApprovalRequest, reason: str, *, by_name: bool = False) -> JsonObject:
    """ACP v2's `session/request_permission` params: v1's, moved into v2's places (the
    prompt text to `title`/`description`, the call to `subject.toolCall`, diffs as changes)."""
    from tether_protocol import unstructure

    from ..rendering.acp_v2 import tool_call_content_v2

    v1 = unstructure(permission_params(request, reason, by_name=by_name))
    tool_call = {key: value for key, value in v1["toolCall"].items() if key != "content"}
    content = tool_call_content_v2(request.previews) if request.previews else v1["toolCall"].get("content")
    if content:
        tool_call["content"] = content
    session_id = v1["sessionId"]
    if request.child_session_id is not None and request.child_call_id is not None:
        # a sub-agent's call: asked on its own session, by its own id (SPEC §12.6)
        session_id, tool_call["toolCallId"] = request.child_session_id, request.child_call_id
    return {
        "sessionId": session_id,
        "title": tool_call.get("title") or visible(request.title) or "Allow this?",
        "description": visible(reason),
        "subject": {"type": "tool_call", "toolCall": tool_call},
        "options": v1["options"],
        "_meta": v1["_meta"],
    }


# a window that closed with its approval open: the others still asked may answer (shared/approvals.py)
WINDOW_CLOSED = AskerAnswer("unavailable", detail="its window closed with the request open")


@contextmanager
def waiting_on_user(sink: TurnSink | None) -> Iterator[None]:
    """A v2 turn is `requires_action` while its approval waits, `running` once it is answered."""
    from ..agent.sink import TurnStateChanged

    if sink is not None:
        sink.emit(TurnStateChanged("requires_action"))
    try:
        yield
    finally:
        if sink is not None:
            sink.emit(TurnStateChanged("running"))


async def ask_v2(
    rpc: TetherRPC, request: ApprovalRequest, reason: str, sink: TurnSink | None, *, by_name: bool
) -> AskerAnswer:
    """Ask a v2 client; the turn is `requires_action` until it answers, then `running`."""
    from ..transport.rpc import ClientRequestFailed, unless_window_left

    params = permission_params_v2(request, reason, by_name=by_name)
    try:
        with waiting_on_user(sink):
            result = await unless_window_left(rpc.request("session/request_permission", params))
    except ClientRequestFailed as exc:
        return AskerAnswer("unavailable", detail=f"session/request_permission failed: {exc.error_message}")
    if result is None:
        return WINDOW_CLOSED
    return read_answer(result, {option["optionId"] for option in params["options"]})
