"""A session's checkpoints in its snapshot: the files its turns and rewinds changed.

Owns: exporting them (the format: SPEC §3.40, docs/decisions/0015-store.md), checking them (each
blob against its digest: a snapshot cannot plant content under another file's digest), cutting
them at a fork's message, and importing them in the transaction of the session's import.
Must not: touch the workspace, or know the rest of the format (``snapshots``, ``snapshot_checks``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

import aiosqlite

from tether.store.history import HistoryStore
from tether.store.snapshot_checks import SnapshotError
from tether_protocol import JsonObject, type_name

_PATH_MAX = 4096  # Linux's limit: a longer path names no file

__all__ = [
    "check_checkpoint_data", "check_checkpoints", "check_rewound", "export_checkpoints", "import_checkpoints",
    "keep_until",
]


async def export_checkpoints(store: HistoryStore, session_id: str) -> tuple[JsonObject | None, dict[int, int]]:
    """The snapshot's ``checkpoints`` (None: the session has none) and seq -> rewind id of rewound messages."""
    rewound = {
        seq: rewind for seq, rewind in await store.query(
            "SELECT seq, rewound FROM messages WHERE session_id = ? AND rewound IS NOT NULL", (session_id,)
        )
    }
    changes = [
        {"seq": r[0], "rewind": r[1], "call_id": r[2], "path": r[3], "before": r[4], "after": r[5], "note": r[6]}
        for r in await store.query(
            "SELECT seq, rewind_id, call_id, path, before, after, note FROM file_changes"
            " WHERE session_id = ? ORDER BY id", (session_id,),
        )
    ]
    rewinds = [
        {"id": r[0], "at_seq": r[1], "to_seq": r[2], "restore": r[3], "hidden_before": json.loads(r[4]),
         "created_at": r[5]}
        for r in await store.query(
            "SELECT id, at_seq, to_seq, restore, hidden_before, created_at FROM rewinds"
            " WHERE session_id = ? ORDER BY id", (session_id,),
        )
    ]
    if not (changes or rewinds or rewound):
        return None, {}
    from tether.store.checkpoints import blobs

    digests = [d for c in changes for d in (c["before"], c["after"]) if d is not None]
    stored = await blobs(store, digests)
    encoded = {d: base64.b64encode(data).decode("ascii") for d, data in sorted(stored.items())}
    return {"blobs": encoded, "rewinds": rewinds, "changes": changes}, rewound


def _text(value: Any, where: str, nullable: bool = True) -> None:
    if not (isinstance(value, str) or (nullable and value is None)):
        raise SnapshotError(f"{where} must be a string{' or null' if nullable else ''}, not {type_name(value)}")


def _path(value: Any, where: str) -> None:
    """A change's path as Tether records it: relative to the workspace, plain (a rewind
    writes there; one that could not name a file would fail every rewind)."""
    _text(value, where, nullable=False)
    problem = (
        "is empty" if not value
        else "contains a NUL byte" if "\0" in value
        else "is absolute" if value.startswith("/")
        else "has a '..' part" if ".." in value.split("/")
        else f"is longer than {_PATH_MAX} bytes" if len(value.encode("utf-8", "surrogatepass")) > _PATH_MAX
        else None
    )
    if problem is not None:
        raise SnapshotError(
            f"{where} {problem}; a change's path is relative to the workspace, like 'src/app.py' ({value[:80]!r})"
        )


def _int(value: Any, where: str, nullable: bool = False) -> None:
    if not ((type(value) is int and value >= 0) or (nullable and value is None)):
        raise SnapshotError(f"{where} must be an integer at least 0{' or null' if nullable else ''}, not {value!r}")


def check_checkpoints(snapshot: JsonObject) -> None:
    """Check the optional ``checkpoints`` (and the messages' ``rewound``); SnapshotError names the field."""
    raw = snapshot.setdefault("checkpoints", None)
    for i, message in enumerate(snapshot["messages"]):
        if message.get("rewound") is not None:  # (the place named only when it is wrong)
            check_rewound(message["rewound"], f"messages[{i}].rewound")
    check_checkpoint_data(raw)


def check_rewound(value: Any, where: str) -> None:
    """A message's ``rewound``: the id of the rewind that took it out."""
    _int(value, where)


