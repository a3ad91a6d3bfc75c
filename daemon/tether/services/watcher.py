"""Watching the workspace (watchfiles): keep what the tools know about it current.

Owns: one background watch per workspace with live sessions; a changed `.gitignore` reloads the
workspace's ignore rules (stale edits need no watcher: docs/decisions/0018).
Must not: block the event loop, or fail the daemon when the OS refuses more watches (logged).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # imported when the watch starts, after `session/new` is answered
    import watchfiles

    from ..tools.sandbox import WorkspaceSandbox

log = logging.getLogger("tether.watcher")


class WorkspaceWatcher:
    def __init__(self, sandbox: WorkspaceSandbox) -> None:
        self.sandbox = sandbox
        self.root = Path(sandbox.root)
        self._stop = anyio.Event()
        self.reloads = 0

    def _wanted(self, _change: watchfiles.Change, path: str) -> bool:
        return path.endswith(".gitignore") and "/.git/" not in path

    async def run(self) -> None:
        if self._stop.is_set():
            return  # stopped before it began (the daemon stopped while the client was busy)
        import watchfiles

        # what a tool read before the watch began is read again (a `.gitignore` may have
        # changed since the session opened)
        self.sandbox.reload_ignores()
        try:
            async for changes in watchfiles.awatch(
                self.root,
                watch_filter=self._wanted,
                stop_event=self._stop,
                debounce=100,
                step=50,
                recursive=True,
            ):
                if changes:
                    self.sandbox.reload_ignores()
                    self.reloads += 1
                    log.debug("reloaded ignore rules of %s (%d changes)", self.root, len(changes))
        except Exception as exc:  # e.g. inotify watch limit reached
            log.warning("not watching %s for .gitignore changes: %s", self.root, exc)

    def stop(self) -> None:
        self._stop.set()
