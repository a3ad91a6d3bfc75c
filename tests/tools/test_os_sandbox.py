"""The OS sandbox run_command (and rg) run in: real commands, real bubblewrap and real
Landlock, each test against both backends; plus the unsandboxed path ("off").

Escapes counted here: a write outside the workspace and the temp dir, a write to `.git`
(bubblewrap), reading or changing Tether's config or history (also inside the workspace,
and a config file beside it), a TCP connection, a UDP datagram or a unix socket connection
without the network allowed, reading another process's environment or memory, gaining
privileges, and a process outliving its call. Each must be 0.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from daemon_harness import host_pids
from tether.sandbox import SandboxChoice, SandboxPolicy, choose_sandbox
from tether.tools.base import ToolContext, ToolError
from tether.tools.process_group import run_in_process_group
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox
from tether.tools.subprocess_env import command_env

if TYPE_CHECKING:
    from collections.abc import Iterator

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
    return (await TOOL.call({"command": command, **args}, ctx)).text


async def _none_left(marker: str, limit: float = 10.0) -> bool:  # generous: a loaded CI machine
    end = time.monotonic() + limit
    while host_pids(marker):
        if time.monotonic() > end:
            return False
        await anyio.sleep(0.02)
    return True


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique `sleep` duration: finds a test's processes from outside its PID namespace."""
    value = f"40.{time.monotonic_ns() % 10**9:09d}"
    yield value
    for pid in host_pids(value):
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
    result = await TOOL.call({"command": f"echo x > {target}"}, confined)
    assert result.is_error and not target.exists()
    assert "[sandbox: this command ran in an OS sandbox" in result.text, result.text
    assert "write to the workspace and $TMPDIR" in result.text and "Allow once, with network" in result.text
    # the home directory and system places are not writable either
    home = await run(confined, "touch ~/.tether-sandbox-probe; touch /usr/tether-probe; echo rc=$?")
    assert not Path("~/.tether-sandbox-probe").expanduser().exists() and not Path("/usr/tether-probe").exists()
    assert "rc=0" not in home


async def test_the_workspace_and_the_private_temp_dir_are_writable(confined: ToolContext, root: Path) -> None:
    text = await run(
        confined,
        'mkdir -p sub && echo a > sub/f && echo b > "$TMPDIR/t" && cat sub/f "$TMPDIR/t" && mv sub/f g && rm g && echo ok',
    )
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
    outcome = await run_in_process_group(
        "", cwd=str(root), env=command_env(), timeout=10, on_data=out.extend, argv=argv
    )
    text = out.decode()
    assert outcome.returncode == 0 and text.startswith("kept\n") and "rc=0" not in text, text
    assert (root / "data").read_text() == "kept\n" and not (root / "new").exists()


def _git(root: Path, *args: str) -> str:
    env = {**command_env(), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root.parent)}
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, timeout=30)
    return done.stdout + done.stderr


@pytest.fixture
def repo(root: Path) -> Path:
    """A git repository with one commit: the workspace."""
    _git(root, "init", "-q", ".")
    (root / "a.txt").write_text("hi\n")
    _git(root, "add", "a.txt")
    _git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
    return root


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"/" for p in sorted(directory.rglob("*"))
    }


async def test_bwrap_keeps_the_whole_git_directory_read_only(ctx: ToolContext, repo: Path, far_outside: Path) -> None:
    """A planted hook, `core.fsmonitor` or `commondir` would run outside the sandbox at the
    user's next git command. Landlock cannot protect paths inside a writable directory
    (documented), bubblewrap binds the whole `.git` read-only: neither written nor moved."""
    git = repo / ".git"
    before = _snapshot(git)
    ran = far_outside / "hook-ran"
    hook = f"#!/bin/sh\ntouch {ran}\n"
    (repo / "evil" / "hooks").mkdir(parents=True)
    (repo / "evil" / "hooks" / "pre-commit").write_text(hook)
    (repo / "evil" / "hooks" / "pre-commit").chmod(0o755)
    confined = replace(ctx, command_sandbox=choose_sandbox("bwrap"))
    text = await run(
        confined,
        (
            "echo ../evil > .git/commondir; "
            f"printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
            f"printf '[core]\\n\\tfsmonitor = touch {ran}\\n' >> .git/config; "
            "mv .git .git.tmp && cp -a .git.tmp .git && echo moved; "
            "cp -a .git .git.copy && rm -rf .git && mv .git.copy .git && echo replaced; "
            "echo hi >> a.txt; echo done; git add a.txt"
        ),
    )
    assert "Read-only file system" in text and "done" in text and "moved" not in text and "replaced" not in text, text
    assert not (repo / ".git.tmp").exists() and _snapshot(git) == before
    # the model is told why, and that the user can run git
    assert "`.git` is read-only in the sandbox" in text and "ask the user" in text, text
    # the user's next git commands run nothing planted
    _git(repo, "status")
    _git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-am", "second")
    assert not ran.exists()


