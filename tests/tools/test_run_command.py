"""run_command: streamed, capped output; a scrubbed environment; and a process group that
never outlives the call (timeout, cancellation, or background children after exit)."""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio
import pytest

from daemon_harness import host_pids
from tether.tools.base import ToolContext, ToolError, validate_args
from tether.tools.command_output import OutputStreamer
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import SandboxError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TOOL = RunCommandTool()
FOOTER = re.compile(r"(?<=\n)(exit code -?\d+|killed [^\n]*?) · \d+\.\d s[^\n]*$")


class Child:
    """A background `sleep` a test command starts, found from outside by its unique
    duration; killed at teardown if a test failed to, so a broken test cannot leave
    sleeps behind."""

    def __init__(self, root: Path) -> None:
        self.marker = f"30.{time.monotonic_ns() % 10**9:09d}"
        self.path = root / "child.pid"
        self.command = f"sleep {self.marker} & echo $! > child.pid; sleep {self.marker}"

    async def started(self, limit: float = 3.0) -> None:
        """Wait until the command wrote the pid file and the sleep runs."""
        end = time.monotonic() + limit
        while not (self.path.exists() and self.path.read_text().strip().isdigit() and host_pids(self.marker)):
            if time.monotonic() > end:
                raise AssertionError(f"{self.path} was never written, or no sleep {self.marker} runs")
            await anyio.sleep(0.02)

    async def gone(self, limit: float = 10.0) -> bool:  # generous: a loaded CI machine
        """The pid file was written (so the child was started) and no sleep of it is left."""
        assert self.path.exists() and self.path.read_text().strip().isdigit(), "the child never started"
        end = time.monotonic() + limit
        while host_pids(self.marker):
            if time.monotonic() > end:
                return False
            await anyio.sleep(0.02)
        return True


@pytest.fixture
def child(root: Path) -> Iterator[Child]:
    spawned = Child(root)
    yield spawned
    for pid in host_pids(spawned.marker):
        os.kill(pid, signal.SIGKILL)


def _collect(ctx: ToolContext) -> tuple[ToolContext, list[str]]:
    chunks: list[str] = []
    return replace(ctx, on_output=chunks.append), chunks


async def test_output_streams_in_order_and_equals_the_result(ctx: ToolContext) -> None:
    ctx, chunks = _collect(ctx)
    result = await TOOL.call({"command": "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three"}, ctx)
    assert chunks == ["one\n", "two\n", "three\n"]
    assert not result.is_error and result.locations == []
    assert re.fullmatch(r"one\ntwo\nthree\nexit code 0 · \d\.\d s", result.text)


async def test_chatty_output_is_coalesced(ctx: ToolContext) -> None:
    ctx, chunks = _collect(ctx)
    await TOOL.call(
        {"command": "i=0; while [ $i -lt 40 ]; do echo line $i; i=$((i+1)); sleep 0.01; done; seq 1 20000"}, ctx
    )
    text = "".join(chunks)
    assert text == "".join(f"line {i}\n" for i in range(40)) + "".join(f"{i}\n" for i in range(1, 20001))
    # ~0.5 s of trickle at <= 20 updates/s, then ~110 KB in 4 KiB batches
    assert len(chunks) < 70


async def test_long_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    class Small(RunCommandTool):
        head_bytes = 20
        tail_bytes = 20

    result = await Small().call({"command": "seq 1 100"}, ctx)
    body = FOOTER.sub("", result.text)
    # lines 10..94 (85 lines, 255 bytes) fall between the kept whole lines
    assert body == "1\n2\n3\n4\n5\n6\n7\n8\n9\n[... 85 lines (255 bytes) elided ...]\n95\n96\n97\n98\n99\n100\n"


