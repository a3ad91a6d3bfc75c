"""The OS sandbox run_command (and rg) run in: real commands, real bubblewrap and real
Landlock, each test against both backends; plus the unsandboxed path ("off").

Escapes counted here: a write outside the workspace and the temp dir, a TCP connection
without the network allowed, reading another process's environment or memory, gaining
privileges, and a process outliving its call. Each must be 0.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from tether.sandbox import SandboxChoice, SandboxPolicy, choose_sandbox
from tether.tools.base import ToolContext
from tether.tools.process_group import run_in_process_group
from tether.tools.run_command import RunCommandTool
from tether.tools.subprocess_env import command_env

TOOL = RunCommandTool()
BACKENDS = ["bwrap", "landlock"]


@pytest.fixture(params=BACKENDS)
def confined(request: pytest.FixtureRequest, ctx: ToolContext) -> ToolContext:
    """The tool context with one backend; both must be usable on the test machines
    (bubblewrap from tests/install-deps, Landlock ABI >= 4 in the kernel)."""
    choice = choose_sandbox(request.param)
    assert choice.sandbox is not None and choice.sandbox.name == request.param, choice.reason
    return replace(ctx, command_sandbox=choice)


@pytest.fixture
def unconfined(ctx: ToolContext) -> ToolContext:
    choice = choose_sandbox("off")
    assert choice.sandbox is None and "off" in choice.reason
    return replace(ctx, command_sandbox=choice)


async def run(ctx: ToolContext, command: str, **args: object) -> str:
    return (await TOOL.run({"command": command, **args}, ctx)).text


def _host_pids(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in argv and state != "Z":
            found.append(int(name))
    return found


async def _none_left(marker: str, limit: float = 3.0) -> bool:
    end = time.monotonic() + limit
    while _host_pids(marker):
        if time.monotonic() > end:
            return False
        await anyio.sleep(0.02)
    return True


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique `sleep` duration: finds a test's processes from outside its PID namespace."""
    value = f"40.{time.monotonic_ns() % 10**9:09d}"
    yield value
    for pid in _host_pids(value):
        os.kill(pid, signal.SIGKILL)


# ---- files ---------------------------------------------------------------------------