async def test_bwrap_keeps_a_worktrees_git_file_read_only(ctx: ToolContext, repo: Path, far_outside: Path) -> None:
    tree = far_outside / "tree"
    _git(repo, "worktree", "add", "-q", str(tree))
    pointer = (tree / ".git").read_text()
    confined = replace(ctx, command_sandbox=choose_sandbox("bwrap"), sandbox=WorkspaceSandbox(tree))
    text = await run(confined, "echo 'gitdir: ../evil' > .git; mv .git g; rm -f .git; echo done")
    assert "done" in text and (tree / ".git").read_text() == pointer and not (tree / "g").exists(), text


async def test_bwrap_keeps_a_submodules_git_file_read_only(ctx: ToolContext, repo: Path) -> None:
    # a rewritten submodule `.git` points git at a planted config (core.fsmonitor), which
    # the user's next `git status` in the workspace would run
    (repo / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n')
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    confined = replace(ctx, command_sandbox=choose_sandbox("bwrap"))
    text = await run(confined, "printf 'gitdir: ../evil\\n' > sub/.git; mv sub/.git sub/g; echo done")
    assert "done" in text and (repo / "sub" / ".git").read_text() == "gitdir: ../.git/modules/sub\n", text
    assert not (repo / "sub" / "g").exists()


async def test_git_works_inside_under_landlock_only(confined: ToolContext, repo: Path) -> None:
    """Landlock cannot keep `.git` read-only in the writable workspace: git commits work
    there. bubblewrap keeps it read-only: reading works, writing does not."""
    text = await run(
        confined,
        "echo more >> a.txt && git diff --stat && git add a.txt && "
        "git -c user.name=T -c user.email=t@example.com commit -q -m second; git log --format=%s",
    )
    if confined.command_sandbox.sandbox.name == "landlock":  # type: ignore[union-attr]
        assert text.startswith(" a.txt | 1 +\n 1 file changed") and "second\nfirst\nexit code 0" in text, text
    else:
        assert (
            " a.txt | 1 +" in text and "index.lock': Read-only file system" in text and "\nfirst\nexit code 0" in text
        ), text


async def test_tethers_config_and_history_cannot_be_read(confined: ToolContext) -> None:
    parent = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        hidden = parent / "tether-home"
        hidden.mkdir()
        (hidden / "config.toml").write_text('api_key = "sk-in-config"\n')
        (parent / "beside.txt").write_text("readable\n")
        ctx = replace(confined, hidden_paths=(str(hidden),))
        text = await run(
            ctx, f"cat {hidden}/config.toml; cat {parent}/beside.txt; cat /etc/hostname >/dev/null && echo etc-ok"
        )
    finally:
        shutil.rmtree(parent)
    assert "sk-in-config" not in text
    # bubblewrap shows an empty directory; Landlock refuses to read it
    assert ("No such file" in text) or ("Permission denied" in text)
    # everything else can still be read
    assert "readable" in text and "etc-ok" in text


async def test_hidden_paths_inside_the_writable_workspace_stay_hidden(confined: ToolContext, root: Path) -> None:
    """Workspace = home: Tether's config directory inside it is neither readable, listable,
    writable nor movable; what is beside it and its parents stays writable."""
    hidden = root / ".config" / "tether"
    hidden.mkdir(parents=True)
    (hidden / "config.toml").write_text('api_key = "sk-in-workspace"\n')
    (root / ".config" / "other").mkdir()
    (root / ".config" / "other" / "settings").write_text("a\n")
    (root / "notes.txt").write_text("a\n")
    (root / "src").mkdir()
    ctx = replace(confined, hidden_paths=(str(hidden),))
    text = await run(
        ctx,
        (
            "cat .config/tether/config.toml; ls -a .config/tether; echo 'base_url = \"http://evil\"' >> .config/tether/config.toml;"
            " mv .config .config2; mv .config/tether .config/t2; rm -rf .config/tether;"
            " echo b >> .config/other/settings && echo b >> notes.txt && echo x > src/new.txt && mkdir .config/other/d && echo wrote"
        ),
    )
    assert "sk-in-workspace" not in text, text
    if confined.command_sandbox.sandbox.name == "bwrap":  # type: ignore[union-attr]
        # an empty tmpfs; Landlock lists the names (a directory's listing right holds for
        # all beneath it, and `/` has it) but grants nothing on them
        assert "\nconfig.toml\n" not in text, text
    assert (hidden / "config.toml").read_text() == 'api_key = "sk-in-workspace"\n'
    assert (root / ".config" / "tether").is_dir() and not (root / ".config2").exists()
    assert "wrote" in text and (root / ".config" / "other" / "settings").read_text() == "a\nb\n"
    assert (root / "notes.txt").read_text() == "a\nb\n" and (root / "src" / "new.txt").exists()


async def test_a_config_file_beside_the_workspace_is_hidden_alone(
    confined: ToolContext, far_outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TETHER_CONFIG=~/tether.toml, workspace ~/proj: the file is hidden, not all of `~`
    (which would hold the workspace, so could not be hidden at all)."""
    from types import SimpleNamespace

    from tether.config import Settings
    from tether.services.turns import hidden_paths as _hidden_paths

    config = far_outside / "tether.toml"
    config.write_text('api_key = "sk-beside-the-workspace"\n')
    (far_outside / "beside.txt").write_text("readable\n")
    project = far_outside / "proj"
    project.mkdir()
    monkeypatch.setenv("TETHER_CONFIG", str(config))
    hidden = _hidden_paths(SimpleNamespace(settings=Settings(home=str(far_outside / "history"))))  # type: ignore[arg-type]
    assert hidden[:2] == (str(config), str(far_outside / "history"))  # then the MCP servers' own directories
    assert f"/tmp/tether-{os.getuid()}" in hidden  # the shared daemon's fallback runtime directory
    monkeypatch.setenv("TETHER_CONFIG", str(far_outside / "tether" / "config.toml"))
    assert _hidden_paths(SimpleNamespace(settings=Settings(home="")))[0] == str(far_outside / "tether")  # type: ignore[arg-type]
    ctx = replace(confined, sandbox=WorkspaceSandbox(project), hidden_paths=hidden)
    text = await run(ctx, f"cat {config}; cat {far_outside}/beside.txt; echo x > {config}; echo done")
    assert "sk-beside-the-workspace" not in text and "readable" in text and "done" in text, text
    assert config.read_text() == 'api_key = "sk-beside-the-workspace"\n'
    # inside the workspace too (workspace = the config's directory)
    ctx = replace(confined, sandbox=WorkspaceSandbox(far_outside), hidden_paths=hidden)
    text = await run(
        ctx,
        "cat tether.toml; echo x >> tether.toml; mv tether.toml t; rm -f tether.toml; echo b >> beside.txt; echo done",
    )
    assert "sk-beside-the-workspace" not in text and "done" in text, text
    assert config.read_text() == 'api_key = "sk-beside-the-workspace"\n'
    assert (far_outside / "beside.txt").read_text() == "readable\nb\n"


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
    return f'{sys.executable} -I -c "{code}"'


async def test_tcp_to_loopback_fails_without_the_network(confined: ToolContext, listener: Listener) -> None:
    result = await TOOL.call({"command": _connect(listener.port)}, confined)
    assert result.is_error and "connected" not in result.text
    assert listener.accepted == 0
    assert "probably blocked" in result.text and "the network" in result.text and "network_commands" in result.text


async def test_tcp_to_loopback_works_when_the_network_is_allowed(confined: ToolContext, listener: Listener) -> None:
    result = await TOOL.call({"command": _connect(listener.port)}, replace(confined, network=True))
    assert not result.is_error and result.text.startswith("connected\n"), result.text
    assert listener.accepted == 1


@pytest.fixture
def unix_listener(far_outside: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A unix socket a host service listens on (ssh-agent, docker.sock, D-Bus stand in)."""
    path = far_outside / "listen.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    got.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, got
    stop.set()
    thread.join()
    server.close()


def _unix_send(path: Path) -> str:
    code = (
        f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); s.send(b'hello'); print('sent')"
    )
    return f'{sys.executable} -I -c "{code}"'


async def test_unix_sockets_are_unreachable_without_the_network(
    confined: ToolContext, unix_listener: tuple[Path, list[bytes]]
) -> None:
    path, got = unix_listener
    result = await TOOL.call({"command": _unix_send(path)}, confined)
    assert result.is_error and "sent" not in result.text and "Operation not permitted" in result.text, result.text
    await anyio.sleep(0.3)
    assert got == []
    # a stream socket pair reaches nothing outside: allowed (asyncio, multiprocessing use them)
    pair = await run(
        confined,
        f"{sys.executable} -I -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'",
    )
    assert pair.startswith("b'x'\n"), pair


async def test_a_datagram_socket_pair_cannot_send_to_a_host_socket(confined: ToolContext, tmp_path: Path) -> None:
    # `sendto` a path from one end of an unconnected datagram pair reaches any filesystem
    # datagram socket it can see (syslog's /dev/log, journald): refused without the network
    import socket as sockets

    path = Path(tempfile.mkdtemp(prefix="tether-dgram-", dir="/var/tmp")) / "d.sock"
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_DGRAM)
    listener.bind(str(path))
    listener.settimeout(0.5)
    try:
        code = (
            "import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); "
            f"a.sendto(b'escape', {str(path)!r}); print('sent')"
        )
        result = await TOOL.call({"command": f'{sys.executable} -I -c "{code}"'}, confined)
        assert "sent" not in result.text and "Operation not permitted" in result.text, result.text
        with pytest.raises(TimeoutError):
            listener.recv(64)
    finally:
        listener.close()
        shutil.rmtree(path.parent)


