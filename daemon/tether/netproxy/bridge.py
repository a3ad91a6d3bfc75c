"""The in-sandbox bridge: a loopback port forwarded to the proxy's unix socket.

Owns: listening on the namespace's loopback, forking ARGV with the proxy variables and a
seccomp socket filter, relaying each connection to SOCKET, and exiting with ARGV's status
(docs/decisions/0013-netproxy.md). Must not: import anything from Tether, or run ARGV
when a step fails (exit 125).
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
import threading

_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 4, 38, 22, 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def proxy_env(port: int) -> dict[str, str]:
    url = f"http://127.0.0.1:{port}"
    env = {
        name: url
        for name in (
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
            "YARN_HTTP_PROXY",
            "YARN_HTTPS_PROXY",
        )
    }
    env.update(
        {
            "NO_PROXY": "",
            "no_proxy": "",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.proxy",
            "GIT_CONFIG_VALUE_0": url,
        }
    )
    return env


def _install_filter(program: bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _relay(client: socket.socket, path: str) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as proxy:
        try:
            proxy.connect(path)
        except OSError:
            return
        back = threading.Thread(target=_pump, args=(proxy, client), daemon=True)
        back.start()
        _pump(client, proxy)
        back.join()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def bundle_env(bundle: str) -> dict[str, str]:
    """The trust bundle with the daemon's CA, for every common client."""
    names = (
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO",
        "PIP_CERT",
        "NODE_EXTRA_CA_CERTS",
    )
    return dict.fromkeys(names, bundle)


def main(args: list[str]) -> int:
    split = args.index("--") if "--" in args else -1
    if split not in (2, 3) or len(args) <= split + 1:
        sys.stderr.write("usage: bridge.py SOCKET SECCOMP_HEX [BUNDLE] -- ARGV...\n")
        return 125
    path, program, argv = args[0], bytes.fromhex(args[1]), args[split + 1 :]
    if split == 3:
        os.environ.update(bundle_env(args[2]))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    os.environ.update(proxy_env(listener.getsockname()[1]))
    # before the fork: never a moment when the command runs and the bridge is traceable
    # (exec makes the command itself dumpable again)
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        try:
            listener.close()
            _install_filter(program)
            os.execvp(argv[0], argv)
        except OSError as error:
            sys.stderr.write(f"tether bridge: {argv[0]}: {error}\n")
            os._exit(127 if isinstance(error, FileNotFoundError) else 125)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's output pipe must close when the command is done
        os.dup2(null, fd)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
