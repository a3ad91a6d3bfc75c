"""grep's ripgrep backend: runs `rg --json --text` over an explicit list of files, in the OS sandbox.

Owns: finding `rg`, its command line (the walker's file list, so rules cannot drift from Python's), parsing
its JSON into a `HitCollector`, dropping binary files itself, and killing rg on cancel (decision 0009).
Must not: decide which files to search, format output, or block the event loop.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sysconfig

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream

from tether.sandbox import SandboxPolicy, choose_sandbox
from tether.sandbox.host_path import host_program
from tether.tools.base import ToolError
from tether.tools.grep_hits import GrepRequest, HitCollector
from tether.tools.subprocess_env import command_env
from tether.tools.textfile import SNIFF_BYTES, has_nul
from tether_protocol import JsonObject

__all__ = ["find_rg", "search_rg"]

# Keep each command line far below ARG_MAX (commonly 2 MiB, shared with the environment).
_ARGS_BYTES = 128 * 1024
_STDERR_KEEP = 4096
# Files with hits are checked for binary content in batches, off the event loop.
_BATCH = 64
# rg writes "type" first in begin/match/end messages
_MATCH_PREFIX = b'{"type":"match"'


def find_rg() -> str | None:
    """The `rg` installed with this Python environment (the `ripgrep` wheel), else one on PATH."""
    scripts = sysconfig.get_path("scripts")
    for name in ("rg", "rg.exe"):
        candidate = os.path.join(scripts, name) if scripts else ""
        if candidate and os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    return host_program("rg")  # never a relative PATH entry: the cwd may be the repository


async def search_rg(rg: str, root: str, request: GrepRequest, collector: HitCollector, setting: str) -> None:
    """Search `request.files` (relative to `root`) with rg in the OS sandbox of ``setting``
    (the user's `sandbox`); raise ToolError on a bad regex."""
    # With no files rg still runs once (on the null device) so a bad regex is reported
    # exactly as it would be with files, instead of silently finding nothing.
    for chunk in _chunks(request.files) or [[os.devnull]]:
        await _run_chunk(rg, root, request, chunk, collector, setting)


def _chunks(files: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for rel in files:
        cost = len(os.fsencode(rel)) + 1
        if current and size + cost > _ARGS_BYTES:
            chunks.append(current)
            current, size = [], 0
        current.append(rel)
        size += cost
    if current:
        chunks.append(current)
    return chunks


async def _run_chunk(
    rg: str, root: str, request: GrepRequest, files: list[str], collector: HitCollector, setting: str
) -> None:
    command = [rg, "--json", "--no-config", "--text", "--no-messages"]
    command.append("--ignore-case" if request.ignore_case else "--case-sensitive")
    command += ["--", request.pattern, *files]
    choice = await anyio.to_thread.run_sync(choose_sandbox, setting)
    fds: list[int] = []
    if choice.sandbox is not None:
        policy = SandboxPolicy(workspace=root, tmpdir=None, cwd=root, writable=False, network=False)
        try:  # with the seccomp filter too (no unix sockets), as commands get it
            command, fds = choice.sandbox.prepare(command, policy)
        except (OSError, ValueError) as error:
            raise ToolError(f"grep: could not set up the {choice.sandbox.name} sandbox for rg: {error}") from error
    stderr = bytearray()
    parser = _JsonParser(root, collector)
    try:
        process = await anyio.open_process(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=command_env(),
            pass_fds=fds,
        )
    finally:
        for fd in fds:
            os.close(fd)
    async with process:
        try:
            assert process.stdout is not None and process.stderr is not None
            async with anyio.create_task_group() as group:
                group.start_soon(_drain, process.stderr, stderr)
                await _read_lines(process.stdout, parser)
            code = await process.wait()
        except BaseException:
            # cancelled (or failed): rg must not outlive the tool call
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            raise
    await parser.flush()
    # 0 = matches, 1 = none, 2 = an error. With --no-messages, files that could not be
    # read make rg exit 2 silently (the results are still valid); anything it does
    # print is fatal: a bad regex, or a bad command line.
    message = stderr.decode("utf-8", "replace").strip().removeprefix("rg: ")
    if code == 2 and "regex" in message:
        raise ToolError(f"grep: invalid regex {request.pattern!r}: {message}")
    if code not in (0, 1) and (message or code != 2):
        raise ToolError(f"grep: rg failed with exit status {code}: {message}")


async def _drain(stream: ByteReceiveStream, keep: bytearray) -> None:
    async for chunk in stream:
        if len(keep) < _STDERR_KEEP:
            keep += chunk[: _STDERR_KEEP - len(keep)]


async def _read_lines(stream: ByteReceiveStream, parser: _JsonParser) -> None:
    # a bytearray, because one JSON line (a minified file's line) can span many chunks
    pending = bytearray()
    async for chunk in stream:
        pending += chunk
        end = pending.rfind(b"\n")
        if end < 0:
            continue
        complete = bytes(pending[:end])
        del pending[: end + 1]
        for line in complete.split(b"\n"):
            if parser.feed(line):
                await parser.flush()
    parser.feed(bytes(pending))


def _text(field: JsonObject) -> bytes:
    """rg's JSON gives UTF-8 as "text" and anything else as base64 "bytes"."""
    if "text" in field:
        return os.fsencode(field["text"])
    return base64.b64decode(field["bytes"])


class _JsonParser:
    """Turns rg's begin/match/end messages (contiguous per file) into collector calls."""

    def __init__(self, root: str, collector: HitCollector) -> None:
        self._root = root
        self._collector = collector
        self._rel = ""
        self._hits: list[tuple[int, str]] = []
        self._count = 0
        self._done: list[tuple[str, list[tuple[int, str]], int]] = []

    def feed(self, line: bytes) -> bool:
        """Take one JSON line; True when a batch of finished files is ready for `flush`."""
        if line.startswith(_MATCH_PREFIX) and not self._collector.wants_more_of(self._rel, len(self._hits)):
            # Counting a hit whose text will not be kept needs no JSON parsing; this keeps
            # patterns with huge numbers of hits (e.g. "^$") cheap.
            self._count += 1
            return False
        if not line.strip():
            return False
        message = json.loads(line)
        kind, data = message.get("type"), message.get("data", {})
        if kind == "begin":
            self._rel = os.fsdecode(_text(data["path"]))
            self._hits, self._count = [], 0
        elif kind == "match":
            self._count += 1
            text = _text(data["lines"]).decode("utf-8", "replace").removesuffix("\n")
            self._hits.append((int(data["line_number"]), text))
        elif kind == "end" and self._count:
            self._done.append((self._rel, self._hits, self._count))
        return len(self._done) >= _BATCH

    async def flush(self) -> None:
        batch, self._done = self._done, []
        if not batch:
            return
        binary = await anyio.to_thread.run_sync(_binary_files, self._root, [rel for rel, _, _ in batch])
        for rel, hits, count in batch:
            if rel not in binary:
                self._collector.add_file(rel, hits, count)


def _binary_files(root: str, files: list[str]) -> set[str]:
    found: set[str] = set()
    for rel in files:
        try:
            with open(os.path.join(root, rel), "rb") as handle:
                if has_nul(handle.read(SNIFF_BYTES)):
                    found.add(rel)
        except OSError:
            found.add(rel)  # gone since rg read it: the Python backend would skip it too
    return found
