"""The daemon's background tasks, all owned by one anyio task group.

Owns: starting every task beside the requests (warm-up, resumed turns, watchers, WAL checkpoints),
keeping each referenced while it runs, and at shutdown waiting, then cancelling after a grace;
a task asked for before the group opens waits, one after it closed is not started.
Must not: run requests (the transport does) or know what the tasks do.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

log = logging.getLogger("tether.server")

TaskFn = Callable[..., Awaitable[Any]]


class BackgroundTasks:
    """The daemon's background tasks; ``start`` them, ``running`` owns them."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._waiting: list[tuple[str, TaskFn, tuple[Any, ...]]] = []
        self._closed = False
        self._idle: anyio.Event | None = None  # made by wait_idle, set when the last task ends
        # name -> how many run now, and how many were ever started
        self.running_names: dict[str, int] = {}
        self.started: Counter[str] = Counter()

    @property
    def count(self) -> int:
        return sum(self.running_names.values())

    def start(self, name: str, fn: TaskFn, *args: Any) -> bool:
        """Run ``fn(*args)`` in the group; whether it was (or will be, once the group is
        open) started. An exception it raises is logged, never propagated."""
        if self._closed:
            log.debug("not starting %s: the daemon is stopping", name)
            return False
        if self._group is None:
            self._waiting.append((name, fn, args))
        else:  # from a task of the daemon's (anyio needs one: not from a loop callback)
            self._group.start_soon(self._run, name, fn, args, name=name)
        self._add(name)
        self.started[name] += 1
        return True

    def _add(self, name: str) -> None:
        self.running_names[name] = self.running_names.get(name, 0) + 1

    def _done(self, name: str) -> None:
        left = self.running_names[name] - 1
        if left:
            self.running_names[name] = left
        else:
            del self.running_names[name]
        if not self.running_names and self._idle is not None:
            self._idle.set()

    async def _run(self, name: str, fn: TaskFn, args: tuple[Any, ...]) -> None:
        try:
            await fn(*args)
        except Exception:
            log.exception("background task %s failed", name)
        finally:
            self._done(name)

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until no task runs (at most ``timeout`` seconds); whether none does."""
        if self.running_names:
            self._idle = anyio.Event()
            with anyio.move_on_after(timeout):
                await self._idle.wait()
        return not self.running_names

    @asynccontextmanager
    async def running(self, grace: float) -> AsyncIterator[BackgroundTasks]:
        """Own the tasks while the block runs; on the way out, wait up to ``grace``
        seconds for them to finish, then cancel the rest (and wait for that). An error of
        the block is raised as it is (not in an exception group)."""
        error: Exception | None = None
        async with anyio.create_task_group() as group:
            self._group = group
            waiting, self._waiting = self._waiting, []
            for name, fn, args in waiting:
                group.start_soon(self._run, name, fn, args, name=name)
            try:
                yield self
            except Exception as exc:  # the tasks never raise (`_run` logs): only the block does
                error = exc
            finally:
                self._closed = True
                with anyio.CancelScope(shield=True):
                    if not await self.wait_idle(grace):
                        log.warning("cancelling background tasks still running: %s", sorted(self.running_names))
                group.cancel_scope.cancel()
        self._group = None
        if error is not None:
            raise error
