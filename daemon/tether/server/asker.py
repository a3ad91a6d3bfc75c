"""Asking the user, by the way the client declared: ACP `session/request_permission`, LSP
`window/showMessageRequest`, or nobody.

Owns: `ClientAsker`, made for every turn: which way this client is asked, and that a client
answered LSP's request with MethodNotFound (Helix), so it is not asked again.
Must not: build the prompts or read the answers (`permission.py`, imported at the first question).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether_protocol import unstructure

from ..approvals import ApprovalRequest, AskerAnswer
from ..tools.visible_text import visible
from ..transport.rpc import ClientRequestFailed, unless_window_left

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..agent.sink import TurnSink
    from ..services.live_session import LiveSession
    from ..transport.rpc import TetherRPC
    from .handshake import ClientProfile


def _always_line(request: ApprovalRequest) -> str:
    """What the "Allow always" action stores and allows (an action's title is its key)."""
    return f'\n"Allow always": {request.always.text}' if request.always is not None else ""


class ClientAsker:
    """Asks through whatever the client supports; remembers a client that cannot."""

    def __init__(self, rpc: TetherRPC, client: ClientProfile | None, live: Mapping[str, LiveSession]) -> None:
        self.rpc = rpc
        self.client = client
        self._lsp_unsupported = False
        # ACP v2: the live sessions, whose running turn's sink (`LiveSession.turn_sinks`) is told
        # `requires_action` while its approval waits
        self.live = live

    def turn_sink(self, request: ApprovalRequest) -> TurnSink | None:
        """The sink of the v2 turn the approval is for (a sub-agent's: its own), if one runs."""
        session = self.live.get(request.session_id)
        return session.turn_sinks.get(request.child_session_id or request.session_id) if session else None

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        client = self.client
        if client is not None and client.acp:
            return await self._ask_acp(request, reason)
        if client is not None and client.lsp_show_message_request:
            if self._lsp_unsupported:
                return AskerAnswer("unavailable", detail="it answered window/showMessageRequest with MethodNotFound")
            return await self._ask_lsp(request, reason)
        return AskerAnswer(
            "unavailable", detail="it declared neither ACP permission prompts nor window/showMessageRequest"
        )

    async def _ask_acp(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        from .permission import WINDOW_CLOSED, permission_params, read_answer

        if self.client is not None and self.client.wire_version == 2:
            from .permission import ask_v2

            by_v2_name = self.client.named_permission_options
            asking = self.turn_sink(request)
            return await ask_v2(self.rpc, request, reason, asking, by_name=by_v2_name)
        by_name = self.client is not None and self.client.named_permission_options
        typed = permission_params(request, reason, by_name=by_name)
        try:
            result = await unless_window_left(self.rpc.request("session/request_permission", unstructure(typed)))
        except ClientRequestFailed as exc:
            return AskerAnswer("unavailable", detail=f"session/request_permission failed: {exc.error_message}")
        if result is None:
            return WINDOW_CLOSED
        return read_answer(result, {option.option_id for option in typed.options})

    async def _ask_lsp(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        from tether_protocol import ShowMessageRequestParams

        from .permission import LSP_ACTIONS, WINDOW_CLOSED, lsp_actions

        # a command's title is the command itself: shown once, under a heading
        heading, detail = (
            ("Run a command", request.command)
            if request.command is not None
            else (request.title, ", ".join(request.rel_paths))
        )
        # type 2, Warning: it changes things
        who = " (a sub-agent)" if request.parent_call_id else ""
        params = ShowMessageRequestParams(
            2, visible(f"Tether{who}: {heading}\n{detail}\n({reason}){_always_line(request)}"), lsp_actions(request)
        )
        try:
            result = await unless_window_left(self.rpc.request("window/showMessageRequest", unstructure(params)))
        except ClientRequestFailed as exc:
            if exc.code == -32601:
                self._lsp_unsupported = True
                return AskerAnswer("unavailable", detail="it answered window/showMessageRequest with MethodNotFound")
            return AskerAnswer("unavailable", detail=f"window/showMessageRequest failed: {exc.error_message}")
        if result is None:
            return WINDOW_CLOSED
        title = result.get("title") if isinstance(result, dict) else None
        # A dismissed prompt (null) is a "no".
        return AskerAnswer(LSP_ACTIONS.get(title or "", "reject_once"))