async def test_default_cap_is_8_kib_each_side(ctx: ToolContext) -> None:
    result = await TOOL.call({"command": "seq 1 100000"}, ctx)
    head, _, tail = result.text.partition("[... ")
    assert head.startswith("1\n2\n") and 7000 < len(head) <= 8192
    assert re.match(r"\d+ lines \(\d+ bytes\) elided \.\.\.\]\n", tail)
    assert FOOTER.sub("", tail).endswith("99999\n100000\n")


async def test_streaming_stops_after_its_limit_with_one_note(ctx: ToolContext) -> None:
    class Small(RunCommandTool):
        stream_limit = 1000

    ctx, chunks = _collect(ctx)
    result = await Small().call({"command": "seq 1 5000"}, ctx)
    streamed = "".join(chunks)
    assert streamed.count("streaming stopped") == 1
    assert streamed.startswith("1\n2\n") and len(streamed) < 1100
    assert "5000\nexit code 0" in result.text  # the result is capped separately


async def test_exit_codes_and_missing_commands(ctx: ToolContext) -> None:
    failed = await TOOL.call({"command": "echo oops; exit 2"}, ctx)
    assert failed.is_error and re.fullmatch(r"oops\nexit code 2 · \d\.\d s", failed.text)
    missing = await TOOL.call({"command": "no-such-command-xyz"}, ctx)
    assert missing.is_error and "no-such-command-xyz" in missing.text and "exit code 127" in missing.text
    silent = await TOOL.call({"command": "true"}, ctx)
    assert not silent.is_error and silent.text.startswith("(no output)\nexit code 0 · ")
    killed = await TOOL.call({"command": "kill -9 $$"}, ctx)
    # bubblewrap reports a signalled command as 128 + the signal, as a shell does
    assert killed.is_error and ("killed by SIGKILL" in killed.text or "exit code 137" in killed.text)


async def test_timeout_kills_the_whole_group(ctx: ToolContext, child: Child) -> None:
    result = await TOOL.call({"command": f"echo started; {child.command}", "timeout": 1}, ctx)
    assert result.is_error
    assert re.fullmatch(r"started\nkilled after timeout \(1 s\) · 1\.\d s · pass a larger timeout.*", result.text)
    assert await child.gone()


async def test_a_group_ignoring_sigterm_is_killed(ctx: ToolContext, child: Child) -> None:
    class Quick(RunCommandTool):
        kill_grace = 0.2

    result = await Quick().call({"command": f"trap '' TERM; {child.command}", "timeout": 1}, ctx)
    assert "killed after timeout" in result.text
    assert await child.gone()


async def test_background_children_die_when_the_command_ends(ctx: ToolContext, child: Child) -> None:
    result = await TOOL.call({"command": f"sleep {child.marker} & echo $! > child.pid; echo done"}, ctx)
    assert result.text.startswith("done\nexit code 0")
    assert await child.gone()


async def test_move_on_after_kills_the_group_promptly(ctx: ToolContext, child: Child) -> None:
    with anyio.move_on_after(0.5) as scope:
        await TOOL.call({"command": child.command, "timeout": 30}, ctx)
    assert scope.cancelled_caught
    assert await child.gone()


async def test_cancelling_the_scope_from_another_task_kills_the_group(ctx: ToolContext, child: Child) -> None:
    ctx, chunks = _collect(ctx)
    async with anyio.create_task_group() as group:
        group.start_soon(TOOL.call, {"command": f"echo hi; {child.command}"}, ctx)
        await child.started()
        end = time.monotonic() + 10
        while not chunks and time.monotonic() < end:  # the output is read by another task
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    assert chunks == ["hi\n"]  # what was printed before the cancel still reached the editor
    assert await child.gone()


