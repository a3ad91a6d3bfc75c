"""The Landlock launcher: confines itself, then runs one command and everything it starts.

Run as `python -I -S landlock_launch.py [--write DIR]... [--hide DIR]... [--net] -- ARGV...` (the daemon
builds this line in landlock.py). Standard library only, and only cheap parts of it: it
starts for every command.

Owns, in this order: becoming a child subreaper (orphans stay in its tree), dying with the
daemon (SIGTERM on its parent's death), securebits that make uid 0 an ordinary user,
dropping every capability (bounding set, ambient, then capset to zero), no_new_privs
(so setuid and file capabilities grant nothing), one Landlock ruleset (read and execute
everywhere but under the `--hide` directories, write only under the `--write` directories
and a few devices; TCP bind and
connect denied unless `--net` (ABI >= 4); signals and abstract unix sockets scoped to the
sandbox (ABI >= 6)); then running ARGV, waiting for it, killing every descendant left
(also when told to stop) and exiting with ARGV's status (killed by a signal: the same
signal).
Must not: import anything from Tether (it runs without site-packages), or run ARGV when
any step fails (exit 125 with the reason on stderr).

Landlock only grants: to hide a directory, read rights go to each sibling of it and of
its parents, as they are when the command starts (an entry created later next to one of
them cannot be read), and its parents can still be listed. It cannot make one file inside
a writable directory read-only (`.git/hooks` stays writable), or restrict UDP and other
non-TCP sockets.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # same on x86_64 and aarch64
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER = 1, 38, 36
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_PR_SET_SECUREBITS = 28
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
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        # EINVAL/EPERM: not ours to drop (an unprivileged user's set is empty anyway)
        _libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "dropping capabilities")
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, "setting no_new_privs")


def _readable(hidden: list[str]) -> list[tuple[str, int]]:
    """Read rules for the whole filesystem except the `hidden` directories: "/" itself
    when nothing is hidden; otherwise each entry beside the path down to each hidden
    directory, and the directories on that path listable only."""
    hidden = [os.path.realpath(path) for path in hidden if os.path.isdir(path)]
    rules: list[tuple[str, int]] = []

    def walk(directory: str) -> None:
        inside = [h for h in hidden if h == directory or h.startswith(directory.rstrip("/") + "/")]
        if not inside:
            rules.append((directory, _READ))
            return
        if directory in inside:
            return  # hidden: no rights at all
        rules.append((directory, _READ_DIR | _EXECUTE))
        try:
            names = os.listdir(directory)
        except OSError:
            return
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                continue  # a rule would hold its target (maybe a parent); the target's own rules apply
            if os.path.isdir(path):
                walk(path)
            else:
                rules.append((path, _EXECUTE | _READ_FILE))

    walk("/")
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
    ruleset = _check(_libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)), "creating the Landlock ruleset")
    file_rights = _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)
    rules = _readable(hidden) + [(path, fs & ~_IOCTL_DEV) for path in writable]
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
            _check(_libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)), f"adding the rule for {path}")
        finally:
            os.close(fd)
    _check(_libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "applying the Landlock ruleset")
    os.close(ruleset)
    return abi


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
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
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


def _parse(argv: list[str]) -> tuple[list[str], list[str], bool, list[str]]:
    writable: list[str] = []
    hidden: list[str] = []
    network = False
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("--write", "--hide") and i + 1 < len(argv):
            (writable if argv[i] == "--write" else hidden).append(argv[i + 1])
            i += 2
        elif argv[i] == "--net":
            network, i = True, i + 1
        else:
            raise LaunchError(f"unknown argument {argv[i]!r}")
    command = argv[i + 1 :]
    if not command:
        raise LaunchError("no command given")
    return writable, hidden, network, command


def main(argv: list[str]) -> int:
    try:
        writable, hidden, network, command = _parse(argv)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, "becoming a child subreaper")
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, "dying with the daemon")
        _drop_privileges()
        _restrict(writable, hidden, network)
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
        try:
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(signum, signal.SIG_DFL)
            _libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), 0, 0, 0)
            os.execvp(command[0], command)
        except OSError as error:
            sys.stderr.write(f"tether sandbox (landlock): cannot run {command[0]}: {error}\n")
        os._exit(127)
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
