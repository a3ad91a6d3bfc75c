"""TLS interception for hosts that have a credential (`credentials`), and nothing else.

Owns: the daemon's own CA (made with `openssl`, kept in the runtime directory), a cached
certificate per intercepted host, the trust bundle a command gets, and the server-side
TLS context. Must not: intercept a host without a credential, or let the CA's key into a
sandbox.
"""

from __future__ import annotations

import atexit
import os
import shutil
import ssl
import subprocess
import tempfile
import threading

__all__ = ["Interceptor", "interceptor"]

_DAYS = "7"
_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class Interceptor:
    """The CA and the per-host contexts; thread-safe (certificates are made off the loop)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._openssl = shutil.which("openssl", path="/usr/bin:/bin")
        self.bundle = os.path.join(directory, "bundle.pem")
        self._ca, self._key = os.path.join(directory, "ca.pem"), os.path.join(directory, "ca.key")

    def ensure_bundle(self) -> str:
        """The trust bundle's path (the CA made first when missing)."""
        with self._lock:
            if not os.path.exists(self.bundle):
                self._run(
                    [
                        "req",
                        "-x509",
                        *_EC,
                        "-keyout",
                        self._key,
                        "-out",
                        self._ca,
                        "-days",
                        _DAYS,
                        "-subj",
                        "/CN=Tether network proxy (this daemon only)",
                        "-addext",
                        "basicConstraints=critical,CA:TRUE",
                        "-addext",
                        "keyUsage=critical,keyCertSign",
                    ]
                )
                system = ssl.get_default_verify_paths().cafile
                parts = [_read(system)] if system and os.path.isfile(system) else []
                with open(self.bundle, "wb") as out:
                    out.write(b"\n".join([*parts, _read(self._ca)]))
            return self.bundle

    def server_context(self, host: str) -> ssl.SSLContext:
        self.ensure_bundle()
        with self._lock:
            context = self._contexts.get(host)
            if context is None:
                cert, key = (
                    os.path.join(self.directory, f"host-{len(self._contexts)}.{ext}") for ext in ("pem", "key")
                )
                self._run(
                    [
                        "req",
                        "-x509",
                        "-CA",
                        self._ca,
                        "-CAkey",
                        self._key,
                        *_EC,
                        "-keyout",
                        key,
                        "-out",
                        cert,
                        "-days",
                        _DAYS,
                        "-subj",
                        f"/CN={host}",
                        "-addext",
                        f"subjectAltName=DNS:{host}",
                        "-addext",
                        "basicConstraints=critical,CA:FALSE",
                    ]
                )
                context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
                context.load_cert_chain(cert, key)
                self._contexts[host] = context
            return context

    def _run(self, args: list[str]) -> None:
        if self._openssl is None:
            raise OSError("openssl is not installed: HTTPS credentials cannot be injected")
        done = subprocess.run([self._openssl, *args], capture_output=True, stdin=subprocess.DEVNULL, timeout=30)
        if done.returncode != 0:
            raise OSError(f"openssl failed: {done.stderr.decode(errors='replace').strip()[-300:]}")


_made: list[Interceptor] = []


def interceptor() -> Interceptor:
    """The daemon's one interceptor (its directory made on first use)."""
    if not _made:
        from tether.shared.proxy import runtime_dir

        directory = tempfile.mkdtemp(prefix="tls-", dir=runtime_dir(os.environ))
        atexit.register(shutil.rmtree, directory, True)
        _made.append(Interceptor(directory))
    return _made[0]


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()