async def test_unix_sockets_stay_unreachable_with_the_network(
    confined: ToolContext, unix_listener: tuple[Path, list[bytes]]
) -> None:
    # a command with the network (an `npm install`) must not reach Tether's own socket,
    # ssh-agent or docker.sock: only the sockets the user names (next test)
    path, got = unix_listener
    result = await TOOL.call({"command": _unix_send(path)}, replace(confined, network=True))
    assert result.is_error and "sent" not in result.text and "Operation not permitted" in result.text, result.text
    assert "allow_unix_sockets" in result.text, result.text  # the hint names the setting
    await anyio.sleep(0.3)
    assert got == []


async def test_a_named_unix_socket_is_reachable_with_the_network_under_bubblewrap_only(
    confined: ToolContext, unix_listener: tuple[Path, list[bytes]]
) -> None:
    path, got = unix_listener
    named = replace(confined, network=True, unix_sockets=(str(path),))
    result = await TOOL.call({"command": _unix_send(path)}, named)
    if (
        confined.command_sandbox is not None
        and confined.command_sandbox.sandbox is not None
        and confined.command_sandbox.sandbox.name == "landlock"
    ):
        # seccomp cannot tell one socket path from another, Landlock does not cover
        # connect(): refused, whatever is named (SPEC §11)
        assert result.is_error and "Operation not permitted" in result.text, result.text
        await anyio.sleep(0.3)
        assert got == []
        return
    assert not result.is_error and result.text.startswith("sent\n"), result.text
    end = time.monotonic() + 3
    while not got and time.monotonic() < end:
        await anyio.sleep(0.02)
    assert got == [b"hello"]
    # without the network, a named socket is as unreachable as any other
    alone = await TOOL.call({"command": _unix_send(path)}, replace(named, network=False))
    assert alone.is_error and "Operation not permitted" in alone.text, alone.text


