"""A raw ACP v2 client for the attack tests: JSON-RPC requests as a hostile editor would
send them (no SDK to refuse a bad one), every `session/update` kept, every request of the
daemon answered by a callable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from daemon_harness import until
from tether_client import ClientError
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


class V2Window:
    """One v2 connection: `updates` is every (sessionId, update) in order, `asked` every
    request of the daemon (method, params); `answer(method, params)` answers them."""

    def __init__(self, client: Any, answer: Callable[[str, dict], Awaitable[Any]] | None = None) -> None:
        self.client = client
        self.updates: list[tuple[str, dict]] = []
        self.asked: list[tuple[str, dict]] = []
        self._answer = answer
        client.peer.on_notification = self._note
        client.peer.on_request = self._ask

    def _note(self, method: str, params: Any) -> None:
        if method == "session/update":
            self.updates.append((params["sessionId"], params["update"]))

    async def _ask(self, method: str, params: Any) -> Any:
        self.asked.append((method, params))
        return await self._answer(method, params) if self._answer is not None else ALLOW

    async def initialize(self, capabilities: dict | None = None) -> dict:
        return await self.client.request(
            "initialize",
            {
                "protocolVersion": 2,
                "info": {"name": "hostile-v2", "version": "1"},
                "capabilities": capabilities or {},
            },
        )

    async def new_session(self, workspace: Path) -> str:
        return (await self.client.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["sessionId"]

    async def prompt(self, session_id: str, text: str, **extra: Any) -> dict:
        return await self.client.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}], **extra},
        )

    async def refused(self, method: str, params: Any) -> ClientError:
        """The daemon's error for this request (a test fails if it is answered)."""
        try:
            answer = await self.client.request(method, params)
        except ClientError as error:
            return error
        raise AssertionError(f"{method} {str(params)[:200]} was answered {str(answer)[:200]}")

    def of(self, session_id: str, kind: str | None = None) -> list[dict]:
        return [u for s, u in self.updates if s == session_id and (kind is None or u["sessionUpdate"] == kind)]

    def states(self, session_id: str) -> list[str]:
        return [u["state"] for u in self.of(session_id, "state_update")]

    async def idle(self, session_id: str, timeout: float = 30.0) -> dict:
        """The session's first `state_update` idle (waited for)."""
        await until(lambda: "idle" in self.states(session_id), timeout=timeout)
        return next(u for u in self.of(session_id, "state_update") if u["state"] == "idle")


async def opened(windows: Any, script: Path) -> V2Window:
    """A v2 window of the shared daemon (`windows`: tests/shared's fixture), initialized."""
    window = V2Window(await windows.open(script=script, initialize=False))
    await window.initialize()
    return window


def assert_valid(window: V2Window) -> None:
    """Every update the window got decodes with the v2 types (replay_complete: the RFD's)."""
    for session_id, update in window.updates:
        note = convert({"sessionId": session_id, "update": update}, v2.UpdateSessionNotification, method="update")
        assert not isinstance(note.update.value, dict) or note.update.tag == "replay_complete", update
