"""The live `session/update` emitter of one session: the server's `TurnSink`.

Owns: merging text and thought deltas while the client is behind, sending every other event
in order after them, to every connection watching the session, and `frame` (docs/decisions/0018).
Must not: decide anything about the turn, know an update's shape (the renderer does), or encode per delta.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol

import tether_protocol as up
from tether_protocol import ENCODER

from ..agent.sink import PromptInserted, StepStarted, TurnEnded, TurnEvent, TurnStateChanged, failed
from ..transport.connection import Connection, encode_json
from . import acp_v1

if TYPE_CHECKING:
    from msgspec import Struct

    # v1's updates (`acp_v1.Update`) or v2's (the generated types, `acp_v2.Update`)
    Update = acp_v1.Update | Struct

_PREFIX = b'{"jsonrpc":"2.0","method":"session/update","params":'
_HEAD = _PREFIX + b'{"sessionId":'
_ENCODE = ENCODER.encode
_HEADS: dict[str, bytes] = {}  # session id -> the frame's bytes up to the update
# v2's update types, filled when `acp_v2` loads (v1's paths never load the v2 model)
V2_TYPES: set[type] = set()


def _head(session_id: str) -> bytes:
    if len(_HEADS) >= 4096:  # a long-lived shared daemon's closed sessions
        _HEADS.clear()
    head = _HEADS[session_id] = _HEAD + encode_json(session_id) + b',"update":'
    return head


class Renderer(Protocol):
    """One wire version's shapes (ACP v1: `acp_v1.V1`). A v2 renderer keeps the ids its
    upserts need (a message id per `StepStarted`, the call ids the events carry)."""

    def chunk(self, kind: str, text: str) -> Update:
        """Merged text ("text") or thought ("thought") deltas."""
        ...

    # the events it renders to nothing whatever they hold: not handed to `event` at all
    silent: ClassVar[frozenset[type]]

    def event(self, event: TurnEvent) -> Update | None:
        """The update for `event`, or None when the wire shows nothing for it."""
        ...

    def notice(self, text: str) -> Update:
        """Something told to the user outside a turn's events."""
        ...

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> Update:
        """`available_commands_update` for (name, description, input hint or None)."""
        ...

    def shaped(self, update: acp_v1.Update) -> Update | None:
        """An update built in v1's shape outside the renderer, in this version's (None: this
        version does not show it)."""
        ...


class Viewers(Protocol):
    """Who sees a session (a shared daemon's `Audiences`; a sub-agent's parent's v2 viewers)."""

    def get(self, session_id: str, default: Sequence[Connection] = (), /) -> Sequence[Connection]: ...


def _version(conn: Connection) -> int:
    return getattr(conn, "protocol_version", 1)  # a test double may not say


def renderer_for(session_id: str, conn: Connection) -> Renderer:
    """The renderer of the version ``conn`` speaks (v2's keeps state: one per sink)."""
    return _renderer(session_id, _version(conn))


def _renderer(session_id: str, version: int) -> Renderer:
    if version == 2:
        from .acp_v2 import AcpV2  # v1 connections never import it

        return AcpV2(session_id)
    return acp_v1.V1


# how an update is rendered again for a connection of another version
_Again = Callable[[Renderer], "Update | None"]


def frame(session_id: str, update: Update) -> bytes:
    """One `session/update` notification. v1's: byte for byte as `encode_json` writes it; a
    chunk of plain text (the hot path: one per flush) is written by msgspec's encoder in one
    pass: it holds no float, which msgspec spells `1e16` where orjson writes `1e+16`. v2's
    updates (the generated types) all so, as the v2 replay writes them."""
    kind = type(update)
    if (
        (kind is up.AgentMessageChunk or kind is up.AgentThoughtChunk)
        and update.meta is None  # type: ignore[union-attr]
        and update.content.meta is None  # type: ignore[union-attr]
    ) or (kind is not dict and kind in V2_TYPES):  # a dict: no set lookup
        try:
            return (_HEADS.get(session_id) or _head(session_id)) + _ENCODE(update) + b"}}"
        except UnicodeEncodeError:  # a lone surrogate: `encode_json` writes U+FFFD
            pass
    return _PREFIX + encode_json({"sessionId": session_id, "update": update}) + b"}"