@pytest.fixture
def far_outside() -> Iterator[Path]:
    """A directory outside the workspace and outside the host's /tmp."""
    base = "/var/tmp" if os.path.isdir("/var/tmp") else os.path.expanduser("~")
    path = Path(tempfile.mkdtemp(prefix="tether-outside-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_writes_outside_the_workspace_fail_and_say_the_sandbox_blocked_them(
    confined: ToolContext, root: Path, far_outside: Path
) -> None:
    target = far_outside / "planted.txt"
    result = await TOOL.run({"command": f"echo x > {target}"}, confined)
    assert result.is_error and not target.exists()
    assert "[sandbox: this command ran in an OS sandbox" in result.text, result.text
    assert "write to the workspace and $TMPDIR" in result.text and "Allow once, with network" in result.text
    # the home directory and system places are not writable either
    home = await run(confined, "touch ~/.tether-sandbox-probe; touch /usr/tether-probe; echo rc=$?")
    assert not Path("~/.tether-sandbox-probe").expanduser().exists() and not Path("/usr/tether-probe").exists()
    assert "rc=0" not in home


async def test_the_workspace_and_the_private_temp_dir_are_writable(confined: ToolContext, root: Path) -> None:
    text = await run(confined, 'mkdir -p sub && echo a > sub/f && echo b > "$TMPDIR/t" && cat sub/f "$TMPDIR/t" && mv sub/f g && rm g && echo ok')
    assert text.startswith("a\nb\nok\n"), text
    # the temp dir is the call's own, and removed after it
    Path(tempfile.gettempdir(), f"host-only-{os.getpid()}").write_text("x")
    try:
        tmp = (await run(confined, 'echo "$TMPDIR"; ls -A "$TMPDIR"')).splitlines()
    finally:
        Path(tempfile.gettempdir(), f"host-only-{os.getpid()}").unlink()
    assert f"host-only-{os.getpid()}" not in tmp
    assert "tether-cmd-" in tmp[0] and not os.path.exists(tmp[0])
    # the host's /tmp is there to read (a venv, a tool), not to write
    host = Path(tempfile.mkdtemp(prefix="tether-host-"))
    try:
        (host / "tool.txt").write_text("from the host\n")
        seen = await run(confined, f"cat {host}/tool.txt; echo x > {host}/planted.txt")
        assert "from the host" in seen and not (host / "planted.txt").exists()
    finally:
        shutil.rmtree(host)


async def test_read_only_policy_refuses_every_write(confined: ToolContext, root: Path) -> None:
    """The policy rg runs under (and commands in read-only mode, would they run)."""
    sandbox = confined.command_sandbox.sandbox  # type: ignore[union-attr]
    policy = SandboxPolicy(workspace=str(root.resolve()), tmpdir=None, cwd=str(root.resolve()), writable=False)
    out = bytearray()
    argv = sandbox.wrap(["/bin/sh", "-c", "cat data; echo x > data; echo x > new; echo rc=$?"], policy)
    (root / "data").write_text("kept\n")
    outcome = await run_in_process_group("", cwd=str(root), env=command_env(), timeout=10, on_data=out.extend, argv=argv)
    text = out.decode()
    assert outcome.returncode == 0 and text.startswith("kept\n") and "rc=0" not in text, text
    assert (root / "data").read_text() == "kept\n" and not (root / "new").exists()


async def test_bwrap_keeps_git_hooks_and_config_read_only(ctx: ToolContext, root: Path) -> None:
    """A planted hook would run outside the sandbox at the user's next commit. Landlock
    cannot protect paths inside a writable directory (documented), bubblewrap does."""
    choice = choose_sandbox("bwrap")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    text = await run(replace(ctx, command_sandbox=choice),
                     "echo evil > .git/hooks/pre-commit; echo '[core] hooksPath=/x' >> .git/config; echo x > .git/HEAD; echo done")
    assert "Read-only file system" in text and "done" in text
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (root / ".git" / "config").read_text() == "[core]\n" and (root / ".git" / "HEAD").read_text() == "x\n"


async def test_tethers_config_and_history_cannot_be_read(confined: ToolContext) -> None:
    parent = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        hidden = parent / "tether-home"
        hidden.mkdir()
        (hidden / "config.toml").write_text('api_key = "sk-in-config"\n')
        (parent / "beside.txt").write_text("readable\n")
        ctx = replace(confined, hidden_paths=(str(hidden),))
        text = await run(ctx, f"cat {hidden}/config.toml; cat {parent}/beside.txt; cat /etc/hostname >/dev/null && echo etc-ok")
    finally:
        shutil.rmtree(parent)
    assert "sk-in-config" not in text
    # bubblewrap shows an empty directory; Landlock refuses to read it
    assert ("No such file" in text) or ("Permission denied" in text)
    # everything else can still be read
    assert "readable" in text and "etc-ok" in text


# ---- network -------------------------------------------------------------------------


class Listener:
    """A TCP server on a loopback port that counts the connections it accepted."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def _connect(port: int) -> str:
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
    return f"{sys.executable} -I -c \"{code}\""


async def test_tcp_to_loopback_fails_without_the_network(confined: ToolContext, listener: Listener) -> None:
    result = await TOOL.run({"command": _connect(listener.port)}, confined)
    assert result.is_error and "connected" not in result.text
    assert listener.accepted == 0
    assert "probably blocked" in result.text and "the network" in result.text and "network_commands" in result.text


async def test_tcp_to_loopback_works_when_the_network_is_allowed(confined: ToolContext, listener: Listener) -> None:
    result = await TOOL.run({"command": _connect(listener.port)}, replace(confined, network=True))
    assert not result.is_error and result.text.startswith("connected\n"), result.text
    assert listener.accepted == 1


# ---- other processes and privileges ----------------------------------------------------


@pytest.fixture
def daemon_like() -> Iterator[int]:
    """A process of the same user with a key in its environment, like the daemon."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENAI_API_KEY": "sk-daemon-secret-123"}
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    yield process.pid
    process.kill()
    process.wait()


