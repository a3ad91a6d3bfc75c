"""Asking the user: ACP `session/request_permission`, LSP `window/showMessageRequest`,
or nobody.

Owns: building the prompt each kind of client understands from an `ApprovalRequest`
and reading its answer. ACP clients get the tool call with its diff (or command), the
four options (five for a sandboxed command that has no network yet: "Allow once, with
network") and, in `_meta.tether`, why they are asked and the hunks they may pick from
(answering with `_meta.tether.acceptedHunks` applies only those). Stock LSP clients get
a message with "Allow once" / "Allow once with network" (same condition) / "Allow
always" / "Reject". A client with neither (or one that answers MethodNotFound, like
Helix) is never asked: the mode's policy decides. Must not: decide anything itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..approvals import ApprovalRequest, AskerAnswer
from ..approvals.gate import OPTIONS
from ..tools.diffs import hunks
from ..tools.visible_text import visible
from ..transport.rpc import ClientRequestFailed
from .updates import diff_blocks

if TYPE_CHECKING:
    from ..transport.rpc import TetherRPC
    from .handshake import ClientProfile

_OPTION_NAMES = {
    "allow_once": "Allow once",
    "allow_always": "Allow always",
    "reject_once": "Reject",
    "reject_always": "Reject always",
    "allow_once_network": "Allow once, with network",
}
_LSP_ACTIONS = {
    "Allow once": "allow_once",
    "Allow once with network": "allow_once_network",
    "Allow always": "allow_always",
    "Reject": "reject_once",
}


def offers_network(request: ApprovalRequest) -> bool:
    """A command that will run in the sandbox without the network can be allowed with it."""
    return request.kind == "execute" and request.sandboxed and not request.network_granted


def acp_options(request: ApprovalRequest) -> list[dict[str, str]]:
    options = [
        {"optionId": option, "name": _OPTION_NAMES[option], "kind": option}
        for option in OPTIONS
        if option != "allow_once_network"
    ]
    if offers_network(request):
        options.append(
            {"optionId": "allow_once_network", "name": _OPTION_NAMES["allow_once_network"], "kind": "allow_once"}
        )
    return options


def lsp_actions(request: ApprovalRequest) -> list[dict[str, str]]:
    return [
        {"title": title}
        for title, option in _LSP_ACTIONS.items()
        if option != "allow_once_network" or offers_network(request)
    ]


def tool_call_content(request: ApprovalRequest) -> list[dict[str, Any]]:
    """ACP content showing what would happen: diffs for file changes, the command otherwise."""
    if request.previews:
        return diff_blocks(request.previews)
    if request.command is not None:
        # every character shown as itself or escaped: what is approved is what runs
        text = f"$ {visible(request.command)}\n(in {visible(request.cwd or '.')})"
        return [{"type": "content", "content": {"type": "text", "text": text}}]
    return []


def _hunk_list(request: ApprovalRequest) -> list[dict[str, Any]]:
    out = []
    for p in request.previews:
        if p.old_text is None or p.new_text is None:
            continue
        for hunk in hunks(p.old_text, p.new_text):
            out.append({"path": p.path, "index": hunk.index, "header": hunk.header()})
    return out


class ClientAsker:
    """Asks through whatever the client supports; remembers a client that cannot."""

    def __init__(self, rpc: TetherRPC, client: ClientProfile | None) -> None:
        self.rpc = rpc
        self.client = client
        self._lsp_unsupported = False

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        client = self.client
        if client is not None and client.acp:
            return await self._ask_acp(request, reason)
        if client is not None and client.lsp_show_message_request:
            if self._lsp_unsupported:
                return AskerAnswer("unavailable", detail="it answered window/showMessageRequest with MethodNotFound")
            return await self._ask_lsp(request, reason)
        return AskerAnswer("unavailable", detail="it declared neither ACP permission prompts nor window/showMessageRequest")

    async def _ask_acp(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        params = {
            "sessionId": request.session_id,
            "toolCall": {
                "toolCallId": request.call_id,
                "title": visible(request.title),
                "kind": request.kind,
                "status": "pending",
                "content": tool_call_content(request),
                "rawInput": request.arguments,
            },
            "options": acp_options(request),
            "_meta": {"tether": {"reason": visible(reason), "hunks": _hunk_list(request)}},
        }
        try:
            result = await self.rpc.request("session/request_permission", params)
        except ClientRequestFailed as exc:
            return AskerAnswer("unavailable", detail=f"session/request_permission failed: {exc.error_message}")
        outcome = (result or {}).get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") == "cancelled":
            return AskerAnswer("cancelled")
        option = outcome.get("optionId")
        if option not in OPTIONS:
            return AskerAnswer("reject_once", detail=f"unknown option {option!r}")
        return AskerAnswer(option, accepted_hunks=_accepted_hunks(result, outcome))

    async def _ask_lsp(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        detail = request.command if request.command is not None else ", ".join(request.rel_paths)
        params = {
            "type": 2,  # Warning: it changes things
            "message": visible(f"Tether: {request.title}\n{detail}\n({reason})"),
            "actions": lsp_actions(request),
        }
        try:
            result = await self.rpc.request("window/showMessageRequest", params)
        except ClientRequestFailed as exc:
            if exc.code == -32601:
                self._lsp_unsupported = True
                return AskerAnswer("unavailable", detail="it answered window/showMessageRequest with MethodNotFound")
            return AskerAnswer("unavailable", detail=f"window/showMessageRequest failed: {exc.error_message}")
        title = result.get("title") if isinstance(result, dict) else None
        # A dismissed prompt (null) is a "no".
        return AskerAnswer(_LSP_ACTIONS.get(title or "", "reject_once"))


def _accepted_hunks(result: dict[str, Any], outcome: dict[str, Any]) -> dict[str, list[int]] | None:
    for holder in (outcome, result):
        meta = holder.get("_meta")
        if isinstance(meta, dict):
            tether = meta.get("tether")
            if isinstance(tether, dict) and isinstance(tether.get("acceptedHunks"), dict):
                return {
                    str(path): [int(i) for i in indexes if isinstance(i, int)]
                    for path, indexes in tether["acceptedHunks"].items()
                    if isinstance(indexes, list)
                }
    return None
