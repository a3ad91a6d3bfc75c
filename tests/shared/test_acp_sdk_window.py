"""The official ACP Python SDK as one of two windows of the shared daemon."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from test_one_session_two_windows import Person

from daemon_harness import until

if TYPE_CHECKING:
    from pathlib import Path


class SdkWindow:
    """An ACP editor written with the SDK: allows what it is asked, records the updates."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[str] = []

    def on_connect(self, conn: Any) -> None:
        self.agent = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any):
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        self.asked.append(tool_call.tool_call_id)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))


async def test_an_acp_sdk_window_and_a_tether_client_window_share_a_session(windows, workspace: Path):
    # The SDK is imported here, not at the top: it takes ~1 s and every test worker collects this module.
    import acp
    from acp import spawn_agent_process
    from acp.schema import ClientCapabilities, Implementation

    silent = Person()
    first = await windows.open(on_request=silent.on_request)
    session = await first.new_session(workspace)
    editor = SdkWindow()
    with open(windows.tmp / "sdk-window.stderr", "wb") as stderr:
        async with spawn_agent_process(
            editor,
            *windows.command(),
            env=dict(windows.env),
            cwd=workspace,
            transport_kwargs={"stderr": stderr.fileno()},
        ) as (conn, _process):
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="sdk-window", version="1"),
                ),
                15,
            )
            await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=session.id), 15)
            assert len(windows.daemon_pids()) == 1
            turn = session.prompt("edit the readme")
            await turn.wait()  # the SDK window allowed the edit; the other one never answered
            assert turn.stop_reason == "end_turn"
            assert editor.asked == ["call_edit"]
            await until(lambda: silent.taken_back(first))  # shown and taken back, or taken back unread
            assert "Hello, edited by Tether." in (workspace / "README.md").read_text()
            # the SDK window parsed every update of the turn the other window prompted
            await until(
                lambda: any(
                    getattr(u, "tool_call_id", None) == "call_edit" and getattr(u, "status", None) == "completed"
                    for _s, u in editor.updates
                )
            )
            assert {sid for sid, _u in editor.updates} == {session.id}