async def test_other_processes_environment_and_memory_are_unreadable(confined: ToolContext, daemon_like: int) -> None:
    me = os.getpid()  # the parent of the sandbox's launcher: what the daemon is
    command = (
        f"cat /proc/{daemon_like}/environ; cat /proc/{me}/environ; head -c 64 /proc/{me}/mem;"
        f"head -c 64 /proc/{daemon_like}/mem; echo; tr '\\0' '\\n' < /proc/$PPID/environ;"
        f"echo ---; tr '\\0' '\\n' < /proc/1/environ; echo end"
    )
    text = await run(confined, command)
    assert "sk-daemon-secret-123" not in text
    # what the command can see of its parents' environment is its own minimal one
    allowed = set(command_env(tmpdir="/x")) | {"PWD", "OLDPWD", "SHLVL", "_"}
    for line in text.split("---", 1)[0].splitlines()[-20:] + text.split("---", 1)[1].splitlines()[:-2]:
        if "=" in line and not line.startswith(("cat:", "head:", "tr:", "/bin/sh")):
            assert line.split("=", 1)[0] in allowed, line
    assert "end" in text


async def test_no_new_privileges_and_no_capabilities(confined: ToolContext, root: Path) -> None:
    (root / "f").write_text("x")
    text = await run(confined, "grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd|CapAmb)' /proc/self/status; chown 65534 f; echo chown=$?")
    assert "NoNewPrivs:\t1" in text
    for field in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
        assert f"{field}:\t0000000000000000" in text, text
    assert "chown=1" in text  # even uid 0 cannot change owners
    if shutil.which("sudo"):
        assert "sudo=0" not in await run(confined, "sudo -n true; echo sudo=$?")
    # a setuid-root program gains nothing: mount still fails for want of CAP_SYS_ADMIN
    assert "mount=0" not in await run(confined, "mount -t tmpfs none /mnt; echo mount=$?")


# ---- process lifetime --------------------------------------------------------------------


async def test_a_setsid_child_is_gone_when_the_call_ends(confined: ToolContext, marker: str) -> None:
    text = await run(confined, f"setsid sleep {marker} > /dev/null 2>&1 & sleep 0.3; echo started")
    assert text.startswith("started\n")
    assert await _none_left(marker)


async def test_a_setsid_child_is_gone_when_the_call_is_cancelled(
    confined: ToolContext, marker: str, root: Path
) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(run, confined, f'echo "$TMPDIR" > tmpdir; setsid sleep {marker} > /dev/null 2>&1 & sleep {marker}')
        end = time.monotonic() + 5
        while len(_host_pids(marker)) < 2:
            assert time.monotonic() < end, "the command never started its sleeps"
            await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert await _none_left(marker)
    # the private temp dir went with it
    tmpdir = (root / "tmpdir").read_text().strip()
    assert "tether-cmd-" in tmpdir and not os.path.exists(tmpdir)


async def test_timeout_kills_everything_it_started(confined: ToolContext, marker: str) -> None:
    result = await TOOL.run({"command": f"setsid sleep {marker} & sleep {marker}", "timeout": 1}, confined)
    assert "killed after timeout" in result.text
    assert await _none_left(marker)


# ---- common tools --------------------------------------------------------------------------


async def test_git_works_inside(confined: ToolContext, root: Path) -> None:
    text = await run(
        confined,
        "git init -q . && echo hi > a.txt && git add a.txt && "
        "git -c user.name=T -c user.email=t@example.com commit -q -m first && git status --short && git log --format=%s",
    )
    assert text.startswith("first\nexit code 0"), text


