"""The read ledger: which version of each file the model has seen, so edits never clobber.

Owns: `ContentLedger` (one per session, on the event loop: the sha256 of each file's full text the model read
or wrote, by absolute path; stored relative to the workspace) and the never-read and stale refusals.
Must not: read or write files, or decide which tools need a prior read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tether.tools.errors import ToolError

if TYPE_CHECKING:
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["ContentLedger", "text_digest"]


def text_digest(text: str) -> str:
    """sha256 of the UTF-8 text (surrogate escapes kept, so any str can be hashed)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ContentLedger:
    """File path -> digest of the text the model last saw of it."""

    def __init__(self, sandbox: WorkspaceSandbox | None = None) -> None:
        # Only used to name files workspace-relatively in messages.
        self._sandbox = sandbox
        self._digests: dict[str, str] = {}

    def record(self, path: Path, text: str) -> None:
        """The model has now seen `text` as the whole content of `path`."""
        self.record_digest(path, text_digest(text))

    def record_digest(self, path: Path, digest: str) -> None:
        """As `record`, given `text_digest` of the text (hashed as it streamed by)."""
        self._digests[self._key(path)] = digest

    def has_read(self, path: Path) -> bool:
        return self._key(path) in self._digests

    def forget(self, path: Path) -> None:
        """Drop what is known about `path` and, for a directory, everything under it.

        Used when a file or directory is deleted or moved away; unknown paths are fine.
        """
        key = self._key(path)
        self._digests.pop(key, None)
        prefix = key.rstrip(os.sep) + os.sep
        for known in [k for k in self._digests if k.startswith(prefix)]:
            del self._digests[known]

    def check(self, path: Path, current: str) -> None:
        """Raise ToolError unless `current` is exactly the text the model last saw."""
        seen = self._digests.get(self._key(path))
        rel = self._name(path)
        if seen is None:
            raise ToolError(f"'{rel}' has not been read yet; read it (read_file) before changing it")
        if seen != text_digest(current):
            raise ToolError(f"'{rel}' changed since you read it, read it again")

    def snapshot(self) -> dict[str, str]:
        """path -> digest (absolute paths), to tell what a tool call taught the ledger."""
        return dict(self._digests)

    def stored_form(self, entries: dict[str, str | None]) -> dict[str, str | None]:
        """Entries of `snapshot` as a session stores them: named as messages name files
        (workspace-relative posix paths; absolute outside the workspace or without a
        sandbox), so a session restored elsewhere still knows them."""
        return {self._name(Path(path)): digest for path, digest in entries.items()}

    def restore(self, digests: dict[str, str | None]) -> None:
        """Re-learn stored entries (a revived or restored session); None means "forgotten".
        Relative paths are taken in this ledger's workspace; absolute ones (stored before
        paths were relative) as they are, unless they are outside the workspace (stored
        in another folder: no tool here can reach them)."""
        for path, digest in digests.items():
            if self._sandbox is None:
                key = self._key(Path(path))
            else:
                key = self._key(Path(self._sandbox.absolute(path)))
                try:
                    self._sandbox.relative(Path(key))
                except ToolError:
                    continue
            if digest is None:
                self._digests.pop(key, None)
            else:
                self._digests[key] = digest

    def _key(self, path: Path) -> str:
        # Tools pass sandbox-resolved paths already; normpath only guards odd spellings.
        return os.path.normpath(os.fspath(path))

    def _name(self, path: Path) -> str:
        if self._sandbox is not None:
            try:
                return self._sandbox.relative(path)
            except ToolError:
                pass
        return os.fspath(path)
