"""`DiskFileIO`: the `FileIO` that reads and writes the workspace on disk.

Owns: strict UTF-8 reads (a BOM kept as U+FEFF), atomic writes that keep permission bits (temp file, fsync,
`os.replace`), deletes and moves, each blocking call in a worker thread.
Must not: follow anything outside the sandbox, overlay editor buffers, or decide what may be changed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether.tools.base import ToolError
from tether.tools.textfile import has_nul

if TYPE_CHECKING:
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["DiskFileIO", "MissingFileError", "editable_text"]

# Kernel applies the umask to this, as for any new file an editor would create.
_NEW_FILE_MODE = 0o644
_TEMP_SUFFIX = ".tether-tmp"


class MissingFileError(ToolError):
    """The file does not exist (tools treat this as "create", not as a failure)."""


def editable_text(data: bytes) -> str | None:
    """The text a file's bytes stand for when Tether may edit it, or None (binary / not UTF-8).

    read_file hashes exactly this for the read ledger, so both sides must agree.
    """
    if has_nul(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class DiskFileIO:
    """Workspace files on disk; paths are absolute and already sandbox-resolved."""

    def __init__(self, sandbox: WorkspaceSandbox) -> None:
        self.sandbox = sandbox

    async def read_text(self, path: Path) -> str:
        return await anyio.to_thread.run_sync(self._read_text, path)

    async def write_text(self, path: Path, text: str) -> None:
        await anyio.to_thread.run_sync(self._write_text, path, text)

    async def delete(self, path: Path) -> None:
        await anyio.to_thread.run_sync(self._delete, path)

    async def make_parents(self, path: Path) -> None:
        """Create the missing parent directories of `path` (in the sandbox, not under
        `.git`), for a new file an editor will write."""
        await anyio.to_thread.run_sync(self._make_parents, path)

    async def move(self, source: Path, target: Path) -> None:
        await anyio.to_thread.run_sync(self._move, source, target)

    def _rel(self, path: Path) -> str:
        # Lexical check (SandboxError if outside); callers pass resolved paths, and a final
        # symlink is acted on itself (unlink/rename), never followed.
        rel = self.sandbox.relative(path)
        if rel != ".":
            parent = os.path.realpath(os.path.dirname(os.path.normpath(path)))
            self.sandbox.relative(Path(parent))  # a parent symlinked out of the workspace
        return rel

    def _read_text(self, path: Path) -> str:
        rel = self._rel(path)
        try:
            info = os.stat(path)
            if stat.S_ISDIR(info.st_mode):
                raise ToolError(f"'{rel}' is a directory, not a file")
            if not stat.S_ISREG(info.st_mode):
                # opening a FIFO or device could block forever
                raise ToolError(f"'{rel}' is not a regular file (device, socket or pipe)")
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise MissingFileError(f"no such file '{rel}'") from None
        except OSError as exc:
            raise ToolError(f"cannot read '{rel}': {exc.strerror}") from None
        text = editable_text(data)
        if text is None:
            raise ToolError(f"'{rel}' is a binary or non-UTF-8 file ({len(data)} bytes); Tether only edits UTF-8 text")
        return text

    def _make_parents(self, path: Path) -> None:
        rel = self._rel(path)
        self.sandbox.check_not_under_git(path)
        try:
            _make_dirs(os.path.dirname(os.path.normpath(path)))
        except OSError as exc:
            raise ToolError(f"cannot create the directory of '{rel}': {exc.strerror or exc}") from None

    def _write_text(self, path: Path, text: str) -> None:
        rel = self._rel(path)
        self.sandbox.check_not_under_git(path)
        directory, name = os.path.split(os.path.normpath(path))
        try:
            _make_dirs(directory)
            try:
                mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
            except FileNotFoundError:
                mode = None
            data = text.encode("utf-8", "surrogatepass")
            temp = self._write_temp(directory, name, data, mode)
            try:
                os.replace(temp, path)
            except BaseException:
                _unlink_quietly(temp)
                raise
            _fsync_dir(directory)  # the rename itself survives a crash
        except OSError as exc:
            raise ToolError(f"cannot write '{rel}': {exc.strerror or exc}") from None

    def _write_temp(self, directory: str, name: str, data: bytes, mode: int | None) -> str:
        # Same directory as the target: os.replace is only atomic within one filesystem.
        while True:
            temp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), _NEW_FILE_MODE)
                break
            except FileExistsError:
                continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)  # keep an existing file's mode (e.g. 0o755)
                os.fsync(handle.fileno())
        except BaseException:
            _unlink_quietly(temp)
            raise
        return temp

    def _delete(self, path: Path) -> None:
        rel = self._rel(path)
        self.sandbox.check_not_under_git(path)
        if rel == ".":
            raise ToolError("refusing to delete the workspace root")
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            raise MissingFileError(f"no such file or directory '{rel}'") from None
        except OSError as exc:
            raise ToolError(f"cannot delete '{rel}': {exc.strerror or exc}") from None
        except RecursionError:  # shutil.rmtree recurses once per level (Python < 3.12)
            raise ToolError(f"cannot delete '{rel}': it is nested too deeply; part of it may be gone already") from None

    def _move(self, source: Path, target: Path) -> None:
        rel, target_rel = self._rel(source), self._rel(target)
        self.sandbox.check_not_under_git(source)
        self.sandbox.check_not_under_git(target)
        try:
            _make_dirs(os.path.dirname(os.path.normpath(target)))
            try:
                os.replace(source, target)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                shutil.move(source, target)  # another filesystem mounted inside the workspace
        except FileNotFoundError:
            raise MissingFileError(f"no such file or directory '{rel}'") from None
        except OSError as exc:
            raise ToolError(f"cannot move '{rel}' to '{target_rel}': {exc.strerror or exc}") from None


def _make_dirs(directory: str) -> None:
    """`os.makedirs(directory, exist_ok=True)` without its recursion, one frame per level:
    a path of a thousand short names is valid, and must not end in RecursionError."""
    missing: list[str] = []
    current = directory
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every platform lets a directory be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