async def test_secrets_are_scrubbed_and_quiet_variables_set(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-leak")
    monkeypatch.setenv("DEPLOY_TOKEN", "allowed-token")
    ctx = replace(ctx, env_allow=("DEPLOY_TOKEN",))
    text = (await TOOL.call({"command": "env"}, ctx)).text
    lines = text.splitlines()
    assert "FOO_API_KEY" not in text and "sk-leak" not in text
    assert "DEPLOY_TOKEN=allowed-token" in lines
    for pair in ("TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "NO_COLOR=1"):
        assert pair in lines


async def test_cwd_is_inside_the_workspace(ctx: ToolContext, root: Path, outside: Path, write) -> None:
    write({"sub/dir/a.txt": "x"})
    text = (await TOOL.call({"command": "pwd; ls", "cwd": "sub/dir"}, ctx)).text
    assert text.startswith(f"{root.resolve()}/sub/dir\na.txt\n")
    # a command's cwd is not its location (clients would title the call by it)
    assert TOOL.locations_for({"command": "ls", "cwd": "sub"}, ctx.sandbox) == []
    with pytest.raises(SandboxError, match="outside the workspace"):
        await TOOL.call({"command": "ls", "cwd": "../outside"}, ctx)
    with pytest.raises(ToolError, match="not a directory"):
        await TOOL.call({"command": "ls", "cwd": "sub/dir/a.txt"}, ctx)


async def test_timeouts_over_the_cap_are_refused(ctx: ToolContext) -> None:
    capped = RunCommandTool(max_timeout=5)
    assert capped.input_schema["properties"]["timeout"]["maximum"] == 5
    assert TOOL.input_schema["properties"]["timeout"]["maximum"] == 600
    with pytest.raises(ToolError, match=r"timeout 6 s is over the 5 s cap"):
        await capped.call({"command": "true", "timeout": 6}, ctx)
    with pytest.raises(ToolError, match="between 1 and 5"):
        await capped.call({"command": "true", "timeout": 0}, ctx)
    assert capped.dump(validate_args(capped, {"command": "ls"})) == {"command": "ls", "timeout": 5, "cwd": "."}
    assert validate_args(TOOL, {"command": "ls"}).timeout == 120
    with pytest.raises(ToolError, match=r"^run_command: timeout 601 s is over the 600 s cap; use at most 600"):
        validate_args(TOOL, {"command": "ls", "timeout": 601.0})
    assert "(default 5)" in capped.input_schema["properties"]["timeout"]["description"]


async def test_a_character_split_across_reads_survives(ctx: ToolContext) -> None:
    ctx, chunks = _collect(ctx)
    # é is C3 A9: the two bytes are written 0.2 s apart, so they arrive in separate reads
    result = await TOOL.call({"command": r"printf 'caf\303'; sleep 0.2; printf '\251\n'"}, ctx)
    assert "".join(chunks) == "café\n" and result.text.startswith("café\n")


def test_the_streamer_never_splits_a_character() -> None:
    got: list[str] = []
    stream = OutputStreamer(got.append, interval=0.0, size=1, limit=1 << 20)
    for byte in "ü€😀".encode():
        stream.feed(bytes([byte]))
    stream.close()
    assert got == ["ü", "€", "😀"]


def test_title_shows_the_command() -> None:
    # the command itself: Zed shows an execute call's title as plain text
    assert TOOL.title_for({"command": "npm test"}) == "npm test"
    # exactly as it will run: a newline is not folded into a harmless-looking space
    assert TOOL.title_for({"command": "make  \\\n  all"}) == "make  \\\n  all"
    assert TOOL.title_for({"command": "ls\nrm -rf x"}) == "ls\nrm -rf x"
    assert TOOL.title_for({"command": "x" * 100}) == "x" * 100
    long = "\n".join(f"echo {i}" for i in range(30))
    cut = TOOL.title_for({"command": long})
    assert cut.startswith("echo 0\n") and "echo 19 …" in cut and "echo 20" not in cut
    assert cut.endswith("… (cut: 10 more lines, 80 more characters not shown here)")
    assert TOOL.title_for({}) == "Run a command"
    assert TOOL.kind == "execute" and TOOL.read_only is False
