"""The field checks of a session snapshot (format ``SNAPSHOT_VERSION``), with the
errors that name the first wrong field.

Owns: the snapshot format's version and limits, ``SnapshotError``, and the checks of a
snapshot's session, turns, messages (their bodies decoded by the conversation's
Structs, ``tether_protocol.conversation``), reports and rules; checked records get their
defaults filled in. Must not: upgrade older formats (``snapshots`` does, through its
``MIGRATIONS``), touch a store, or change anything but the records it is handed.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any, TypeGuard, cast

from tether.store.errors import StoreError
from tether.store.records import MESSAGE_ROLES, MESSAGE_STATUSES, TURN_STATUSES
from tether_protocol._json import JsonObject, type_name

# (the conversation model and the checkpoint's reader are imported by the checks that use
# them: opening a store does not)

# version 1 since issue 20 may hold the optional checkpoints (``snapshot_checkpoints``):
# older snapshots restore as they did, and older Tethers ignore them
SNAPSHOT_VERSION = 1

RULE_DECISIONS = ("allow", "deny")

# A seq is a JSON-safe integer (JavaScript reads exact integers up to 2**53 - 1): far from
# SQLite's 64-bit limit, so the turns and messages that follow can still be numbered.
MAX_SEQ = 2**53 - 1
# Timestamps are seconds since the epoch: 1e11 is the year 5138 (and a float, unlike an
# integer over 64 bits, that SQLite stores).
MAX_TIME = 1e11


class SnapshotError(StoreError):
    """A snapshot that cannot be imported (or a fork point that does not exist); says why."""


def check_session(session: Any) -> None:
    if not isinstance(session, dict):
        raise SnapshotError(f'"session" must be an object, not {type_name(session)}')
    _field(session, "session", "id", str)
    if not session["id"]:
        raise SnapshotError("session.id must not be empty")
    _field(session, "session", "workspace", str)
    _field(session, "session", "title", str, nullable=True, default=None)
    _field(session, "session", "mode", str)
    _number(session, "session", "created_at")
    _number(session, "session", "updated_at")
    session.setdefault("metadata", {})
    _field(session, "session", "metadata", dict)


def check_turns(turns: list[Any]) -> set[str]:
    ids: set[str] = set()
    seqs: set[int] = set()
    for i, turn in enumerate(turns):
        check_turn(turn, i, ids, seqs)
    return ids


def check_turn(turn: Any, i: int, ids: set[str], seqs: set[int]) -> None:
    """Check ``turns[i]`` (defaults filled in); its id and seq join ``ids`` and ``seqs``."""
    if not _plain_turn(turn, ids, seqs):  # else a field is missing or wrong: say which
        where = f"turns[{i}]"
        if not isinstance(turn, dict):
            raise SnapshotError(f"{where} must be an object, not {type_name(turn)}")
        _field(turn, where, "id", str)
        _field(turn, where, "seq", int)
        _choice(turn, where, "status", TURN_STATUSES)
        _field(turn, where, "stop_reason", str, nullable=True, default=None)
        _number(turn, where, "started_at")
        _number(turn, where, "finished_at", nullable=True, default=None)
        _field(turn, where, "error", str, nullable=True, default=None)
        _field(turn, where, "pending", dict, nullable=True, default=None)
        if not 0 <= turn["seq"] <= MAX_SEQ:
            raise SnapshotError(f"{where}.seq must be between 0 and {MAX_SEQ}, not {turn['seq']}")
        if turn["pending"] is not None and (problem := _pending_problem(turn["pending"])):
            raise SnapshotError(f"{where}.pending{problem}")
        if turn["id"] in ids:
            raise SnapshotError(f"{where}.id {turn['id']!r} appears twice")
        if turn["seq"] in seqs:
            raise SnapshotError(f"{where}.seq {turn['seq']} appears twice")
    ids.add(turn["id"])
    seqs.add(turn["seq"])


def _plain_turn(turn: Any, ids: set[str], seqs: set[int]) -> bool:
    """A turn the full checks would pass as it is, but for a missing ``pending`` (set
    here). Most are: they take this one expression instead of a dozen calls each."""
    if not (
        type(turn) is dict
        and type(turn_id := turn.get("id")) is str
        and turn_id not in ids
        and type(seq := turn.get("seq")) is int
        and 0 <= seq <= MAX_SEQ
        and seq not in seqs
        and type(status := turn.get("status")) is str
        and status in TURN_STATUSES
        and (type(turn.get("stop_reason", 0)) is str or turn.get("stop_reason", 0) is None)
        and type(started := turn.get("started_at")) in _NUMBERS
        and 0 <= cast(float, started) < MAX_TIME
        and (
            type(finished := turn.get("finished_at", 0)) in _NUMBERS and 0 <= cast(float, finished) < MAX_TIME
            or turn.get("finished_at", 0) is None
        )
        and (type(turn.get("error", 0)) is str or turn.get("error", 0) is None)
    ):
        return False
    pending = turn.setdefault("pending", None)
    return pending is None or type(pending) is dict and _pending_problem(pending) is None


_NUMBERS = (int, float)  # exactly: a bool is not a timestamp


def check_messages(messages: list[Any], turn_ids: set[str]) -> None:
    last = -1
    for i, message in enumerate(messages):
        try:
            last = check_message(message, i, last, turn_ids)
        except SnapshotError:
            check_bodies(messages[:i], 0)  # an earlier message's body is the first mistake
            raise
    check_bodies(messages, 0)


def check_message(message: Any, i: int, last: int, turn_ids: Container[str]) -> int:
    """Check ``messages[i]``'s fields but its body (defaults filled in; ``check_bodies``
    checks bodies many at a time), which follows seq ``last``; its seq."""
    if not _plain_message(message, last, turn_ids):
        _check_message_fields(message, f"messages[{i}]", last, turn_ids)
    return int(message["seq"])


def check_bodies(messages: Sequence[JsonObject], first: int) -> None:
    """Check the bodies of ``messages[first:]`` (their fields checked): what replay, search
    and the model rely on, decoded by the conversation's Structs in one call. Names the
    first wrong one, read as its record's role says."""
    from tether_protocol.conversation import ConversationError, message_from_json, messages_from_json

    try:
        typed = messages_from_json([message["body"] for message in messages])
        if [message["role"] for message in messages] == [m.role for m in typed]:
            return
    except ConversationError:
        pass
    for i, message in enumerate(messages, first):
        try:
            message_from_json(message["body"], message["role"])
        except ConversationError as exc:
            raise SnapshotError(f"messages[{i}].body{exc}") from None