class SessionUpdates:
    """The `TurnSink` of one session, writing to one connection."""

    __slots__ = (
        "session_id",
        "_conn",
        "_render",
        "_kind",
        "_parts",
        "_registered",
        "sent",
        "_audience",
        "_version",
        "_others",
        "_marks",
    )

    def __init__(
        self,
        session_id: str,
        conn: Connection,
        render: Renderer | None = None,
        *,
        audience: Viewers | None = None,
    ) -> None:
        self.session_id = session_id
        self._conn = conn
        self._render = render or renderer_for(session_id, conn)
        self._kind = ""  # which chunk kind `_parts` holds: "text" or "thought"
        self._parts: list[str] = []
        self._registered = False
        self.sent = 0
        # the shared daemon's session id -> connections map (None: one client, stdio); a
        # sub-agent's session: the v2 connections that see its parent (services/child_sessions.py)
        self._audience: Viewers | None = audience if audience is not None else getattr(conn, "audience", None)
        self._version = _version(conn)
        self._others: dict[int, Renderer] = {}  # the renderers of the audience's other versions
        # the turn's last prompt and step: what a renderer made mid-turn needs for its ids
        self._marks: dict[type, TurnEvent] = {}

    # ---- mergeable deltas ---------------------------------------------------------

    def text(self, delta: str) -> None:
        if self._kind != "text":
            self.drain()
            self._kind = "text"
        self._parts.append(delta)
        if not self._registered:
            self._registered = True
            self._conn.add_coalescer(self)

    def thought(self, delta: str) -> None:
        if self._kind != "thought":
            self.drain()
            self._kind = "thought"
        self._parts.append(delta)
        if not self._registered:
            self._registered = True
            self._conn.add_coalescer(self)

    def drain(self) -> None:
        """Send the merged deltas now (called by the connection, or before any other update)."""
        self._registered = False
        if not self._parts:
            return
        text = self._parts[0] if len(self._parts) == 1 else "".join(self._parts)
        self._parts = []
        kind = self._kind
        self._send(self._render.chunk(kind, text), lambda render: render.chunk(kind, text))

    def flush(self) -> None:
        self.drain()
        self._conn.discard_coalescer(self)

    # ---- everything else is sent in order, after any pending deltas ----------------

    def _send(self, update: Update | None, again: _Again) -> None:
        body = b""
        if update is not None:
            self.sent += 1
            body = frame(self.session_id, update)
            self._conn.send_body(body)
        if not self._audience:
            return
        bodies = {self._version: body}
        for conn in self._audience.get(self.session_id, ()):
            if conn is self._conn:
                continue
            version = _version(conn)
            if version not in bodies:
                other = again(self._other(version))
                bodies[version] = frame(self.session_id, other) if other is not None else b""
            if bodies[version]:
                conn.send_body(bodies[version])

    def _other(self, version: int) -> Renderer:
        """The renderer of another version in the audience, told the turn's ids so far."""
        render = self._others.get(version)
        if render is None:
            render = self._others[version] = _renderer(self.session_id, version)
            for mark in self._marks.values():
                render.event(mark)
        return render

    def joined(self, past: Iterable[TurnEvent]) -> None:
        """A sink made mid-turn (a window joined): its renderer learns the turn's ids from
        the `past` prompt and step; nothing is sent."""
        for event in past:
            if type(event) in (PromptInserted, StepStarted):
                self._marks[type(event)] = event
                self._render.event(event)

    def emit(self, event: TurnEvent) -> None:
        if type(event) in (PromptInserted, StepStarted):
            self._marks[type(event)] = event
        update = None if type(event) in self._render.silent else self._render.event(event)
        if update is not None or self._audience:
            self.drain()
            ended = self._as_turn_end(event)
            self._send(update, lambda render: render.event(event) or (render.event(ended) if ended else None))

    def _as_turn_end(self, event: TurnEvent) -> TurnEnded | None:
        """A v2 turn's end (`state_update` idle) as v1's `TurnEnded`, for its v1 viewers."""
        prompt = self._marks.get(PromptInserted)
        if type(event) is TurnStateChanged and event.state == "idle" and isinstance(prompt, PromptInserted):
            return TurnEnded(prompt.turn_id, event.stop_reason or "end_turn")
        return None

    def update(self, update: acp_v1.Update) -> None:
        """Any other update (built in v1's shape), sent in order, in each viewer's version."""
        self.drain()
        self._send(self._render.shaped(update), lambda render: render.shaped(update))

    def notice(self, text: str) -> None:
        """Tell the user something outside a turn's events (a marked message chunk)."""
        self.drain()
        self._send(self._render.notice(text), lambda render: render.notice(text))

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> None:
        listed = list(commands)
        self.drain()
        self._send(self._render.available_commands(listed), lambda render: render.available_commands(listed))

    def tool_call_update(self, call_id: str, *, status: str, content_text: str) -> None:
        """A call of a turn that is not running here ends (a dropped waiting turn)."""
        assert status == "failed", "only failures are reported outside a turn"
        self.emit(failed(call_id, content_text))
