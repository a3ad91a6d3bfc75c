"""A stand-in package registry for the network-by-domain tests: plain HTTP on the address
given, each request's line and headers appended as JSON to a log file."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

address, log_path = sys.argv[1], sys.argv[2]


class Registry(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        with open(log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "headers": dict(self.headers.items())}) + "\n")
        size = int(self.path.rpartition("/big/")[2] or 0) if "/big/" in self.path else 0
        body = b"registry ok " + self.path.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(size or len(body)))
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
open(log_path + ".ready", "w").close()
server.serve_forever()
