"""`TetherClient`: spawn or attach to a daemon and drive sessions and turns.

Owns: reaching a daemon (`spawn`: a `tether serve` child; `over_fds`: one served elsewhere),
its sessions and turns, and reading answers through `tether_protocol`'s classes.
Must not: import the daemon, or hand its users anything but the JSON the daemon sent
(`JsonObject`: the raw edge its users compare with the SPEC's examples).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol import (
    ContentBlock,
    Framing,
    JsonObject,
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    NewSessionResult,
    PromptParams,
    PromptResult,
    SessionIdParams,
    TextContent,
    structure,
    unstructure,
)

from ._peer import JsonRpcPeer, RequestHandler
from ._routing import TurnRouter

if TYPE_CHECKING:
    from tether_protocol import RewindRestore

# JsonObject: a JSON object as it is on the wire: the updates and results the client hands
# out (its users compare them with the SPEC's examples) and reads through the protocol's classes

_END = object()


_MAX_UNCLAIMED = 64  # sessions whose updates are kept until `new_session` takes them


class DaemonStartError(Exception):
    """The daemon could not start (its settings are invalid): the message for the user and
    the exit code `tether serve` would have ended with."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class PromptTurn:
    """One `session/prompt`: iterate it for the updates, then read `stop_reason`."""

    def __init__(self, session: Session, prompt: list[JsonObject], *, steer: bool = False) -> None:
        self.session = session
        self.prompt = prompt
        self.steer = steer  # `_meta.tether.steer`: into the running turn (SPEC §3.37)
        self.updates: list[JsonObject] = []
        self.result: JsonObject | None = None
        self.request_id: int | str | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._future: asyncio.Future[Any] | None = None
        self._over = False  # its answer was read (or will never be): it has left the router

    def start(self) -> None:
        if self._future is not None:
            return
        client = self.session.client
        params: JsonObject = {"sessionId": self.session.id, "prompt": self.prompt}  # blocks as given
        if self.steer:
            params["_meta"] = {"tether": {"steer": True}}
        client._turns.sent(self.session.id, self, steer=self.steer)
        # the turn ends where its answer is in the stream: the updates read with it (in the
        # same chunk) after it are the next turn's, though the awaiting task resumes later
        self.request_id, self._future = client.peer.request_future("session/prompt", params, on_answer=self._answered)
        self._future.add_done_callback(self._ended)

    def _answered(self) -> None:
        if not self._over:
            self._over = True
            self.session.client._turns.answered(self.session.id, self)
            self._queue.put_nowait(_END)

    def _ended(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled():
            # the error stays for wait() to raise; fetched here, a turn nobody waits for
            # (its daemon gone) is not reported as a "Future exception was never retrieved"
            future.exception()
        self._answered()  # no answer read (the daemon gone): it ends here

    def _push(self, update: JsonObject) -> None:
        self.updates.append(update)
        self._queue.put_nowait(update)

    def __aiter__(self) -> AsyncIterator[JsonObject]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[JsonObject]:
        self.start()
        while True:
            item = await self._queue.get()
            if item is _END:
                break
            yield item
        await self.wait()

    async def wait(self) -> JsonObject:
        self.start()
        assert self._future is not None
        self.result = await self._future
        return self.result

    @property
    def typed_result(self) -> PromptResult | None:
        """The `session/prompt` answer as the protocol's class (None before it came)."""
        return None if self.result is None else structure(self.result, PromptResult, method="session/prompt")

    @property
    def stop_reason(self) -> str | None:
        result = self.typed_result
        return None if result is None else result.stop_reason

    @property
    def turn_id(self) -> str | None:
        """`_meta.tether.turnId`: the name of the turn's run report."""
        result = self.typed_result
        meta = None if result is None or result.meta is None else result.meta.tether
        return None if meta is None else meta.turn_id

    def cancel(self) -> None:
        self.session.client.peer.notify("session/cancel", unstructure(SessionIdParams(self.session.id)))

    @property
    def steer_outcome(self) -> JsonObject | None:
        """`_meta.tether.steer` of the answer: where a steered message went (None: not steered)."""
        meta = (self.result or {}).get("_meta") or {}
        steer = (meta.get("tether") or {}).get("steer")
        return steer if isinstance(steer, dict) else None


class Session:
    def __init__(self, client: TetherClient, session_id: str, info: JsonObject) -> None:
        self.client = client
        self.id = session_id
        self.info = info
        self.updates: list[JsonObject] = []  # updates outside a turn (replay)
        # the updates that came before `session/load` was answered: the replay alone
        self.replay: list[JsonObject] = []

    def end_replay(self) -> None:
        self.replay = list(self.updates)

    def prompt(self, prompt: str | Sequence[JsonObject | ContentBlock], *, steer: bool = False) -> PromptTurn:
        """A turn on ``prompt``: text, or content blocks (the protocol's classes, or JSON
        objects sent as they are: tests send malformed ones on purpose). Sent while a turn
        runs, it waits in the daemon's queue (its updates come when its own turn runs);
        with ``steer`` it joins the running turn instead (SPEC §3.37)."""
        if isinstance(prompt, str):
            blocks = unstructure(PromptParams(self.id, [TextContent(prompt)]))["prompt"]
            return PromptTurn(self, blocks, steer=steer)
        return PromptTurn(self, [b if isinstance(b, dict) else unstructure(b) for b in prompt], steer=steer)

    def steer(self, prompt: str | Sequence[JsonObject | ContentBlock]) -> PromptTurn:
        """A message into the running turn (``prompt(..., steer=True)``): its answer comes when it landed."""
        return self.prompt(prompt, steer=True)

    async def cancel(self, *, cancel_queued: bool = False) -> None:
        """Cancel the running turn; with ``cancel_queued`` the queued prompts are withdrawn too."""
        params = unstructure(SessionIdParams(self.id))
        if cancel_queued:
            params["_meta"] = {"tether": {"cancelQueued": True}}
        self.client.peer.notify("session/cancel", params)

    async def queue(self) -> list[JsonObject]:
        """`_tether/session/queue`: the prompts waiting behind the running turn, oldest first."""
        from tether_protocol import QueueParams, QueueResult  # the queue's and rewind's types: when used

        result = await self.client.peer.request("_tether/session/queue", unstructure(QueueParams(self.id)))
        structure(result, QueueResult, method="_tether/session/queue")  # the shape the SPEC gives
        queued: list[JsonObject] = result["queued"]
        return queued

    async def dequeue(self, queue_id: str) -> None:
        """`_tether/session/dequeue`: withdraw a queued prompt (its turn answers `cancelled`)."""
        from tether_protocol import DequeueParams

        await self.client.peer.request("_tether/session/dequeue", unstructure(DequeueParams(self.id, queue_id)))

    async def rewind(
        self, *, to_turn: int | str | None = None, message_seq: int | None = None, to_rewind: int | None = None,
        restore: RewindRestore = "both", force: bool = False, dry_run: bool = False,
    ) -> JsonObject:
        """`_tether/session/rewind` (SPEC §3.40): the answer as sent (`done`, `restored`, `conflicts`...)."""
        from tether_protocol import RewindParams

        params = RewindParams(
            self.id, to_turn=to_turn, message_seq=message_seq, to_rewind=to_rewind,
            restore=restore, force=force, dry_run=dry_run,
        )
        result: JsonObject = await self.client.peer.request("_tether/session/rewind", unstructure(params))
        return result

    async def changes(self, turn: int | str | None = None) -> JsonObject:
        """`_tether/session/changes`: the files a turn (or the whole session) changed, with diffs."""
        from tether_protocol import ChangesParams

        result: JsonObject = await self.client.peer.request(
            "_tether/session/changes", unstructure(ChangesParams(self.id, turn=turn))
        )
        return result

    async def close(self) -> None:
        await self.client.peer.request("session/close", unstructure(SessionIdParams(self.id)))


class TetherClient:
    """A connection to a daemon: a spawned `tether serve` (`spawn`), or one served
    elsewhere over a pair of file descriptors (`over_fds`; `served` is that daemon's run,
    awaited by `close` as a process is)."""

    def __init__(
        self,
        peer: JsonRpcPeer,
        process: asyncio.subprocess.Process | None = None,
        *,
        served: asyncio.Future[int] | None = None,
    ) -> None:
        self.peer = peer
        self.process = process
        self.served = served
        self.init_result: JsonObject | None = None
        self._sessions: dict[str, Session] = {}
        # updates of a session whose `session/new` answer was read but not yet taken by the
        # awaiting task (the daemon sends the command list right after the answer)
        self._unclaimed: dict[str, list[JsonObject]] = {}
        self._turns: TurnRouter[PromptTurn] = TurnRouter()
        self.notifications: list[tuple[str, Any]] = []
        peer.on_notification = self._on_notification

    @classmethod
    async def spawn(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        stderr: Any = None,
        framing: Framing = "lsp",
        on_request: RequestHandler | None = None,
    ) -> TetherClient:
        # -P: the cwd (often the workspace) is not put on sys.path: no repository module is imported
        cmd = list(command or [sys.executable, "-P", "-m", "tether", "serve"]) + list(args)
        process = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=str(cwd) if cwd else None,
            env=env if env is not None else dict(os.environ),
            limit=1 << 24,
        )
        assert process.stdout is not None and process.stdin is not None
        peer = JsonRpcPeer(process.stdout, process.stdin, framing=framing, on_request=on_request)
        peer.start()
        return cls(peer, process)

    @classmethod
    async def over_fds(
        cls,
        read_fd: int,
        write_fd: int,
        *,
        framing: Framing = "lsp",
        on_request: RequestHandler | None = None,
        served: asyncio.Future[int] | None = None,
    ) -> TetherClient:
        """A client on pipe (or socket) descriptors it now owns: reads the daemon's bytes
        from ``read_fd``, writes to ``write_fd`` (closing the client closes both)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        peer = JsonRpcPeer(reader, writer, framing=framing, on_request=on_request)
        peer.start()
        return cls(peer, served=served)

    async def __aenter__(self) -> TetherClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "session/update" and isinstance(params, dict):
            session_id = params.get("sessionId")
            update = params.get("update", {})
            turn = self._turns.running(session_id)  # type: ignore[arg-type]
            if turn is not None:
                turn._push(update)
                return
            session = self._sessions.get(session_id)  # type: ignore[arg-type]
            if session is not None:
                session.updates.append(update)
                return
            if isinstance(session_id, str) and len(self._unclaimed) < _MAX_UNCLAIMED:
                self._unclaimed.setdefault(session_id, []).append(update)
        self.notifications.append((method, params))

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.peer.request(method, params)

    async def initialize(self, **params: Any) -> JsonObject:
        payload = {
            "protocolVersion": 1,
            # options are picked by id, so the network option can be told from "Allow once"
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
                "_meta": {"tether": {"namedPermissionOptions": True}},
            },
            "clientInfo": {"name": "tether-client", "version": "0.1.0"},
        }
        payload.update(params)
        self.init_result = await self.peer.request("initialize", payload)
        return self.init_result

    async def new_session(self, cwd: str | Path) -> Session:
        result = await self.peer.request("session/new", unstructure(NewSessionParams(str(cwd))))
        session = Session(self, structure(result, NewSessionResult, method="session/new").session_id, result)
        session.updates.extend(self._unclaimed.pop(session.id, ()))
        self._sessions[session.id] = session
        return session

    async def load_session(self, session_id: str, cwd: str | Path) -> Session:
        """`session/load`: the replayed updates are in `session.replay` (and begin
        `session.updates`, which goes on with what a resumed turn sends)."""
        session = Session(self, session_id, {})
        self._sessions[session_id] = session
        _id, answer = self.peer.request_future(
            "session/load", unstructure(LoadSessionParams(session_id, str(cwd))), on_answer=session.end_replay,
        )
        session.info = await answer
        return session

    async def resume_session(self, session_id: str, cwd: str | Path) -> Session:
        session = Session(self, session_id, {})
        self._sessions[session_id] = session
        session.info = await self.peer.request("session/resume", unstructure(LoadSessionParams(session_id, str(cwd))))
        return session

    async def list_sessions(self, cwd: str | Path | None = None) -> list[JsonObject]:
        params = unstructure(ListSessionsParams(str(cwd) if cwd else None))
        sessions: list[JsonObject] = (await self.peer.request("session/list", params))["sessions"]
        return sessions

    async def close(self) -> int | None:
        """Close the connection (the daemon's stdin EOF) and wait for the daemon to end:
        its exit code."""
        await self.peer.close()
        if self.served is not None:
            try:
                return await asyncio.wait_for(asyncio.shield(self.served), 10)
            except asyncio.TimeoutError:
                self.served.cancel()
                return None
        if self.process is None:
            return None
        try:
            return await asyncio.wait_for(self.process.wait(), 10)
        except asyncio.TimeoutError:
            self.process.kill()
            return await self.process.wait()