async def test_udp_does_not_leave_without_the_network(confined: ToolContext) -> None:
    """Landlock's network rules cover TCP only: the seccomp filter refuses other inet
    sockets; bubblewrap's network namespace has its own loopback."""
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(0.5)
    port = server.getsockname()[1]
    code = f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', {port})); print('sent')"
    try:
        text = await run(confined, f'{sys.executable} -I -c "{code}"')
        with pytest.raises(TimeoutError):
            server.recvfrom(100)
        allowed = await run(replace(confined, network=True), f'{sys.executable} -I -c "{code}"')
        assert allowed.startswith("sent\n") and server.recvfrom(100)[0] == b"leak", allowed
    finally:
        server.close()
    if confined.command_sandbox.sandbox.name == "landlock":  # type: ignore[union-attr]
        assert "Operation not permitted" in text, text


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x32 system calls exist on x86_64 only")
async def test_the_socket_filter_cannot_be_sidestepped(confined: ToolContext) -> None:
    """io_uring could make sockets without `socket`; an x32 `socket` has another number."""
    uring = "import ctypes, os; r = ctypes.CDLL(None, use_errno=True).syscall(425, 1, ctypes.create_string_buffer(120)); print('uring', r, os.strerror(ctypes.get_errno()))"
    x32 = "import ctypes; ctypes.CDLL(None).syscall(0x40000000 | 41, 1, 1, 0); print('x32 ran')"
    text = await run(confined, f'{sys.executable} -I -c "{uring}"; {sys.executable} -I -c "{x32}"; echo status=$?')
    assert "uring -1 Operation not permitted" in text and "x32 ran" not in text and "status=159" in text, text  # SIGSYS
    allowed = await run(replace(confined, network=True), f'{sys.executable} -I -c "{x32}"; echo status=$?')
    # with the network too: an x32 `socket(AF_UNIX)` would reach Tether's own socket
    assert "x32 ran" not in allowed and "status=159" in allowed, allowed


