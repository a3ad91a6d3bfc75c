"""A stand-in package registry for the network-by-domain tests: plain HTTP on the address
given (and HTTPS on 443 with CERT and KEY when given), each request's line and headers
appended as JSON to a log file."""

from __future__ import annotations

import io
import json
import ssl
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

address, log_path = sys.argv[1], sys.argv[2]


def _wheel() -> bytes:
    """A minimal valid wheel of `demo` 1.0."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr("demo.py", "VALUE = 1\n")
        wheel.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wheel.writestr(
            "demo-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("demo-1.0.dist-info/RECORD", "")
    return buffer.getvalue()


class Registry(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        with open(log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "headers": dict(self.headers.items())}) + "\n")
        size = int(self.path.rpartition("/big/")[2] or 0) if "/big/" in self.path else 0
        body = b"registry ok " + self.path.encode() + b"\n"
        if self.path == "/simple/demo/":  # a package index page, as pip reads it
            body = b'<a href="/files/demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a>'
        elif self.path == "/files/demo-1.0-py3-none-any.whl":
            body = _wheel()
        self.send_response(200)
        self.send_header("Content-Length", str(size or len(body)))
        self.send_header(
            "Content-Type", "text/html" if self.path.startswith("/simple/") else "application/octet-stream"
        )
        self.end_headers()
        if not size:
            self.wfile.write(body)
            return
        chunk = b"x" * 65536
        for _ in range(size // len(chunk)):
            self.wfile.write(chunk)
        self.wfile.write(b"x" * (size % len(chunk)))

    def log_message(self, *args: object) -> None:
        pass


server = ThreadingHTTPServer((address, 80), Registry)
if len(sys.argv) > 4:
    secure = ThreadingHTTPServer((address, 443), Registry)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    threading.Thread(target=secure.serve_forever, daemon=True).start()
open(log_path + ".ready", "w").close()
server.serve_forever()
