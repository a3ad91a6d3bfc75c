"""The thin proxy every shared `tether serve|acp` process is: stdio <-> the daemon's socket.

Owns: whether this `serve`/`acp` is shared (flags, `TETHER_SHARED`, the USER config), the daemon's
key, its private runtime directory, socket, lock and log, starting it (one per key, under a lock),
the preamble line and the relay (docs/decisions/0016). Must not: import beyond the standard library
and `tether.__version__` (every window runs it), parse a message, or put its environment on the socket.
"""

from __future__ import annotations

import _socket  # `socket` imports enum, selectors and more: ~6 ms of a window's start
import os
import sys

TYPE_CHECKING = False  # `typing` costs ~15-30 ms at import
if TYPE_CHECKING:
    from collections.abc import Mapping

    Env = Mapping[str, str]
    Socket = _socket.socket

PREAMBLE = b"TETHER-SHARED/1 "
# Every environment variable the daemon's settings (and its provider choice) read:
# a window whose values differ gets a daemon of its own, never another window's keys.
SETTINGS_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
_VALUE_FLAGS = (
    "--provider",
    "--model",
    "--base-url",
    "--script",
    "--max-steps",
    "--mode",
    "--home",
    "--log-level",
    "--max-retries",
    "--record",
    "--cassette",
)
_PATH_FLAGS = ("--script", "--home", "--record", "--cassette")
_START_WAIT_S = 15.0


class ProxyError(Exception):
    """The daemon could not be reached or started (the message says why and what to do)."""


# ------------------------------------------------------------------------ decision


def wanted(words: list[str], env: Env) -> bool:
    """Whether `tether <words>` runs through the shared daemon."""
    if not words or words[0] not in ("serve", "acp"):
        return False
    if "--no-shared" in words:
        return False
    if "--shared" in words:
        return True
    raw = env.get("TETHER_SHARED", "").strip().lower()
    if raw:
        return raw in ("1", "true", "on", "yes")
    return _user_config_shared(env)


def user_config_file(env: Env) -> str:
    """The user config's path, as `tether.config.user_config_path` finds it."""
    explicit = env.get("TETHER_CONFIG", "")
    if explicit:
        return os.path.abspath(os.path.expanduser(str(explicit)))
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "tether", "config.toml")


def _user_config_shared(env: Env) -> bool:
    path = user_config_file(env)
    try:
        with open(path, "rb") as file:
            data = file.read(1 << 20)
    except OSError:
        return False
    if b"shared" not in data:
        return False
    import tomllib

    try:
        return tomllib.loads(data.decode("utf-8")).get("shared") is True
    except (ValueError, UnicodeDecodeError):
        return False  # the daemon's own start reports the broken file


# ------------------------------------------------------------------------ the command


def split_args(words: list[str]) -> tuple[list[str], str, str | None]:
    """(the daemon's setting flags, with paths made absolute; the workspace; the framing)."""
    flags: list[str] = []
    workspace = os.getcwd()
    framing: str | None = "ndjson" if words[0] == "acp" else None
    rest = iter(words[1:])
    for word in rest:
        name, eq, value = word.partition("=")
        if name in ("--workspace", "-w", "--framing", *_VALUE_FLAGS) and not eq:
            value = next(rest, "")
        if name in ("--workspace", "-w"):
            workspace = os.path.abspath(value)
        elif name == "--framing":
            framing = None if value == "auto" else value
        elif name in _VALUE_FLAGS:
            flags += [name, os.path.abspath(value) if name in _PATH_FLAGS else value]
    return flags, os.path.realpath(workspace), framing


def daemon_key(flags: list[str], env: Env) -> str:
    """Which daemon serves these settings: the same inputs, the same daemon."""
    try:  # the C module alone: hashlib imports OpenSSL's (~3 ms)
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha256

    from tether import __version__

    config = user_config_file(env)
    try:
        info = os.stat(config)
        stamp = f"{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        stamp = "-"
    names = sorted(k for k in env if k.startswith("TETHER_") and k != "TETHER_SHARED") + list(SETTINGS_ENV)
    python = (os.path.realpath(sys.executable), sys.prefix)  # python and python3 of one venv: one daemon
    parts = [__version__, *python, config, stamp, *flags, *(f"{k}={env.get(k, '')}" for k in names)]
    return str(sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:16])


class RuntimeDirError(ProxyError):
    """The runtime directory is not a private directory of the user's: no shared daemon."""


