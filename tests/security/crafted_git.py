"""Hostile git object stores, written byte by byte: what a cloned or unpacked repository can
ship in its `.git` that git itself would never write (a delta onto itself), or would write
for a large file's history (long delta chains of large blobs). Used by the attacks on the
change scan's Python git reader (tools/git_objects.py)."""

from __future__ import annotations

import hashlib
import struct
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_OFS_DELTA, _BLOB = 6, 3


def _header(kind: int, size: int) -> bytes:
    out = bytearray([(kind << 4) | (size & 15)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def _back(distance: int) -> bytes:
    """git's encoding of an offset delta's distance back to its base."""
    out = [distance & 0x7F]
    while distance := distance >> 7:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
    return bytes(out)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def copy_all(size: int) -> bytes:
    """A delta that copies a whole base of `size` bytes, in 8 MB copy ops."""
    ops, chunk = bytearray(_varint(size) + _varint(size)), 0x800000
    for offset in range(0, size, chunk):
        length, op, args = min(chunk, size - offset), 0x80, bytearray()
        for bit in range(4):
            if (offset >> (8 * bit)) & 0xFF:
                op |= 1 << bit
                args.append((offset >> (8 * bit)) & 0xFF)
        for bit in range(3):
            if (length >> (8 * bit)) & 0xFF:
                op |= 0x10 << bit
                args.append((length >> (8 * bit)) & 0xFF)
        ops += bytes([op]) + args
    return bytes(ops)


def write_pack(git_dir: Path, name: bytes, entries: list[tuple[int, int | None, bytes]]) -> None:
    """A pack of `entries` (kind, the entry an offset delta's base is, data) whose index
    names only the last entry, as `name` (the blob id the git index lists)."""
    body, offsets = bytearray(b"PACK" + struct.pack(">LL", 2, len(entries))), []
    for kind, base, data in entries:
        offsets.append(len(body))
        body += _header(kind, len(data))
        if kind == _OFS_DELTA and base is not None:
            body += _back(offsets[-1] - offsets[base])
        body += zlib.compress(data, 9)
    body += hashlib.sha1(body).digest()
    fanout = [0 if byte < name[0] else 1 for byte in range(256)]
    index = b"\377tOc" + struct.pack(">L", 2) + struct.pack(">256L", *fanout) + name
    index += struct.pack(">L", zlib.crc32(b"")) + struct.pack(">L", offsets[-1]) + body[-20:]
    index += hashlib.sha1(index).digest()
    folder = git_dir / "objects" / "pack"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack-crafted.pack").write_bytes(body)
    (folder / "pack-crafted.idx").write_bytes(index)


def long_chain(size: int, links: int) -> list[tuple[int, int | None, bytes]]:
    """A blob of `size` zero bytes and `links` offset deltas each copying the one before:
    what a large file's history looks like in a pack, each version `size` bytes."""
    delta = copy_all(size)
    return [(_BLOB, None, bytes(size))] + [(_OFS_DELTA, number, delta) for number in range(links)]


def onto_itself() -> list[tuple[int, int | None, bytes]]:
    """An offset delta whose base is itself (distance 0): no end to follow."""
    return [(_OFS_DELTA, 0, _varint(5) + _varint(5) + b"\x05hello")]  # entry 0's base: entry 0
