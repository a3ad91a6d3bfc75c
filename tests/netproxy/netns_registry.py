"""A network namespace per test for the network-by-domain tests (helpers; conftest.py
holds the fixture): loopback holding
93.184.216.34/32 too (it exists only inside), /etc/hosts bind-mounted with the
test names, and registry_server.py on that address. Nothing leaves the machine: the
namespace has no route anywhere else, and its own PID namespace ends the registry with
the daemon."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REGISTRY = "93.184.216.34"
HOSTS = (
    f"127.0.0.1 localhost\n{REGISTRY} registry.test\n{REGISTRY} other.test\n{REGISTRY} always.test\n127.0.0.1 loopback.test\n"
    "169.254.169.254 metadata.test\n10.1.2.3 lan.test\n::ffff:127.0.0.1 mapped.test\n"
)


def make_certificates(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A test CA and a certificate it signed for registry.test and other.test: (ca, cert, key)."""
    ca, ca_key, cert, key = (tmp_path / name for name in ("ca.pem", "ca.key", "server.pem", "server.key"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            *ec,
            "-keyout",
            ca_key,
            "-out",
            ca,
            "-days",
            "2",
            "-subj",
            "/CN=test registry CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-CA",
            ca,
            "-CAkey",
            ca_key,
            *ec,
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "2",
            "-subj",
            "/CN=registry.test",
            "-addext",
            "subjectAltName=DNS:registry.test,DNS:other.test",
        ],
        check=True,
        capture_output=True,
    )
    return ca, cert, key


def namespaced(tmp_path: Path, command: list[str], tls: tuple[Path, Path] | None = None) -> tuple[list[str], Path]:
    """`command` run in a fresh network and mount namespace with the registry up; the
    registry's request log."""
    hosts, log = tmp_path / "hosts", tmp_path / "registry.log"
    hosts.write_text(HOSTS)
    server = Path(__file__).with_name("registry_server.py")
    setup = (
        "set -e; ip link set lo up; "
        f"ip addr add {REGISTRY}/32 dev lo; mount --bind {hosts} /etc/hosts; "
        f"{sys.executable} {server} {REGISTRY} {log} {' '.join(map(str, tls or ()))} </dev/null >/dev/null 2>&1 & "
        f'for i in $(seq 100); do [ -e {log}.ready ] && break; sleep 0.05; done; exec "$@"'
    )
    return [
        "unshare",
        "--net",
        "--mount",
        "--pid",
        "--fork",
        "--mount-proc",
        "--",
        "sh",
        "-c",
        setup,
        "sh",
        *command,
    ], log


def user_config(env: dict[str, str], text: str) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