def runtime_dirs(env: Env) -> list[str]:
    """Every directory a shared daemon's socket may be in, whether it exists or not: the
    sandbox hides them all from commands (registry.private_paths)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    found = [os.path.join(base, "tether")] if base and os.path.isabs(base) else []
    return [*found, f"/tmp/tether-{os.getuid()}"]


def runtime_dir(env: Env) -> str:
    """`$XDG_RUNTIME_DIR/tether` (else `/tmp/tether-<uid>`), ours and 0700, made if missing.
    /tmp is everyone's: another user may have made that name first (a directory of theirs,
    one we may write, or a link), so it is used only when it is ours, mode 0700 and not a
    link; otherwise `RuntimeDirError` says why (the window then runs its own daemon)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    if not (base and os.path.isabs(base) and os.path.isdir(base)):
        base, name = "/tmp", f"tether-{os.getuid()}"
    else:
        name = "tether"
    path = os.path.join(base, name)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise RuntimeDirError(
            f"cannot make {path} ({exc.strerror}); set XDG_RUNTIME_DIR to a directory only you can use"
        ) from None
    info = os.lstat(path)
    import stat

    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        why = "a link" if stat.S_ISLNK(info.st_mode) else "not a directory"
    elif info.st_uid != os.getuid():
        why = f"owned by uid {info.st_uid}, not you (uid {os.getuid()})"
    elif info.st_mode & 0o077:
        why = f"mode {stat.S_IMODE(info.st_mode):04o}, open to others"
    else:
        return path
    raise RuntimeDirError(
        f"{path} is not a private directory of yours ({why}; it must be yours, mode 0700, not a link): "
        f"remove it, or set XDG_RUNTIME_DIR to a directory only you can use"
    )


def state_dir(env: Env) -> str:
    base = env.get("XDG_STATE_HOME", "")
    if not (base and os.path.isabs(base)):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    path = os.path.join(base, "tether")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


# ------------------------------------------------------------------------ connecting


def _connect(path: str) -> Socket | None:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def connect_or_start(flags: list[str], env: Env) -> Socket:
    """A connection to the daemon for these settings, started first when none listens."""
    key = daemon_key(flags, env)
    path = os.path.join(runtime_dir(env), f"daemon-{key}.sock")
    sock = _connect(path)
    if sock is not None:
        return sock
    import fcntl

    lock = os.open(path[: -len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one window starts it; the others wait, then connect
        sock = _connect(path)
        if sock is None:
            sock = _start(path, key, flags, env)
    finally:
        os.close(lock)
    return sock


def _start(path: str, key: str, flags: list[str], env: Env) -> Socket:
    import subprocess
    import time

    try:  # noqa: SIM105 (contextlib is not loaded by a window's proxy: it starts with few modules)
        os.unlink(path)  # a crashed daemon's socket: nobody listens on it (we hold the lock)
    except FileNotFoundError:
        pass
    log_path = os.path.join(state_dir(env), f"shared-daemon-{key}.log")
    with open(log_path, "ab") as log:
        os.chmod(log_path, 0o600)
        child = subprocess.Popen(
            # -P: the cwd (the window's workspace) is not put on sys.path, so a repository's
            # `tomllib.py` or `aiosqlite.py` is never imported in place of the real module
            [sys.executable, "-P", "-m", "tether.shared.daemon", "--socket", path, *flags],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        sock = _connect(path)
        if sock is not None:
            return sock
        if child.poll() is not None:
            raise ProxyError(f"the shared daemon exited at start ({child.returncode}); its log: {log_path}")
        time.sleep(0.005)
    raise ProxyError(f"the shared daemon did not listen within {_START_WAIT_S:.0f} s; its log: {log_path}")


# ------------------------------------------------------------------------ relaying


def preamble(workspace: str, framing: str | None) -> bytes:
    """The line a connection opens with: the workspace (its path's bytes, in hex: any path,
    no JSON encoder to import) and the framing the window fixed ("-": detect it)."""
    return b"%s%s %s\n" % (PREAMBLE, os.fsencode(workspace).hex().encode(), (framing or "-").encode())


def read_preamble(line: bytes) -> tuple[str, str | None] | None:
    """(workspace, framing) of a preamble line (without its newline); None if it is not one."""
    if not line.startswith(PREAMBLE):
        return None
    words = line[len(PREAMBLE) :].split(b" ")
    if len(words) != 2 or words[1] not in (b"-", b"lsp", b"ndjson"):
        return None
    try:
        root = os.fsdecode(bytes.fromhex(words[0].decode("ascii")))
    except (ValueError, UnicodeDecodeError):
        return None
    return root, None if words[1] == b"-" else words[1].decode()


def relay(sock: Socket, read_fd: int = 0, write_fd: int = 1) -> int:
    """Copy stdin to the socket and the socket to stdout until the daemon closes it."""
    import select

    poll = select.poll()
    poll.register(read_fd, select.POLLIN)
    poll.register(sock.fileno(), select.POLLIN)
    while True:
        for fd, _event in poll.poll():
            if fd == read_fd:
                data = os.read(read_fd, 1 << 16)
                if data:
                    sock.sendall(data)
                    continue
                poll.unregister(read_fd)  # the editor closed stdin: the daemon sees EOF
                sock.shutdown(_socket.SHUT_WR)
            else:
                data = sock.recv(1 << 16)
                if not data:
                    return 0
                view = memoryview(data)
                while view:
                    view = view[os.write(write_fd, view) :]


def main(words: list[str]) -> int | None:
    """Relay this window to the shared daemon; None: it runs its own daemon instead (the
    shared one's directory cannot be trusted, and stderr says why)."""
    env = os.environ
    flags, workspace, framing = split_args(words)
    try:
        sock = connect_or_start(flags, env)
    except RuntimeDirError as exc:
        print(f"tether: not shared: {exc}; this window runs its own daemon", file=sys.stderr)
        return None
    try:
        sock.sendall(preamble(workspace, framing))
        return relay(sock)
    except ProxyError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    except (BrokenPipeError, ConnectionResetError):
        return 0
    except KeyboardInterrupt:
        return 130
