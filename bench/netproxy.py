"""Issue 35: what the allowlist proxy costs (bench/RESULTS.md "Issue 35: network by domain").

Run as root: `python bench/netproxy.py` re-runs itself in a fresh network and mount
namespace (loopback holding 93.184.216.34, which exists only there: nothing leaves the
machine). In one run, side by side:
- per connection: CONNECT through the real path (a bubblewrap command -> bridge.py ->
  unix socket -> the daemon-side proxy -> the server) vs a direct loopback connect from
  the same client outside the sandbox; each a connect, one small GET, its answer;
- a 100 MB download through the proxy (plain HTTP) vs direct;
- the start of a sandboxed `true`, with and without the proxy (its socket, its serving
  task and the bridge) — as run_command pays it.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio

ADDRESS = "93.184.216.34"
SIZE = 100 * 1024 * 1024
CONNECTIONS = 200
STARTS = 20

CLIENT = r"""
import json, os, socket, sys, time
address, mode, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
proxy = os.environ.get("HTTP_PROXY", "").rsplit(":", 1)
def connection():
    if mode == "direct":
        return socket.create_connection((address, 80))
    s = socket.create_connection(("127.0.0.1", int(proxy[1])))
    s.sendall(f"CONNECT {address}:80 HTTP/1.1\r\n\r\n".encode())
    assert s.recv(4096).startswith(b"HTTP/1.1 200")
    return s
def fetch(s, path, request_path):
    s.sendall(f"GET {request_path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n".encode())
    got = 0
    while chunk := s.recv(1 << 20):
        got += len(chunk)
    return got
times = []
for _ in range(count):
    start = time.perf_counter()
    with connection() as s:
        fetch(s, "/small", "/small")
    times.append(time.perf_counter() - start)
start = time.perf_counter()
if mode == "direct":
    with socket.create_connection((address, 80)) as s:
        got = fetch(s, "/big", f"/big/{size}")
else:
    with socket.create_connection(("127.0.0.1", int(proxy[1]))) as s:
        got = fetch(s, "/big", f"http://{address}/big/{size}")
print(json.dumps({"times": times, "big_s": time.perf_counter() - start, "big_bytes": got}))
"""


class _Server(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        size = int(self.path.rpartition("/big/")[2]) if "/big/" in self.path else 2
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk = b"x" * (1 << 20)
        while size > 0:
            self.wfile.write(chunk[: min(size, len(chunk))])
            size -= len(chunk)

    def log_message(self, *args: object) -> None:
        pass


async def _in_sandbox(argv: list[str], proxied: bool) -> tuple[float, str]:
    from tether.netproxy.proxy import ProxyRules
    from tether.netproxy.serving import command_proxy
    from tether.sandbox import SandboxPolicy, choose_sandbox

    sandbox = choose_sandbox("bwrap").sandbox
    assert sandbox is not None
    workspace = tempfile.mkdtemp()
    start = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        path = (await stack.enter_async_context(command_proxy(ProxyRules((ADDRESS,)))))[0] if proxied else None
        policy = SandboxPolicy(workspace=workspace, tmpdir=None, cwd=workspace, proxy_socket=path)
        line, fds = sandbox.prepare(argv, policy)
        done = await anyio.run_process(line, pass_fds=fds, check=True, env={"PATH": "/usr/bin:/bin"})
        for fd in fds:
            os.close(fd)
    return time.perf_counter() - start, done.stdout.decode()


def _ms(values: list[float]) -> str:
    return (
        f"median {statistics.median(values) * 1000:.2f} ms, p90 {sorted(values)[int(len(values) * 0.9)] * 1000:.2f} ms"
    )


async def _main() -> None:
    server = ThreadingHTTPServer((ADDRESS, 80), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    script = [sys.executable, "-I", "-c", CLIENT, ADDRESS]
    direct = json.loads(
        subprocess.run([*script, "direct", str(CONNECTIONS), str(SIZE)], capture_output=True, check=True).stdout
    )
    _, out = await _in_sandbox(
        ["/usr/bin/python3", "-I", "-c", CLIENT, ADDRESS, "proxy", str(CONNECTIONS), str(SIZE)], proxied=True
    )
    proxied = json.loads(out)
    assert direct["big_bytes"] >= SIZE and proxied["big_bytes"] >= SIZE
    plain = [(await _in_sandbox(["/bin/true"], proxied=False))[0] for _ in range(STARTS)]
    with_proxy = [(await _in_sandbox(["/bin/true"], proxied=True))[0] for _ in range(STARTS)]
    print(f"per connection (connect + small GET), {CONNECTIONS} each:")
    print(f"  direct loopback:            {_ms(direct['times'])}")
    print(f"  through bridge + proxy:     {_ms(proxied['times'])}")
    print(
        f"100 MB download: direct {SIZE / direct['big_s'] / 1e6:.0f} MB/s, "
        f"through the proxy {SIZE / proxied['big_s'] / 1e6:.0f} MB/s"
    )
    print(f"sandboxed `true`, {STARTS} each: without proxy {_ms(plain)}; with proxy {_ms(with_proxy)}")


if __name__ == "__main__":
    if os.environ.get("NETPROXY_BENCH_INSIDE") != "1":
        setup = f'ip link set lo up && ip addr add {ADDRESS}/32 dev lo && exec "$@"'
        os.execvp(
            "unshare",
            [
                "unshare",
                "--net",
                "--mount",
                "--",
                "sh",
                "-c",
                setup,
                "sh",
                "env",
                "NETPROXY_BENCH_INSIDE=1",
                sys.executable,
                *sys.argv,
            ],
        )
    anyio.run(_main)
