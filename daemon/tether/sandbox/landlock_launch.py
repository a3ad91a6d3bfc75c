"""The Landlock launcher: `[--write DIR]... [--hide PATH]... (--net | --seccomp HEX) -- ARGV...`, one command.

Owns: becoming a subreaper that dies with the daemon, dropping privileges, then in the forked child one
Landlock ruleset, the socket filter and ARGV (`--unconfined -- ARGV`: none of the three, the sandbox off);
waiting, killing every descendant left, exiting with ARGV's status. Landlock: docs/decisions/0003-sandbox.md.
Must not: import anything from Tether or beyond cheap stdlib, or run ARGV when a step fails (exit 125).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # same on x86_64 and aarch64
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER = 1, 38, 36
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_PR_SET_SECUREBITS = 28
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE and their locks
_SECUREBITS = 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x40 | 0x80
_CAP_VERSION_3 = 0x20080522

# filesystem rights, by the ABI that introduced them
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_BIND_TCP, _CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class LaunchError(Exception):
    pass


def _check(result: int, what: str) -> int:
    if result < 0:
        raise LaunchError(f"{what}: {os.strerror(ctypes.get_errno())}")
    return result


def _prctl(option: int, arg: int, what: str) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), what)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none)."""
    got = _libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(0, int(got))


def _drop_privileges() -> None:
    privileged = os.geteuid() == 0
    if privileged:
        _prctl(_PR_SET_SECUREBITS, _SECUREBITS, "setting securebits")
    with open("/proc/sys/kernel/cap_last_cap") as file:
        last = int(file.read())
    for cap in range(last + 1):
        # EINVAL/EPERM: not ours to drop (an unprivileged user's set is empty anyway)
        _libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "dropping capabilities")
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, "setting no_new_privs")


def _grant(top: str, rights: int, hidden: list[str], passing: int, rules: list[tuple[str, int]]) -> None:
    """`rights` for `top` and everything beneath it but the `hidden` paths: one rule for
    `top` when none is beneath it; otherwise `rights` for each entry beside the path down
    to each hidden path, and `passing` for the directories on that path (a right on a
    directory holds for all beneath it, so they get nothing more)."""

    def walk(directory: str) -> None:
        inside = [h for h in hidden if h == directory or h.startswith(directory.rstrip("/") + "/")]
        if not inside:
            rules.append((directory, rights))
            return
        if directory in inside:
            return  # hidden: no rights of its own (its names stay listable: a parent's right holds beneath)
        if passing:
            rules.append((directory, passing))
        try:
            names = os.listdir(directory)
        except OSError:
            return
        for name in names:
            path = os.path.join(directory, name)
            if path in hidden or os.path.islink(path):
                continue  # a link's rule would hold its target (maybe a parent); the target's own rules apply
            if os.path.isdir(path):
                walk(path)
            else:
                rules.append((path, rights))  # a file's rule is cut to file rights later

    walk(top)


def _rules(writable: list[str], hidden: list[str], write: int) -> list[tuple[str, int]]:
    """Read rights everywhere and `write` rights under the `writable` trees, except the
    `hidden` paths (directories or files), even when they are inside a writable tree."""
    hidden = [os.path.realpath(path) for path in hidden if os.path.lexists(path)]
    rules: list[tuple[str, int]] = []
    _grant("/", _READ, hidden, _READ_DIR | _EXECUTE, rules)
    for tree in writable:
        _grant(os.path.realpath(tree), write, hidden, 0, rules)
    return rules


def _restrict(writable: list[str], hidden: list[str], network: bool) -> int:
    abi = abi_version()
    if abi < 1:
        raise LaunchError("Landlock is not available in this kernel")
    fs = _FS_ABI1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)
    net = 0 if network or abi < 4 else _BIND_TCP | _CONNECT_TCP
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _check(
        _libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "creating the Landlock ruleset",
    )
    file_rights = _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)
    rules = _rules(writable, hidden, fs & ~_IOCTL_DEV)
    rules += [(device, file_rights) for device in _DEVICES if os.path.exists(device)]
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # gone since it was listed
        if not os.path.isdir(path):  # a file's rule may hold only file rights
            rights &= _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
        try:
            rule = _PathBeneath(rights & fs, fd)
            _check(
                _libc.syscall(
                    _SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)
                ),
                f"adding the rule for {path}",
            )
        finally:
            os.close(fd)
    _check(_libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "applying the Landlock ruleset")
    os.close(ruleset)
    return abi


