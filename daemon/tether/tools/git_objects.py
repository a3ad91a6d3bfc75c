"""Git blobs read in Python, so the change scan starts no program over a workspace's `.git`.

Owns: `find_git_dir` (`.git`, a `gitdir:` file, a worktree's `commondir`) and reading blobs from loose
objects and packs; a blob is returned only when its SHA-1 is its id, else "not known".
Must not: run any program (a planted config has nothing to run), fetch, or follow alternates.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from tether.tools.regular_files import open_regular

__all__ = ["GitDir", "find_git_dir", "git_dir_at", "read_blobs"]

_MAX_DELTA_DEPTH = 64  # deeper than git's own default pack chains (50)
_MAX_OBJECT = 64 * 1024 * 1024  # a crafted object must not inflate into the daemon's memory
_IDX_MAGIC = b"\377tOc"


@dataclass(frozen=True, slots=True)
class GitDir:
    top: str  # the working tree holding the `.git` entry
    git_dir: str  # where the index is (a worktree's own directory)
    common_dir: str  # where the objects are


def find_git_dir(workspace: str) -> GitDir | None:
    """The git directory of the repository holding `workspace`, found as git finds it."""
    top = workspace
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    return git_dir_at(top)


def git_dir_at(top: str) -> GitDir | None:
    """What `top/.git` names: itself (or a link's target), or a `gitdir:` file's directory;
    and its `commondir` (a worktree's shared one)."""
    git = os.path.join(top, ".git")
    try:
        if not stat.S_ISDIR(os.stat(git).st_mode):
            with open_regular(git) as handle:
                pointer = handle.read(4096).decode("utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git = os.path.join(top, pointer[len("gitdir:") :].strip())
        common = git
        if os.path.isfile(os.path.join(git, "commondir")):
            with open_regular(os.path.join(git, "commondir")) as handle:
                common = os.path.join(git, handle.read(4096).decode("utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return GitDir(top, os.path.normpath(git), os.path.normpath(common))


def read_blobs(common_dir: str, blob_ids: list[str]) -> dict[str, bytes]:
    """The contents of the blobs found (and verified) among `blob_ids`."""
    store = _ObjectStore(os.path.join(common_dir, "objects"))
    found: dict[str, bytes] = {}
    try:
        for blob in blob_ids:
            try:
                kind, data = store.read(blob)
            except (OSError, ValueError, KeyError, IndexError, struct.error, zlib.error):
                continue
            if kind == 3 and hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob:
                found[blob] = data
    finally:
        for pack in store.packs():
            pack.close()
    return found


_KINDS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


class _ObjectStore:
    def __init__(self, objects: str) -> None:
        self.objects = objects
        self._packs: list[_Pack] | None = None
        self.bases: dict[tuple[str, int], tuple[int, bytes]] = {}  # delta bases read in this scan
        self.cached_bytes = 0  # of `bases`: a long chain of large versions must not all stay in memory

    def read(self, object_id: str, depth: int = 0) -> tuple[int, bytes]:
        if len(object_id) != 40 or depth > _MAX_DELTA_DEPTH:
            raise KeyError(object_id)
        loose = os.path.join(self.objects, object_id[:2], object_id[2:])
        if os.path.isfile(loose):
            with open_regular(loose) as handle:  # read no more than a largest object can take
                inflater = zlib.decompressobj()
                raw = inflater.decompress(handle.read(_MAX_OBJECT + _MAX_OBJECT // 64), _MAX_OBJECT + 64)
            if not inflater.eof:
                raise ValueError("a loose object too large to read")
            header, _, data = raw.partition(b"\0")
            kind, size = header.split(b" ")
            if int(size) != len(data):
                raise ValueError("a loose object of the wrong size")
            return _KINDS[kind], data
        for pack in self.packs():
            offset = pack.offset_of(bytes.fromhex(object_id))
            if offset is not None:
                return pack.read(offset, self, depth)
        raise KeyError(object_id)

    def packs(self) -> list[_Pack]:
        if self._packs is None:  # read once per scan: a pack made since is not seen
            folder = os.path.join(self.objects, "pack")
            try:
                names = sorted(name for name in os.listdir(folder) if name.endswith(".idx"))
            except OSError:
                names = []
            self._packs = [_Pack(os.path.join(folder, name[:-4])) for name in names]
        return self._packs


class _Pack:
    """One `.pack` with its `.idx` (version 2), the index mapped on first use (a large
    repository's index is hundreds of MB: a lookup touches a few pages of it)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._index: mmap.mmap | None = None

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def offset_of(self, object_id: bytes) -> int | None:
        if self._index is None:
            with open_regular(self.base + ".idx") as handle:
                self._index = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            if self._index[:8] != _IDX_MAGIC + struct.pack(">L", 2):
                raise ValueError("not a version 2 pack index")
        index = self._index
        fanout = struct.unpack_from(">256L", index, 8)
        count = fanout[255]
        low, high = fanout[object_id[0] - 1] if object_id[0] else 0, fanout[object_id[0]]
        names = 8 + 1024
        while low < high:
            middle = (low + high) // 2
            name = index[names + middle * 20 : names + middle * 20 + 20]
            if name == object_id:
                offsets = names + count * 24
                offset: int = struct.unpack_from(">L", index, offsets + middle * 4)[0]
                if offset & 0x80000000:
                    large = offsets + count * 4 + (offset & 0x7FFFFFFF) * 8
                    offset = struct.unpack_from(">Q", index, large)[0]
                return offset
            if name < object_id:
                low = middle + 1
            else:
                high = middle
        return None

    def read(self, offset: int, store: _ObjectStore, depth: int) -> tuple[int, bytes]:
        if depth > _MAX_DELTA_DEPTH:  # an offset delta onto itself, or a chain without end
            raise ValueError("a delta chain too deep")
        cached = store.bases.get((self.base, offset))
        if cached is None:
            cached = self._read(offset, store, depth)
            if depth and store.cached_bytes + len(cached[1]) <= _MAX_OBJECT:
                store.bases[(self.base, offset)] = cached
                store.cached_bytes += len(cached[1])
        return cached

    def _read(self, offset: int, store: _ObjectStore, depth: int) -> tuple[int, bytes]:
        with open_regular(self.base + ".pack") as handle:
            handle.seek(offset)
            head = handle.read(32)
            kind, size, at = (head[0] >> 4) & 7, head[0] & 15, 1
            shift = 4
            while head[at - 1] & 0x80:
                size |= (head[at] & 0x7F) << shift
                shift, at = shift + 7, at + 1
            base: tuple[int, bytes]
            if kind == 6:  # offset delta: the base is earlier in this pack
                back = head[at] & 0x7F
                while head[at] & 0x80:
                    at += 1
                    back = ((back + 1) << 7) | (head[at] & 0x7F)
                at += 1
                base = self.read(offset - back, store, depth + 1)
            elif kind == 7:  # reference delta: the base by id
                base = store.read(head[at : at + 20].hex(), depth + 1)
                at += 20
            handle.seek(offset + at)
            data = _inflate(handle, size)
        if kind in (6, 7):
            return base[0], _apply_delta(base[1], data)
        return kind, data


def _inflate(handle: BinaryIO, size: int) -> bytes:
    if size > _MAX_OBJECT:
        raise ValueError("a pack entry too large to read")
    inflater, out = zlib.decompressobj(), bytearray()
    while not inflater.eof:
        chunk = inflater.unconsumed_tail or handle.read(max(4096, size // 2))
        if not chunk:
            raise ValueError("a pack entry ends early")
        out += inflater.decompress(chunk, size + 1 - len(out))
        if len(out) > size:
            break
    if len(out) != size:
        raise ValueError("a pack entry of the wrong size")
    return bytes(out)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if not byte & 0x80:
            return value, at


def _apply_delta(base: bytes, delta: bytes) -> bytes:
    source_size, at = _varint(delta, 0)
    target_size, at = _varint(delta, at)
    if source_size != len(base) or target_size > _MAX_OBJECT:
        raise ValueError("a delta for another base, or too large")
    out = bytearray()
    while at < len(delta):
        op = delta[at]
        at += 1
        if op & 0x80:  # copy from the base: offset and size bytes as the op's bits say
            offset = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[at] << (8 * bit)
                    at += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    size |= delta[at] << (8 * bit)
                    at += 1
            out += base[offset : offset + (size or 0x10000)]
        elif op:  # insert the next `op` bytes
            out += delta[at : at + op]
            at += op
        else:
            raise ValueError("a delta op of 0")
        if len(out) > target_size:
            break
    if len(out) != target_size:
        raise ValueError("a delta of the wrong size")
    return bytes(out)