async def test_a_command_with_a_nul_byte_is_refused_clearly(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="run_command: the command contains a NUL byte"):
        await TOOL.call({"command": "echo a\0b"}, ctx)


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
    text = await run(
        confined, "grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd|CapAmb)' /proc/self/status; chown 65534 f; echo chown=$?"
    )
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


async def test_killing_its_parent_does_not_let_a_setsid_child_outlive_the_call(
    confined: ToolContext, marker: str
) -> None:
    # the command's parent is the sandbox's keeper (bubblewrap's PID 1, the Landlock
    # launcher): killing it must not end the clean-up of what the command started
    await run(
        confined, f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & sleep 0.3; kill -9 $PPID; kill -9 1; echo done"
    )
    assert await _none_left(marker)


async def test_a_setsid_child_is_gone_when_the_call_is_cancelled(
    confined: ToolContext, marker: str, root: Path
) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(
            run, confined, f'echo "$TMPDIR" > tmpdir; setsid sleep {marker} > /dev/null 2>&1 & sleep {marker}'
        )
        end = time.monotonic() + 5
        while len(host_pids(marker)) < 2:
            assert time.monotonic() < end, "the command never started its sleeps"
            await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert await _none_left(marker)
    # the private temp dir went with it
    tmpdir = (root / "tmpdir").read_text().strip()
    assert "tether-cmd-" in tmpdir and not os.path.exists(tmpdir)


async def test_a_call_cancelled_while_its_sandbox_starts_leaves_no_process(confined: ToolContext, marker: str) -> None:
    # cancels land from the spawn itself to well after it: in the sandbox's first
    # milliseconds its inner process is in a session of its own and has not yet asked to
    # die with its parent, so killing the leader's group alone left the command running
    left = {}
    for step in range(40):
        sleep = f"{marker}{step:02d}"
        with anyio.move_on_after(step * 0.0008):
            await run(confined, f"sleep {sleep}")
        if not await _none_left(sleep, limit=2.0):
            left[step] = host_pids(sleep)
            for pid in left[step]:
                os.kill(pid, signal.SIGKILL)
    assert left == {}, "cancelled at these steps, the command went on running"


async def test_timeout_kills_everything_it_started(confined: ToolContext, marker: str) -> None:
    result = await TOOL.call({"command": f"setsid sleep {marker} & sleep {marker}", "timeout": 1}, confined)
    assert "killed after timeout" in result.text
    assert await _none_left(marker)


# ---- common tools --------------------------------------------------------------------------


async def test_git_works_inside(confined: ToolContext, root: Path) -> None:
    """A repository the command makes itself is writable (there was no `.git` to protect)."""
    text = await run(
        confined,
        "git init -q . && echo hi > a.txt && git add a.txt && "
        "git -c user.name=T -c user.email=t@example.com commit -q -m first && git status --short && git log --format=%s",
    )
    assert text.startswith("first\nexit code 0"), text


async def test_python_and_pytest_work_inside(confined: ToolContext, root: Path) -> None:
    (root / "test_tiny.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    text = await run(
        confined, f"python3 -c 'print(6 * 7)' && {sys.executable} -m pytest -q -p no:cacheprovider test_tiny.py"
    )
    assert text.startswith("42\n") and "1 passed" in text and "exit code 0" in text, text


async def test_npm_test_works_inside(confined: ToolContext, root: Path) -> None:
    (root / "package.json").write_text(
        '{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node -e \\"console.log(6 * 7)\\""}}\n'
    )
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
    result = await TOOL.call({"command": f"echo x > {target}; env"}, unconfined)
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