def _check_message_fields(message: Any, where: str, last: int, turn_ids: Container[str]) -> None:
    """Say which field of a message record is missing or wrong (filling in defaults)."""
    if not isinstance(message, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(message)}")
    _field(message, where, "seq", int)
    if not 0 <= message["seq"] <= MAX_SEQ:
        raise SnapshotError(f"{where}.seq must be between 0 and {MAX_SEQ}, not {message['seq']}")
    if message["seq"] <= last:
        raise SnapshotError(f"{where}.seq must be greater than {last} (messages in seq order)")
    _field(message, where, "turn_id", str, nullable=True, default=None)
    if message["turn_id"] is not None and message["turn_id"] not in turn_ids:
        raise SnapshotError(f"{where}.turn_id {message['turn_id']!r} is not one of the turns")
    _choice(message, where, "role", MESSAGE_ROLES)
    message.setdefault("status", "complete")
    _choice(message, where, "status", MESSAGE_STATUSES)
    _number(message, where, "created_at")
    _field(message, where, "body", dict)


def _plain_message(message: Any, last: int, turn_ids: Container[str]) -> bool:
    """A message record whose fields but the body the full checks would pass as they are."""
    return (
        type(message) is dict
        and type(seq := message.get("seq")) is int
        and last < seq <= MAX_SEQ
        and ((turn_id := message.get("turn_id", 0)) is None or (type(turn_id) is str and turn_id in turn_ids))
        and type(role := message.get("role")) is str
        and role in MESSAGE_ROLES
        and type(status := message.get("status")) is str
        and status in MESSAGE_STATUSES
        and type(created := message.get("created_at")) in _NUMBERS
        and 0 <= cast(float, created) < MAX_TIME
        and type(message.get("body")) is dict
    )


