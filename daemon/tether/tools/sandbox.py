"""The workspace sandbox: the only way tools turn model-supplied paths into real paths.

Owns: confining paths to the workspace root (after symlinks) and out of Tether's files and the credential
stores, refusing over-long paths before any filesystem call, the last no-`.git` check on a change,
workspace-relative names, and the workspace's gitignore matcher.
Must not: read file contents, walk directories, or grant anything whose real location is outside the root.
"""

from __future__ import annotations

import os
from pathlib import Path

from tether.tools.errors import ToolError
from tether.tools.ignore import GitignoreMatcher

__all__ = ["NAME_MAX", "PATH_MAX", "SandboxError", "WorkspaceSandbox"]

# Linux's limits (bytes), also the common ones elsewhere; a longer path can only fail,
# and some of the standard library's path functions recurse once per component.
PATH_MAX = 4096
NAME_MAX = 255


class SandboxError(ToolError):
    """A path the model gave is unusable or lies outside the workspace."""


class WorkspaceSandbox:
    """Confines tool paths to one workspace directory."""

    def __init__(self, root: Path, private: tuple[str, ...] = (), stores: tuple[str, ...] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self._root_str = str(self.root)
        # "/" as a root would make every prefix check pass; compute the prefix once
        self._prefix = self._root_str if self._root_str.endswith(os.sep) else self._root_str + os.sep
        self.ignore = GitignoreMatcher(self._root_str)
        # Tether's own config and history, when the workspace holds them (workspace = ~):
        # workspace-relative, so the walk can skip them by name
        self._private = tuple(
            os.path.relpath(real, self._root_str)
            for real in (os.path.realpath(p) for p in private)
            if real != self._root_str and self._contains(real)
        )
        # the same, wherever they are: what an instructions file must not be a link to
        self._own = tuple(os.path.realpath(p) for p in private)
        # the credential stores commands cannot read (sandbox/credential_stores.py), when the
        # workspace holds them (workspace = ~): the file tools skip and refuse them too
        self._stores = tuple(
            os.path.relpath(real, self._root_str)
            for real in (os.path.realpath(p) for p in stores)
            if real != self._root_str and self._contains(real)
        )
        # the same, wherever they are: a link a command planted (`AGENTS.md -> .ssh/id_ed25519`
        # in a home-folder workspace) must not carry one into the prompt
        self._store_reals = tuple(os.path.realpath(p) for p in stores)

    def is_private(self, rel_path: str) -> bool:
        """True for Tether's own config and history and the credential stores (and what
        is inside them)."""
        return any(rel_path == p or rel_path.startswith(p + "/") for p in (*self._private, *self._stores))

    def is_tethers_own(self, real: str) -> bool:
        """True for a real (resolved) path in Tether's own config or history, inside the
        workspace or not (AGENTS.md in a parent folder linked to `~/.config/tether`)."""
        return any(real == own or real.startswith(own.rstrip(os.sep) + os.sep) for own in self._own)

    def is_withheld(self, real: str) -> bool:
        """True for a real path in Tether's own files or a credential store: what an
        instructions or memory file must not be a link to."""
        return self.is_tethers_own(real) or any(
            real == store or real.startswith(store.rstrip(os.sep) + os.sep) for store in self._store_reals
        )

    def resolve(self, path: str) -> Path:
        """Return the real path for `path` (relative to the root, or absolute inside it).

        Symlinks are resolved for every existing component, so a link (to a file or a
        parent directory) that points outside the workspace is refused. Paths that do
        not exist yet are allowed as long as they would land inside the root.
        """
        if not isinstance(path, str) or path == "":
            raise SandboxError("path is empty; use '.' for the workspace root or a path relative to it")
        if "\0" in path:
            raise SandboxError(f"path {path!r} contains a NUL byte; use a plain path relative to the workspace root")
        _check_length(path)
        joined = path if os.path.isabs(path) else os.path.join(self._root_str, path)
        _check_length(joined, inside=self._root_str)
        # realpath resolves as far as the path exists and normalises the rest (incl. "..")
        real = os.path.realpath(joined)
        if self._contains(real):
            rel = os.path.relpath(real, self._root_str)
            if self._private and any(rel == p or rel.startswith(p + "/") for p in self._private):
                raise SandboxError(
                    f"path {path!r} is Tether's own configuration or history; tools do not read or change it"
                )
            if self._stores and self.is_private(rel):
                raise SandboxError(
                    f"path {path!r} is in a credential store hidden from tools and commands; the user can expose "
                    "it with allow_read in their Tether user config"
                )
            return Path(real)
        if self._contains(os.path.normpath(joined)):
            # Lexically inside but really outside: a symlink points out of the workspace.
            raise SandboxError(
                f"path {path!r} resolves through a symbolic link to {real}, which is outside the "
                f"workspace {self._root_str}; only files inside the workspace can be used"
            )
        raise SandboxError(
            f"path {path!r} is outside the workspace {self._root_str}; use a path relative to the workspace root"
        )

    def check_not_under_git(self, path: Path) -> None:
        """SandboxError when `path`, with its parent directories resolved as they are now,
        lies under a `.git` at any depth: a directory swapped for a link to `.git` while a
        change waited for approval must not get the change written into the repository."""
        text = os.path.normpath(os.fspath(path))
        real = os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))
        if self._contains(real):
            rel = os.path.relpath(real, self._root_str)
            if ".git" in Path(rel).as_posix().lower().split("/"):
                raise SandboxError(
                    f"Tether does not change files under .git/ ('{os.fspath(path)}' now lies in "
                    f"'{Path(rel).as_posix()}'); use git commands (run_command) to change the repository"
                )

    def relative(self, path: Path) -> str:
        """Workspace-relative posix form of a path inside the root ("." for the root)."""
        text = os.path.normpath(os.fspath(path))
        if not os.path.isabs(text):
            text = os.path.join(self._root_str, text)
        if not self._contains(text):
            raise SandboxError(f"path {os.fspath(path)!r} is outside the workspace {self._root_str}")
        rel = os.path.relpath(text, self._root_str)
        return Path(rel).as_posix()

    def absolute(self, rel_path: str) -> str:
        """Absolute path string for a workspace-relative path (no symlink resolution)."""
        return self._root_str if rel_path in ("", ".") else os.path.join(self._root_str, rel_path)

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """True if git would ignore this workspace-relative path (or it is under `.git`)."""
        return self.ignore.is_ignored(rel_path, is_dir)

    def reload_ignores(self) -> None:
        """Drop cached `.gitignore` rules so edits on disk are picked up."""
        self.ignore.reload()

    def _contains(self, real: str) -> bool:
        return real == self._root_str or real.startswith(self._prefix)


def _size(text: str) -> tuple[int, str]:
    size = len(text.encode("utf-8", "surrogatepass"))
    return size, "characters" if size == len(text) else "bytes in UTF-8"


def _check_length(path: str, *, inside: str = "") -> None:
    """Refuse a path the system could not use, naming the limits (SandboxError)."""
    limits = f"paths are limited to {PATH_MAX} and each name to {NAME_MAX}"
    size, unit = _size(path)
    if size > PATH_MAX:
        where = f" with the workspace root {inside}" if inside else ""
        raise SandboxError(f"path is too long ({size} {unit}{where}; {limits}); use a shorter path")
    for name in path.split("/"):
        size, unit = _size(name)
        if size > NAME_MAX:
            raise SandboxError(
                f"path has a name that is too long ({size} {unit}: {name[:40]!r}...; {limits}); use a shorter name"
            )
