"""Handlers called in-process: a real `ClientConnection` of a real `Daemon` (real SQLite stores under tmp_path,
the scripted provider) whose method table is called directly, with a recording
connection in place of the transport. What a test sees is what a client would: the
result as JSON, or the JSON-RPC error, and the notifications sent. (A module of its own,
not conftest.py: test modules import it by a name no other test folder uses.)"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from daemon_harness import BASIC_SCRIPT
from tether.config import Settings
from tether.server.app import connect
from tether.server.daemon_services import Daemon as DaemonServices
from tether.transport.rpc import RawResult
from tether_protocol import TetherError, dumps, loads, unstructure

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable
    from pathlib import Path

    from tether.server.context import ClientConnection


class RecordingConnection:
    """Stands in for the transport's connection: keeps every message the daemon sends."""

    framing = "ndjson"
    frames_written = 0
    writes = 0

    def __init__(self, protocol_version: int = 1) -> None:
        self.protocol_version = protocol_version  # the ACP version negotiated (v2: its renderer)
        self.bodies: list[bytes] = []
        self._coalescers: dict[int, Any] = {}

    def send(self, message: Any) -> None:
        self.bodies.append(dumps(message))

    def send_body(self, body: bytes) -> None:
        self.bodies.append(body)

    def send_bodies(self, bodies: Iterable[bytes]) -> None:
        self.bodies.extend(bodies)

    def add_coalescer(self, coalescer: Any) -> None:
        self._coalescers[id(coalescer)] = coalescer

    def discard_coalescer(self, coalescer: Any) -> None:
        self._coalescers.pop(id(coalescer), None)

    def congested(self) -> bool:
        return False

    async def drain(self) -> None:
        """Everything sent is already recorded."""

    async def writable(self) -> None:
        """A recording never fills up."""

    def messages(self) -> list[dict[str, Any]]:
        for coalescer in list(self._coalescers.values()):
            coalescer.drain()
        return [loads(body) for body in self.bodies]

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The `session/update`s of a session, in order."""
        return [
            m["params"]["update"]
            for m in self.messages()
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]


class Answered(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.code: int = error["code"]
        self.message: str = error["message"]
        self.data: Any = error.get("data")


class Daemon:
    def __init__(self, server: ClientConnection, conn: RecordingConnection) -> None:
        self.server = server
        self.conn = conn

    async def call(self, method: str, params: Any = None) -> Any:
        """Call ``method`` as the transport would (params structured into the table's
        class); its result as the client reads it, or ``Answered`` with its error."""
        route = self.server.rpc.routes[method]
        try:
            typed = self.server.rpc.structure_params(route, params)
            result = await route.handler(typed)
        except TetherError as exc:
            raise Answered(exc.to_error()) from exc
        except Exception as exc:  # what the peer answers for one that is not a bug (a storage fault)
            known = self.server.rpc.options.known_failure
            failure = known(method, exc) if known is not None else None
            if failure is None:
                raise
            raise Answered(failure.to_error()) from exc
        if isinstance(result, RawResult):
            return loads(result.json)
        return loads(dumps(unstructure(result) if hasattr(result, "__attrs_attrs__") else result))

    async def new_session(self, workspace: Path) -> str:
        return str((await self.call("session/new", {"cwd": str(workspace)}))["sessionId"])


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "provider": "scripted",
        "script": str(BASIC_SCRIPT),
        "home": str(tmp_path / "home"),
        **overrides,
    }
    return Settings(**values)


@asynccontextmanager
async def running(settings: Settings, root: Path) -> AsyncIterator[Daemon]:
    """A daemon's server, its task group running, torn down as `serve()` does."""
    daemon = DaemonServices(settings)
    server = connect(daemon, settings, root)
    daemon.watch_after = server.watch_when
    conn = RecordingConnection()
    server.attach(conn)  # type: ignore[arg-type]
    async with daemon.lifetime(2.0):
        try:
            yield Daemon(server, conn)
        finally:
            await server.stop_turns()
            await server.close()
            await daemon.close()
