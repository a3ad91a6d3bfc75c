"""A stdio JSON-RPC server spawned for a benchmark, spoken to through `tether_client`'s peer.

Owns: spawning the process (asyncio subprocess, stderr discarded or sent to a file), the
spawn time every start-up figure is measured from, one `JsonRpcPeer` over its stdio in
either framing, a queue of the notifications it sent (each stamped with the time it was
read), and the child's CPU (user+sys, its reaped descendants included) and peak RSS.
Must not: know any method of Tether or Codex (the benchmarks do), assert anything, or
parse JSON itself (the peer does, with the client library's codec).

The peer is the project's one JSON-RPC implementation on the client side; only
`_open_peer` below knows its constructor, so a change of its interface is a change here.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from tether_client import JsonRpcPeer
from tether_protocol import Framing

RequestHandler = Callable[[str, Any], Awaitable[Any]]
Note = tuple[float, str, Any]  # (perf_counter when read, method, params)
LINE_LIMIT = 1 << 24  # a line of NDJSON may be long (a big tool output)


def children_cpu_s() -> float:
    """user+sys seconds of every child this process has reaped so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def proc_cpu_s(pid: int) -> float:
    """user+sys seconds of a running process so far (clock ticks, 10 ms resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    """VmHWM of a running process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _with_header(source: asyncio.StreamReader) -> tuple[asyncio.StreamReader, asyncio.Task[None]]:
    """`source`'s lines with `"jsonrpc":"2.0"` put in where it is missing.

    Codex's app-server speaks "JSON-RPC lite": one JSON per line without the
    `"jsonrpc"` member, which the project's peer (rightly, for its own protocol) refuses
    as an invalid request. One copy per line, on the client's side of the pipe.
    """
    out = asyncio.StreamReader(limit=LINE_LIMIT)

    async def pump() -> None:
        try:
            while line := await source.readline():
                if line.startswith(b"{") and not line.startswith(b'{"jsonrpc"'):
                    rest = line[1:]
                    line = b'{"jsonrpc":"2.0"' + (rest if rest.lstrip().startswith(b"}") else b"," + rest)
                out.feed_data(line)
        finally:
            out.feed_eof()

    return out, asyncio.get_running_loop().create_task(pump())


def _open_peer(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    framing: Framing,
    on_notification: Callable[[str, Any], None],
    on_request: RequestHandler | None,
) -> JsonRpcPeer:
    peer = JsonRpcPeer(reader, writer, framing=framing, on_notification=on_notification, on_request=on_request)
    peer.start()
    return peer


class Spawned:
    """One spawned server: `await Spawned.start(argv, ...)`, requests, notifications, `close()`."""

    def __init__(self, t_spawn: float, proc: asyncio.subprocess.Process) -> None:
        self.t_spawn = t_spawn
        self.proc = proc
        self.notes: asyncio.Queue[Note] = asyncio.Queue()
        self.peer: JsonRpcPeer | None = None
        self._pump: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        framing: Framing = "lsp",
        on_request: RequestHandler | None = None,
        stderr: IO[bytes] | None = None,
        lite: bool = False,
    ) -> Spawned:
        """Spawn `argv`; `lite`: it writes NDJSON without the `"jsonrpc"` member (Codex)."""
        t_spawn = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
            limit=LINE_LIMIT,
        )
        self = cls(t_spawn, proc)
        assert proc.stdout is not None and proc.stdin is not None
        reader = proc.stdout
        if lite:
            reader, self._pump = _with_header(reader)
        self.peer = _open_peer(reader, proc.stdin, framing, self._noted, on_request)
        return self

    def _noted(self, method: str, params: Any) -> None:
        self.notes.put_nowait((time.perf_counter(), method, params))

    @property
    def rpc(self) -> JsonRpcPeer:
        assert self.peer is not None
        return self.peer

    def since_spawn_ms(self) -> float:
        return (time.perf_counter() - self.t_spawn) * 1000

    async def request(self, method: str, params: Any = None) -> Any:
        """The result (a JSON-RPC error raises `tether_client.ClientError`)."""
        return await self.rpc.request(method, params)

    def notify(self, method: str, params: Any = None) -> None:
        self.rpc.notify(method, params)

    async def next_note(self) -> Note:
        return await self.notes.get()

    def queued(self) -> list[Note]:
        """The notifications read so far and not yet taken (all of a request's, once it is answered)."""
        notes: list[Note] = []
        while not self.notes.empty():
            notes.append(self.notes.get_nowait())
        return notes

    async def until_note(self, method: str) -> Note:
        """Notifications are read (and dropped) until one of `method` arrives."""
        while True:
            note = await self.notes.get()
            if note[1] == method:
                return note

    def cpu_s(self) -> float:
        return proc_cpu_s(self.proc.pid)

    def peak_rss_mb(self) -> float:
        return peak_rss_mb(self.proc.pid)

    async def close(self, timeout: float = 20.0) -> float:
        """Close its stdin, wait for it to exit (killed after `timeout`) and return its CPU seconds.

        The CPU is the growth of this process's reaped-children usage across the wait,
        so it counts the whole life of the process and of the descendants it waited
        for; spawns must therefore be closed one at a time.
        """
        before = children_cpu_s()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        cpu = children_cpu_s() - before
        if self._pump is not None:
            await self._pump
        if self.peer is not None:
            await self.peer.close()
        return cpu
