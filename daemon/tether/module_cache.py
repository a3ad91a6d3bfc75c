"""The compiled code of the modules a start imports, kept in one file across starts.

Owns: `install` (a first meta path finder for modules earlier starts imported from
source), `save` and `close`; standard library only (docs/decisions/0010-start-path.md).
Must not: serve a module whose source changed, serve another interpreter, prefix or
`sys.path`, trust a file another user could write, or fail a start (any doubt: import).
"""

from __future__ import annotations

import _frozen_importlib_external as _external
import binascii
import marshal
import os
import sys
from importlib.machinery import ModuleSpec
from types import CodeType

from .class_code_cache import is_private, write_private

TYPE_CHECKING = False  # not `typing`'s: nothing here may import what the cache serves
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from types import ModuleType

# name -> (source path, its mtime in ns, its size, is a package, .pyc path, offset, length);
# offsets count from the end of the index
_Entry = tuple[str, int, int, bool, str, int, int]
_MAGIC = b"TMC1" + _external.MAGIC_NUMBER  # the interpreter's bytecode magic: another release misses
_MAX_ENTRIES = 3000  # past this (modules of many versions), keep this start's only
_KEEP_FILES = 4  # files of other `sys.path`s kept beside this one (`python -m` from each folder)

_path: Path | None = None
_index: dict[str, _Entry] = {}
_file: _File | None = None
_base = 0  # where the code starts: after the magic, the index's length and the index
_served: set[str] = set()  # modules this start took from the file
_before: set[str] = set()  # imported before `install`: no other start serves them either