def check_checkpoint_data(raw: Any) -> None:
    """Check the snapshot's ``checkpoints`` value (None: it has none)."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise SnapshotError(f'"checkpoints" must be an object, not {type_name(raw)}')
    blobs, rewinds, changes = raw.get("blobs", {}), raw.get("rewinds", []), raw.get("changes", [])
    if not isinstance(blobs, dict) or not isinstance(rewinds, list) or not isinstance(changes, list):
        raise SnapshotError('"checkpoints" must hold "blobs" (an object), "rewinds" and "changes" (lists)')
    _check_blobs(blobs)
    ids = {_check_rewind(rewind, f"checkpoints.rewinds[{i}]") for i, rewind in enumerate(rewinds)}
    for i, change in enumerate(changes):
        _check_change(change, f"checkpoints.changes[{i}]", ids, blobs)


def _check_blobs(blobs: JsonObject) -> None:
    for digest, text in blobs.items():
        try:
            data = base64.b64decode(text, validate=True) if isinstance(text, str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            raise SnapshotError(f"checkpoints.blobs[{digest!r}] is not base64 content whose sha256 is its key")


def _check_rewind(rewind: Any, where: str) -> int:
    if not isinstance(rewind, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(rewind)}")
    for key in ("id", "at_seq", "to_seq"):
        _int(rewind.get(key), f"{where}.{key}")
    _text(rewind.get("restore"), f"{where}.restore", nullable=False)
    hidden = rewind.get("hidden_before")
    if not isinstance(hidden, list) or not all(
        isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) for r in hidden
    ):
        raise SnapshotError(f"{where}.hidden_before must be a list of [first, end) seq pairs")
    return int(rewind["id"])


def _check_change(change: Any, where: str, ids: set[int], blobs: JsonObject) -> None:
    if not isinstance(change, dict):
        raise SnapshotError(f"{where} must be an object, not {type_name(change)}")
    _int(change.get("seq"), f"{where}.seq", nullable=True)
    _int(change.get("rewind"), f"{where}.rewind", nullable=True)
    rewind = change.get("rewind")
    if (change.get("seq") is None) == (rewind is None) or (rewind is not None and rewind not in ids):
        raise SnapshotError(f"{where} must have a message seq or the id of one of the rewinds, not both")
    _path(change.get("path"), f"{where}.path")
    for key in ("call_id", "before", "after", "note"):
        _text(change.get(key), f"{where}.{key}")
    for key in ("before", "after"):
        if change.get(key) not in (None, "unrecorded") and change[key] not in blobs:
            raise SnapshotError(f"{where}.{key} names a blob that is not in checkpoints.blobs")


def keep_until(snapshot: JsonObject, upto_seq: int) -> None:
    """A fork's checkpoints: what happened up to message ``upto_seq`` (in place)."""
    raw = snapshot.get("checkpoints")
    if not raw:
        return
    rewinds = [r for r in raw["rewinds"] if r["at_seq"] <= upto_seq + 1]
    kept = {r["id"] for r in rewinds}
    raw["rewinds"] = rewinds
    raw["changes"] = [
        c for c in raw["changes"]
        if (c["seq"] is not None and c["seq"] <= upto_seq) or (c["rewind"] is not None and c["rewind"] in kept)
    ]


async def import_checkpoints(
    conn: aiosqlite.Connection, session_id: str, checkpoints: JsonObject | None, hidden: list[tuple[int, int]]
) -> None:
    """Insert a checked snapshot's checkpoints for ``session_id`` (inside the import's
    transaction); ``hidden``: (rewind id, seq) of each message a rewind took out."""
    raw = checkpoints or {}
    ids: dict[int, int] = {}
    for rewind in raw.get("rewinds", []):
        cursor = await conn.execute(
            "INSERT INTO rewinds (session_id, at_seq, to_seq, restore, hidden_before, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, rewind["at_seq"], rewind["to_seq"], rewind["restore"],
             json.dumps(rewind["hidden_before"]), rewind.get("created_at") or 0.0),
        )
        ids[rewind["id"]] = int(cursor.lastrowid or 0)
    blobs = raw.get("blobs", {})
    if blobs:
        await conn.executemany(
            "INSERT OR IGNORE INTO file_blobs (digest, size, data) VALUES (?, ?, ?)",
            [(d, len(data), data) for d, data in ((d, base64.b64decode(t)) for d, t in blobs.items())],
        )
    await conn.executemany(
        "INSERT INTO file_changes (session_id, seq, rewind_id, call_id, path, before, after, note)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_id, c["seq"], ids.get(c["rewind"]) if c["rewind"] is not None else None, c.get("call_id"),
          c["path"], c.get("before"), c.get("after"), c.get("note")) for c in raw.get("changes", [])],
    )
    if hidden:
        await conn.executemany(
            "UPDATE messages SET rewound = ? WHERE session_id = ? AND seq = ?",
            [(ids.get(rewind, 0), session_id, seq) for rewind, seq in hidden],
        )
