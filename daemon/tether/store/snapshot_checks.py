"""A session snapshot's records (format ``SNAPSHOT_VERSION``) checked: each by its Struct, then across them.

Owns: the format's version, ``SnapshotError`` (naming the first wrong field, in the record Structs' order:
``tether_protocol._snapshots``, the format's one description), the checks a type cannot say (unique ids
and seqs, seq order, named turns exist), defaults.
Must not: upgrade older formats (``snapshots`` does), touch a store, or change anything but the records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Container, Sequence
from typing import Annotated, Any, Literal, TypeGuard, TypeVar, get_args, get_origin

import msgspec

from tether.store.errors import StoreError
from tether_protocol import (
    Described,
    JsonObject,
    Snapshot,
    SnapshotMessage,
    SnapshotReport,
    SnapshotRule,
    SnapshotSession,
    SnapshotTurn,
    type_name,
)

# (the conversation model and the checkpoint's reader are imported by the checks that use
# them: opening a store does not)

# version 1 since issue 20 may hold the optional checkpoints (``snapshot_checkpoints``):
# older snapshots restore as they did, and older Tethers ignore them
SNAPSHOT_VERSION = 1


class SnapshotError(StoreError):
    """A snapshot that cannot be imported (or a fork point that does not exist); says why."""


_EVERY: dict[type[msgspec.Struct], frozenset[str]] = {
    cls: frozenset(cls.__struct_fields__)
    for cls in (SnapshotSession, SnapshotTurn, SnapshotMessage, SnapshotReport, SnapshotRule)
}
# The snapshot's lists, in the order a dump writes them (the `Snapshot` Struct's fields): the
# ones it must have (turns first: the records after them name them) and the ones left out as empty
SNAPSHOT_LISTS = tuple(f.name for f in msgspec.structs.fields(Snapshot) if get_origin(f.type) is list)
REQUIRED_LISTS = tuple(f.name for f in msgspec.structs.fields(Snapshot) if get_origin(f.type) is list and f.required)
# a message record's fields with a default that most records have (filled in when left out)
_TURN_ID, _STATUS = "turn_id", "status"

# a field's own check after its type's: (its value) -> the rest of the message, or None
After = dict[str, Callable[[Any], "str | None"]]
T = TypeVar("T", bound=msgspec.Struct)


def _checked(cls: type[T], record: Any, where: str) -> T:
    """``record`` as ``cls``, its defaults filled in; else SnapshotError naming the first
    wrong field in ``cls``'s order (msgspec stops at the first in the record's order)."""
    try:
        typed = msgspec.convert(record, cls)  # (positional: `type=` costs msgspec ~0.2 µs a call)
    except msgspec.ValidationError as exc:
        raise SnapshotError(_first_wrong(cls, record, where, {}) or f"{where}: {exc}") from None
    if not record.keys() >= _EVERY[cls]:  # a dump writes every field: most records have them
        _fill(record, typed)
    return typed


def _fill(record: JsonObject, typed: msgspec.Struct) -> None:
    """The fields ``record`` leaves out, as ``typed`` has them (their defaults)."""
    for name in typed.__struct_fields__:
        if name not in record:
            record[name] = getattr(typed, name)


def check_session(session: Any) -> None:
    if not isinstance(session, dict):
        raise SnapshotError(f'"session" must be an object, not {type_name(session)}')
    _checked(SnapshotSession, session, "session")


def check_turns(turns: list[Any]) -> set[str]:
    ids: set[str] = set()
    seqs: set[int] = set()
    for i, turn in enumerate(turns):
        check_turn(turn, i, ids, seqs)
    return ids


def check_turn(turn: Any, i: int, ids: set[str], seqs: set[int]) -> None:
    """Check ``turns[i]`` (defaults filled in); its id and seq join ``ids`` and ``seqs``."""
    where = f"turns[{i}]"
    if not isinstance(turn, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(turn)}")
    _checked(SnapshotTurn, turn, where)
    if turn["pending"] is not None and (problem := _pending_problem(turn["pending"])):
        raise SnapshotError(f"{where}.pending{problem}")
    if turn["id"] in ids:
        raise SnapshotError(f"{where}.id {turn['id']!r} appears twice")
    if turn["seq"] in seqs:
        raise SnapshotError(f"{where}.seq {turn['seq']} appears twice")
    ids.add(turn["id"])
    seqs.add(turn["seq"])


def check_messages(messages: list[Any], turn_ids: set[str]) -> None:
    try:  # all at once (one call into msgspec); a wrong one is found again one at a time
        typed = msgspec.convert(messages, list[SnapshotMessage])
    except msgspec.ValidationError:
        typed = []
    last = -1
    for message, record in zip(messages, typed, strict=False):
        if record.seq <= last or not (record.turn_id is None or record.turn_id in turn_ids):
            break
        if _TURN_ID not in message or _STATUS not in message:
            _fill(message, record)
        last = record.seq
    else:
        if len(typed) == len(messages):
            check_bodies(messages, 0)
            return
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
    typed: SnapshotMessage | None = None
    with contextlib.suppress(msgspec.ValidationError):
        typed = msgspec.convert(message, SnapshotMessage)
    if typed is None or typed.seq <= last or not (typed.turn_id is None or typed.turn_id in turn_ids):
        raise SnapshotError(_message_problem(message, f"messages[{i}]", last, turn_ids))
    if _TURN_ID not in message or _STATUS not in message:  # (cheaper than a set's test, per message)
        _fill(message, typed)
    return typed.seq


def _message_problem(message: Any, where: str, last: int, turn_ids: Container[str]) -> str:
    if not isinstance(message, dict):
        return f"{where} must be an object, not {type_name(message)}"
    after: After = {
        "seq": lambda seq: None if seq > last else f"seq must be greater than {last} (messages in seq order)",
        "turn_id": lambda turn: (
            None if turn is None or turn in turn_ids else f"turn_id {turn!r} is not one of the turns"
        ),
    }
    return _first_wrong(SnapshotMessage, message, where, after) or f"{where} is not a message record"


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


def _pending_problem(pending: JsonObject) -> str | None:
    """What is wrong with a waiting turn's ``{step, calls}``, as the rest of the path and
    why (``.calls[0].id is missing``); None if it can be resumed (the checkpoint's own
    reader, ``PendingApprovals.from_json``, decides)."""
    from tether_protocol import CheckpointError, PendingApprovals

    try:
        PendingApprovals.from_json(pending)
    except CheckpointError as exc:
        return str(exc)
    return None


def check_reports(reports: list[Any], turn_ids: set[str]) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(reports):
        check_report(entry, i, turn_ids, seen, report=False)
    # the reports as `RunReport`s in one call (a call each cost 1.5x); a wrong one is found again
    if _report_problem([entry["report"] for entry in reports], many=True) is not None:
        for i, entry in enumerate(reports):
            if problem := _report_problem(entry["report"]):
                raise SnapshotError(f"reports[{i}].report{problem}")


def check_report(entry: Any, i: int, turn_ids: Container[str], seen: set[str], *, report: bool = True) -> None:
    """Check ``reports[i]`` (``report``: its run report too); its turn joins ``seen`` (one report a turn)."""
    where = f"reports[{i}]"
    if not isinstance(entry, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(entry)}")
    _checked(SnapshotReport, entry, where)
    if report and (problem := _report_problem(entry["report"])):
        raise SnapshotError(f"{where}.report{problem}")
    if entry["turn_id"] not in turn_ids:
        raise SnapshotError(f"{where}.turn_id {entry['turn_id']!r} is not one of the turns")
    if entry["turn_id"] in seen:
        raise SnapshotError(f"{where}: turn {entry['turn_id']!r} has two reports")
    seen.add(entry["turn_id"])


def _report_problem(report: Any, *, many: bool = False) -> str | None:
    """What is wrong with a run report (``many``: a list of them) for its class, ``RunReport``
    (the only report a dump can write: the daemon stores its own, sent as they are by
    ``_tether/session/report``), as the rest of the path and why; keys it does not know are kept."""
    from tether_protocol import RunReport, collector_paused, explained

    cls: Any = list[RunReport] if many else RunReport
    try:
        with collector_paused():  # (thousands of objects made and dropped at once)
            msgspec.convert(report, cls)
    except msgspec.ValidationError as exc:
        steps, why = explained(exc, cls, report)
        return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps) + f": {why}"
    return None


def check_rules(rules: list[Any]) -> None:
    for i, rule in enumerate(rules):
        where = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise SnapshotError(f"{where} must be an object, not {type_name(rule)}")
        _checked(SnapshotRule, rule, where)


_MISSING = object()


def listed(snapshot: JsonObject, key: str) -> list[Any]:
    """``snapshot[key]``, one of ``SNAPSHOT_LISTS`` (an empty one put in when it may be left out)."""
    if key not in snapshot and key not in REQUIRED_LISTS:
        snapshot[key] = []
    value = snapshot.get(key, _MISSING)
    if not isinstance(value, list):
        shown = "missing" if value is _MISSING else f"{type_name(value)}"
        raise SnapshotError(f'"{key}" must be a list, not {shown}')
    return value


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# ---- what a refused record is told ----------------------------------------------------------


def _first_wrong(cls: type[msgspec.Struct], record: JsonObject, where: str, after: After) -> str | None:
    for field in msgspec.structs.fields(cls):
        value = record.get(field.name, _MISSING)
        if value is _MISSING and not field.required:
            continue
        problem = _wrong(field.type, value, f"{where}.{field.name}")
        if problem is None and field.name in after and (problem := after[field.name](value)) is not None:
            problem = f"{where}.{problem}"
        if problem is not None:
            return problem
    return None


def _wrong(tp: Any, value: Any, at: str) -> str | None:
    """What ``at`` is told when ``value`` is not ``tp`` (None: it is)."""
    if get_origin(tp) is Annotated and isinstance(get_args(tp)[-1], Described):
        tp = get_args(tp)[0]  # raw JSON: its own type here, its shape in the schema
    nullable = type(None) in get_args(tp)
    base = next((a for a in get_args(tp) if a is not type(None)), tp) if nullable else tp
    kind = get_args(base)[0] if get_origin(base) is Annotated else base
    if kind is Any:
        return f"{at} is missing" if value is _MISSING else None
    if get_origin(kind) is Literal:  # a missing choice is told the choices too
        shown = "missing" if value is _MISSING else repr(value)
        return (
            None
            if value in get_args(kind) and type(value) is str
            else f"{at} must be one of {sorted(get_args(kind))}, not {shown}"
        )
    if value is _MISSING:
        return f"{at} is missing"
    kind = get_origin(kind) or kind  # dict[str, Any]: an object
    if value is None and nullable:
        return None
    typed = isinstance(value, (int, float) if kind is float else kind) and not isinstance(value, bool)
    if kind is float and not typed:
        return f"{at} must be a number (seconds since the epoch), not {type_name(value)}"
    if not typed:
        expected = {str: "a string", int: "an integer", dict: "an object"}[kind]
        return f"{at} must be {expected}{' or null' if nullable else ''}, not {type_name(value)}"
    try:
        msgspec.convert(value, type=base)
    except msgspec.ValidationError:  # its bounds (a time, a seq, an id), as its type declares them
        bounds = next(a for a in get_args(base) if isinstance(a, msgspec.Meta))
        if kind is float:
            return f"{at} must be seconds since the epoch, from {bounds.ge} to below {bounds.lt:.0e}, not {value!r}"
        if kind is int:
            return f"{at} must be between {bounds.ge} and {bounds.le}, not {value}"
        return f"{at} must not be empty"
    return None