class _File:
    """An open cache file, closed once neither the module nor a loader yet to read holds it
    (a save replaces the file while an import may still be reading the old one)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        os.close(self.fd)


class _Loader(_external.SourceFileLoader):
    """A module's own source loader (its data, resources and source as usual) whose code
    comes from the cache file, read once: a later `get_code` reads the source as usual."""

    def __init__(self, fullname: str, path: str, file: _File, offset: int, length: int) -> None:
        super().__init__(fullname, path)
        self._file: _File | None = file
        self._where = offset, length

    def get_code(self, fullname: str) -> CodeType:
        file, self._file = self._file, None  # the last loader of a replaced file closes it
        offset, length = self._where
        try:
            code = marshal.loads(os.pread(file.fd, length, offset)) if file is not None else None
        except (OSError, EOFError, ValueError, TypeError):
            code = None
        if not isinstance(code, CodeType):
            usual = super().get_code(fullname)
            assert usual is not None  # a source file loader's module has code
            return usual
        _served.add(fullname)
        return code


class _Finder:
    @staticmethod
    def find_spec(fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        entry = _index.get(fullname)
        file = _file
        if entry is None or file is None:
            return None
        origin, mtime, size, package, cached, offset, length = entry
        folder = os.path.dirname(origin)
        if path is not None and (os.path.dirname(folder) if package else folder) not in path:
            return None  # the parent package is not the one the entry was found in
        try:
            info = os.stat(origin)
        except OSError:
            return None
        if info.st_mtime_ns != mtime or info.st_size != size:
            return None  # imported as usual, and `save` keeps the new version
        spec = ModuleSpec(
            fullname, _Loader(fullname, origin, file, _base + offset, length), origin=origin, is_package=package
        )
        spec.has_location = True
        spec.cached = cached
        if package:
            spec.submodule_search_locations = [folder]
        return spec


_FINDER = _Finder()


def install(directory: Path) -> None:
    """Answer imports from the file of this interpreter and `sys.path` in ``directory``
    (made if missing), if there is one this user alone can write. Only the first call
    does anything."""
    global _path
    if _path is not None:
        return
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return
    where = marshal.dumps((sys.implementation.cache_tag, sys.hexversion, sys.prefix, sys.exec_prefix, sys.path))
    _path = directory / f"modules-{sys.implementation.cache_tag}-{binascii.crc32(where):08x}.bin"
    _open(_path)
    _before.update(sys.modules)
    sys.meta_path.insert(0, _FINDER)


def _open(path: Path) -> None:
    global _file, _index, _base

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        head = os.pread(fd, len(_MAGIC) + 4, 0)
        size = int.from_bytes(head[len(_MAGIC) :], "little")
        if not (head[: len(_MAGIC)] == _MAGIC and is_private(os.fstat(fd)) and is_private(os.stat(path.parent))):
            raise ValueError(path)
        index = marshal.loads(os.pread(fd, size, len(head)))
        if not isinstance(index, dict):
            raise ValueError(path)
    except (OSError, EOFError, ValueError, TypeError):
        os.close(fd)
        return
    _file, _index, _base = _File(fd), index, len(head) + size


def _reopen(path: Path) -> None:
    """Read the file just written: its index from now on. The old file stays open while a
    loader found in it has yet to read (`_File`)."""
    global _file, _index
    _file, _index = None, {}
    _open(path)


def save() -> None:
    """Write the modules this start imported from source that the file lacks, with those
    of earlier starts still in it: one atomic replace; an error leaves the file as it was."""
    if _path is None:
        return
    fresh = dict(_from_source())
    if not fresh:
        return
    kept = {n: e for n, e in _index.items() if n not in fresh}
    if len(kept) + len(fresh) > _MAX_ENTRIES:
        kept = {n: e for n, e in kept.items() if n in _served}
    try:
        _write(_path, kept, fresh)
    except (OSError, ValueError):
        return  # a read-only or full disk: the next start imports as usual
    _reopen(_path)  # a later save of this start (after the warm-up) adds only what is new since
    _prune(_path)


def close() -> None:
    """Serve nothing more from the file and let it close (once no loader has yet to read it):
    a daemon's last save is its warm-up's, after which it rarely imports anything. Later
    saves do nothing (they would not know the file's entries)."""
    global _path, _file, _index
    _path, _file, _index = None, None, {}
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def _from_source() -> list[tuple[str, tuple[str, int, int, bool, str, bytes]]]:
    """The modules this start imported by the source file loader that the file lacks (or
    holds an older version of), with their .pyc's code when it matches the source."""
    found = []
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if name in _served or name in _before or type(getattr(spec, "loader", None)) is not _external.SourceFileLoader:
            continue
        origin, cached = spec.origin, spec.cached  # type: ignore[union-attr]
        if not (isinstance(origin, str) and isinstance(cached, str)):
            continue
        code = _pyc_code(origin, cached)
        entry = _index.get(name)
        if code is not None and (entry is None or entry[:3] != (origin, *code[:2])):
            found.append((name, (origin, *code[:2], spec.submodule_search_locations is not None, cached, code[2])))  # type: ignore[union-attr]
    return found


def _pyc_code(origin: str, cached: str) -> tuple[int, int, bytes] | None:
    """(mtime ns, size, marshalled code) of a source whose timestamp .pyc matches it."""
    try:
        info = os.stat(origin)
        with open(cached, "rb") as pyc:
            data = pyc.read()
    except OSError:
        return None
    flags = int.from_bytes(data[4:8], "little")
    if (
        data[:4] != _external.MAGIC_NUMBER
        or flags != 0
        or int.from_bytes(data[8:12], "little") != int(info.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(data[12:16], "little") != info.st_size & 0xFFFFFFFF
    ):
        return None
    return info.st_mtime_ns, info.st_size, data[16:]


def _write(path: Path, kept: dict[str, _Entry], fresh: dict[str, tuple[str, int, int, bool, str, bytes]]) -> None:
    blobs: list[bytes] = []
    index: dict[str, _Entry] = {}
    offset = 0
    for name, (origin, mtime, size, package, cached, where_offset, length) in kept.items():
        blob = os.pread(_file.fd, length, _base + where_offset) if _file is not None else b""
        if len(blob) != length:
            continue
        index[name] = (origin, mtime, size, package, cached, offset, length)
        blobs.append(blob)
        offset += length
    for name, (origin, mtime, size, package, cached, blob) in fresh.items():
        index[name] = (origin, mtime, size, package, cached, offset, len(blob))
        blobs.append(blob)
        offset += len(blob)
    head = marshal.dumps(index)
    write_private(path, [_MAGIC + len(head).to_bytes(4, "little") + head, *blobs])


def _prune(path: Path) -> None:
    """Keep the newest few files of other `sys.path`s (each folder `python -m` runs in
    has its own), drop the rest."""
    try:
        others = [p for p in path.parent.glob(f"modules-{sys.implementation.cache_tag}-*.bin") if p != path]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[_KEEP_FILES:]:
            old.unlink()
    except OSError:
        pass