def _pending_problem(pending: JsonObject) -> str | None:
    """What is wrong with a waiting turn's ``{step, calls}``, as the rest of the path and
    why (``.calls[0].id is missing``); None if it can be resumed (the checkpoint's own
    reader, ``PendingStep.from_json``, decides)."""
    from tether_protocol._pending import CheckpointError, PendingStep

    try:
        PendingStep.from_json(pending)
    except CheckpointError as exc:
        return str(exc)
    return None


def check_reports(reports: list[Any], turn_ids: set[str]) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(reports):
        check_report(entry, i, turn_ids, seen)


def check_report(entry: Any, i: int, turn_ids: Container[str], seen: set[str]) -> None:
    """Check ``reports[i]``; its turn joins ``seen`` (one report a turn)."""
    where = f"reports[{i}]"
    if not isinstance(entry, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(entry)}")
    _field(entry, where, "turn_id", str)
    _field(entry, where, "report", dict)
    if entry["turn_id"] not in turn_ids:
        raise SnapshotError(f"{where}.turn_id {entry['turn_id']!r} is not one of the turns")
    if entry["turn_id"] in seen:
        raise SnapshotError(f"{where}: turn {entry['turn_id']!r} has two reports")
    seen.add(entry["turn_id"])


def check_rules(rules: list[Any]) -> None:
    for i, rule in enumerate(rules):
        where = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise SnapshotError(f"{where} must be an object, not {type_name(rule)}")
        _field(rule, where, "kind", str)
        _field(rule, where, "pattern", str)
        _choice(rule, where, "decision", frozenset(RULE_DECISIONS))


_MISSING = object()


def listed(snapshot: JsonObject, key: str, *, required: bool = True) -> list[Any]:
    if key not in snapshot and not required:
        snapshot[key] = []
    value = snapshot.get(key, _MISSING)
    if not isinstance(value, list):
        shown = "missing" if value is _MISSING else f"{type_name(value)}"
        raise SnapshotError(f'"{key}" must be a list, not {shown}')
    return value


def _present(obj: JsonObject, where: str, key: str, nullable: bool, default: Any) -> Any:
    """The field's value, its default filled in when it is absent; a missing field
    without a default is an error (None is returned as it is, for the caller)."""
    if key not in obj and default is not _MISSING:
        obj[key] = default
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise SnapshotError(f"{where}.{key} is missing")
    return value


def _field(
    obj: JsonObject,
    where: str,
    key: str,
    kind: type,
    *,
    nullable: bool = False,
    default: Any = _MISSING,
) -> None:
    value = _present(obj, where, key, nullable, default)
    if value is None and nullable:
        return
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", dict: "an object"}.get(kind, kind.__name__)
        raise SnapshotError(
            f"{where}.{key} must be {expected}{' or null' if nullable else ''}, not {type_name(value)}"
        )


def _number(
    obj: JsonObject, where: str, key: str, *, nullable: bool = False, default: Any = _MISSING
) -> None:
    value = _present(obj, where, key, nullable, default)
    if value is None and nullable:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SnapshotError(f"{where}.{key} must be a number (seconds since the epoch), not {type_name(value)}")
    if not 0 <= value < MAX_TIME:  # NaN and the infinities fail this too
        raise SnapshotError(
            f"{where}.{key} must be seconds since the epoch, from 0 to below {MAX_TIME:.0e}, not {value!r}"
        )


def _choice(obj: JsonObject, where: str, key: str, allowed: frozenset[str]) -> None:
    value = obj.get(key, _MISSING)
    if not isinstance(value, str) or value not in allowed:  # a list would not hash
        shown = "missing" if value is _MISSING else repr(value)
        raise SnapshotError(f"{where}.{key} must be one of {sorted(allowed)}, not {shown}")


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