async def test_python_and_pytest_work_inside(confined: ToolContext, root: Path) -> None:
    (root / "test_tiny.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    text = await run(confined, f"python3 -c 'print(6 * 7)' && {sys.executable} -m pytest -q -p no:cacheprovider test_tiny.py")
    assert text.startswith("42\n") and "1 passed" in text and "exit code 0" in text, text


async def test_npm_test_works_inside(confined: ToolContext, root: Path) -> None:
    (root / "package.json").write_text('{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node -e \\"console.log(6 * 7)\\""}}\n')
    text = await run(confined, "npm test")
    assert "\n42\n" in text and "exit code 0" in text, text


# ---- environment -----------------------------------------------------------------------------


async def test_commands_get_a_minimal_environment(confined: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-leak")
    monkeypatch.setenv("HARMLESS_SETTING", "not-passed")
    monkeypatch.setenv("DEPLOY_TOKEN", "allowed-token")
    monkeypatch.setenv("MY_TOOL_HOME", "/opt/tool")
    ctx = replace(confined, env_allow=("DEPLOY_TOKEN", "MY_TOOL_*"))
    lines = (await run(ctx, "env | sort")).splitlines()
    names = {line.split("=", 1)[0] for line in lines if "=" in line}
    assert "DEPLOY_TOKEN=allowed-token" in lines and "MY_TOOL_HOME=/opt/tool" in lines
    assert "FOO_API_KEY" not in names and "HARMLESS_SETTING" not in names
    assert names <= set(command_env(("DEPLOY_TOKEN", "MY_TOOL_*"), "/x")) | {"PWD", "OLDPWD", "SHLVL", "_"}, names
    for pair in ("TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "NO_COLOR=1"):
        assert pair in lines


# ---- no sandbox ------------------------------------------------------------------------------


async def test_unsandboxed_commands_still_run_and_are_not_confined(unconfined: ToolContext, outside: Path) -> None:
    """The "off" path: the gate asks for each command (tests/approvals), and the command runs
    as it would in a terminal, with the minimal environment still."""
    target = outside / "written.txt"
    result = await TOOL.run({"command": f"echo x > {target}; env"}, unconfined)
    assert not result.is_error and target.read_text() == "x\n"
    assert "[sandbox:" not in result.text and "TMPDIR=" in result.text


def test_the_choice_is_cached_and_explains_itself() -> None:
    first: SandboxChoice = choose_sandbox("auto")
    assert choose_sandbox("auto") is first
    assert first.sandbox is not None and first.sandbox.name == "bwrap", first.reason
    landlock = choose_sandbox("landlock")
    assert landlock.sandbox is not None and landlock.sandbox.version.startswith("ABI ")


# ---- the daemon's own hardening --------------------------------------------------------------


def test_hardening_makes_the_process_non_dumpable_without_cores_or_loader_variables() -> None:
    code = (
        "import ctypes, os, resource, subprocess\n"
        "from tether.sandbox.hardening import harden_process\n"
        "assert harden_process() == []\n"
        "libc = ctypes.CDLL(None)\n"
        "print('dumpable', libc.prctl(3, 0, 0, 0, 0))\n"
        "print('core', resource.getrlimit(resource.RLIMIT_CORE))\n"
        "print('child', subprocess.run(['env'], capture_output=True, text=True).stdout.count('LD_'))\n"
    )
    env = {**os.environ, "LD_LIBRARY_PATH": "/nonexistent-tether", "LD_AUDIT": "", "DYLD_INSERT_LIBRARIES": "x"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["dumpable 0", "core (0, 0)", "child 0"]


def test_auto_falls_back_to_landlock_when_bubblewrap_is_missing() -> None:
    code = (
        "from tether.sandbox import choose_sandbox\n"
        "for setting in ('auto', 'bwrap'):\n"
        "    c = choose_sandbox(setting)\n"
        "    print(setting, c.sandbox.name if c.sandbox else None, '|', c.reason)\n"
    )
    env = {**os.environ, "PATH": "/nonexistent"}  # no bwrap to be found
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    auto, bwrap = done.stdout.splitlines()
    assert auto.startswith("auto landlock | Landlock ABI ") and "bubblewrap is not installed" in auto
    assert bwrap.startswith("bwrap None | bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