def _install_socket_filter(program: bytes) -> None:
    """The seccomp socket filter the daemon built (seccomp.py), after no_new_privs."""
    if not program or len(program) % 8:
        raise LaunchError("the seccomp socket filter is malformed")
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(code))
    _check(
        _libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0),
        "installing the seccomp socket filter",
    )


def _descendants() -> list[int]:
    """Every process below this one (orphans of our tree are reparented to us)."""
    me = os.getpid()
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] != b"Z":
            parents[int(name)] = int(fields[1])
    found: list[int] = []
    for pid in parents:
        seen, up = 0, parents.get(pid)
        while up is not None and up > 1 and seen < 64:
            if up == me:
                found.append(pid)
                break
            up, seen = parents.get(up), seen + 1
    return found


def _kill_all() -> None:
    for _ in range(100):
        pids = _descendants()
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _parse(argv: list[str]) -> tuple[list[str], list[str], bool, bytes, list[str]]:
    writable: list[str] = []
    hidden: list[str] = []
    network = False
    program = b""
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("--write", "--hide") and i + 1 < len(argv):
            (writable if argv[i] == "--write" else hidden).append(argv[i + 1])
            i += 2
        elif argv[i] == "--seccomp" and i + 1 < len(argv):
            try:
                program = bytes.fromhex(argv[i + 1])
            except ValueError:
                raise LaunchError("--seccomp takes the filter in hex") from None
            i += 2
        elif argv[i] == "--net":
            network, i = True, i + 1
        else:
            raise LaunchError(f"unknown argument {argv[i]!r}")
    command = argv[i + 1 :]
    if not command:
        raise LaunchError("no command given")
    if not network and not program:
        raise LaunchError("no network and no --seccomp socket filter")
    return writable, hidden, network, program, command


def _exec(
    command: list[str], writable: list[str], hidden: list[str], network: bool, program: bytes, unconfined: bool
) -> None:
    """In the forked child: the default signals, death with the launcher, the confinement
    (none when `unconfined`), then ARGV; never returns."""
    # Only the command is confined, not this launcher: with Landlock's signal scope a
    # process in the domain cannot signal one outside it, so the command cannot kill
    # the launcher to escape its clean-up (`setsid` children would outlive the call).
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    _libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), 0, 0, 0)
    try:
        if not unconfined:
            _restrict(writable, hidden, network)
        if program:
            _install_socket_filter(program)
    except (LaunchError, OSError) as error:
        sys.stderr.write(f"tether sandbox (landlock): {error}; the command was not run\n")
        os._exit(125)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"tether sandbox (landlock): cannot run {command[0]}: {error}\n")
    os._exit(127)


def main(argv: list[str]) -> int:
    # `--unconfined -- ARGV` (the sandbox is off): no Landlock, filter or dropped privileges,
    # only the clean-up, so a double-forked or `setsid` child still dies with the call
    unconfined = argv[:2] == ["--unconfined", "--"] and len(argv) > 2
    try:
        writable, hidden, network, program, command = ([], [], True, b"", argv[2:]) if unconfined else _parse(argv)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, "becoming a child subreaper")
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, "dying with the daemon")
        if not unconfined:
            _drop_privileges()
    except (LaunchError, OSError) as error:
        sys.stderr.write(f"tether sandbox (landlock): {error}; the command was not run\n")
        return 125

    def stop(signum: int, _frame: object) -> None:
        _kill_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    child = os.fork()
    if child == 0:
        _exec(command, writable, hidden, network, program, unconfined)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 125
        except InterruptedError:
            continue
        if pid == child:
            break
    _kill_all()
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
