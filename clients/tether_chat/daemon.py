"""The chat's daemon: a `tether serve` child reached through `tether_client`.

Owns: starting it (stderr kept, shown if it fails), the session it chats in, the requests
the chat sends, and handing each `session/update` to the UI as it comes.
Must not: import the daemon (`tether.*`): only the protocol, through `tether_client`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from .wire import DaemonError, JsonObject

if TYPE_CHECKING:  # imported once the prompt is on the screen (`start`)
    from tether_client import PromptTurn, Session, TetherClient

T = TypeVar("T")

_PATH_FLAGS = ("script", "home", "record", "cassette")
OnUpdate = Callable[[JsonObject], None]
OnRequest = Callable[[str, Any], Awaitable[Any]]


class DaemonGone(Exception):
    """The daemon ended or could not start: the message for the user."""


class Daemon:
    def __init__(self, serve_args: list[str], workspace: Path, on_update: OnUpdate, on_request: OnRequest) -> None:
        self.serve_args = serve_args
        self.workspace = workspace
        self.on_update = on_update
        self.on_request = on_request
        self.client: TetherClient | None = None
        self.session: Session | None = None
        self.modes: list[str] = []
        self.mode: str | None = None
        self._stderr: IO[bytes] | None = None

    async def start(self) -> None:
        from tether_client import ClientError, TetherClient

        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (a child's stderr: open as long as the child runs)
        command = [sys.executable, "-P", "-m", "tether", "serve"]  # -P: no module from the cwd (the workspace)
        client = await TetherClient.spawn(
            *self.serve_args,
            command=command,
            cwd=self.workspace,
            stderr=self._stderr,
            on_request=self.on_request,
        )
        self.client = client
        forward = client.peer.on_notification

        def hook(method: str, params: Any) -> None:
            if forward is not None:
                forward(method, params)
            if method == "session/update" and isinstance(params, dict):
                update = params.get("update")
                if isinstance(update, dict):
                    self.on_update(update)

        client.peer.on_notification = hook
        try:
            await client.initialize(clientInfo={"name": "tether-chat", "version": "0.1.0"})
        except (ClientError, ConnectionError, OSError) as exc:
            raise DaemonGone(self.why_gone(exc)) from exc

    async def ended(self) -> int:
        """Wait for the daemon's process to end: its exit code."""
        process = self.c.process
        assert process is not None
        return await process.wait()

    def why_gone(self, exc: BaseException | None = None) -> str:
        text = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace").strip()
        return text or f"the daemon stopped ({exc or 'no reason given'})"

    async def _ask(self, request: Awaitable[T]) -> T:
        """A request's answer; its JSON-RPC error as `DaemonError`."""
        from tether_client import ClientError

        try:
            return await request
        except ClientError as exc:
            raise DaemonError(exc.code, exc.message) from exc

    @property
    def c(self) -> TetherClient:
        assert self.client is not None
        return self.client

    def _took(self, session: Session) -> Session:
        self.session = session
        modes = session.info.get("modes") or {}
        self.modes = [str(m.get("id")) for m in modes.get("availableModes") or []]
        self.mode = modes.get("currentModeId")
        return session

    async def new_session(self) -> Session:
        return self._took(await self._ask(self.c.new_session(self.workspace)))

    async def load(self, session_id: str) -> Session:
        return self._took(await self._ask(self.c.load_session(session_id, self.workspace)))

    async def latest(self) -> str | None:
        result = await self._ask(self.c.request("_tether/session/latest", {"cwd": str(self.workspace)}))
        found = result.get("sessionId") if isinstance(result, dict) else None
        return str(found) if found else None

    async def sessions(self) -> list[JsonObject]:
        return await self._ask(self.c.list_sessions(self.workspace))

    async def search(self, query: str) -> list[JsonObject]:
        params = {"query": query, "cwd": str(self.workspace)}
        result = await self._ask(self.c.request("_tether/session/search", params))
        return list(result.get("hits") or [])

    def prompt(self, blocks: list[JsonObject], *, steer: bool = False) -> PromptTurn:
        """Sent at once: while a turn runs the daemon queues it, or with ``steer`` adds it
        to the running turn (SPEC §3.37)."""
        assert self.session is not None
        turn = self.session.prompt(blocks, steer=steer)
        turn.start()
        return turn

    async def dequeue(self, queue_id: str) -> None:
        assert self.session is not None
        await self._ask(self.session.dequeue(queue_id))

    async def cancel(self) -> None:
        """The running turn, and every prompt queued behind it (they answer `cancelled`)."""
        if self.session is not None:
            await self.session.cancel(cancel_queued=True)

    async def wait(self, turn: PromptTurn) -> JsonObject:
        """The turn's answer (its error as `DaemonError`)."""
        return await self._ask(turn.wait())

    async def set_mode(self, mode: str) -> None:
        assert self.session is not None
        await self._ask(self.c.request("session/set_mode", {"sessionId": self.session.id, "modeId": mode}))
        self.mode = mode

    async def report(self, turn_id: str | None) -> JsonObject | None:
        if not turn_id or self.session is None:
            return None
        params = {"sessionId": self.session.id, "turnId": turn_id}
        result = await self._ask(self.c.request("_tether/session/report", params))
        reports = result.get("reports") or []
        return reports[0] if reports else None

    async def reports(self) -> list[JsonObject]:
        """Every turn's run report of the session, oldest first."""
        if self.session is None:
            return []
        result = await self._ask(self.c.request("_tether/session/report", {"sessionId": self.session.id}))
        return list(result.get("reports") or [])

    async def rules(self) -> list[JsonObject]:
        """The approval rules of the session's workspace (`_tether/rules/list`)."""
        assert self.session is not None
        result = await self._ask(self.c.request("_tether/rules/list", {"sessionId": self.session.id}))
        return list(result.get("rules") or [])

    async def remove_rule(self, rule_id: int) -> None:
        assert self.session is not None
        await self._ask(self.c.request("_tether/rules/remove", {"sessionId": self.session.id, "id": rule_id}))

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        if self._stderr is not None:
            self._stderr.close()


def serve_args(args: Any, workspace: Path, flags: tuple[str, ...]) -> list[str]:
    """`tether serve`'s flags from the chat's own (paths made absolute: the daemon runs in
    the workspace, the user named them from here)."""
    out = ["--workspace", str(workspace)]
    for key in flags:
        value = getattr(args, key, None)
        if value is not None:
            if key in _PATH_FLAGS:
                value = os.path.abspath(os.path.expanduser(str(value)))
            out += [f"--{key.replace('_', '-')}", str(value)]
    return out


def history_file(args: Any) -> Path:
    """Where the input history is kept: the data directory's `chat_history`."""
    home = getattr(args, "home", None) or os.environ.get("TETHER_HOME")
    if not home:
        base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        home = os.path.join(base, "tether")
    return Path(home) / "chat_history"
