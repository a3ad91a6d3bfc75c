"""What `tether doctor` says about the network.

Owns: the mode, what allowlist allows, per-command lists, credential names and what the
backend guarantees, as data (`network_report`) and as lines (`network_lines`).
Must not: show a credential's value, or import the proxy (doctor stays cheap).
"""

from __future__ import annotations

import os
from pathlib import Path

from tether_protocol import JsonObject

from ..config import Settings
from .asking import always_allowed

__all__ = ["network_lines", "network_report"]

_GUARANTEES = {
    ("allowlist", "bwrap"): "no direct network (own network namespace, loopback only); the only way out is "
    "Tether's proxy (HTTP CONNECT and http:// to allowed domains, ports 80/443 unless listed, public "
    "addresses only, checked on the address it connects to); no unix sockets (seccomp)",
    ("allowlist", "landlock"): "no network at all: Landlock has no network namespace to confine a command to "
    "the proxy (TCP connect rules name ports, not hosts), so allowlist falls back to none; use bubblewrap",
    ("off", "bwrap"): "no network (own network namespace, loopback only); no unix sockets",
    ("off", "landlock"): "no TCP bind or connect (Landlock ABI 4+), no UDP (seccomp), no unix sockets",
}


def network_report(settings: Settings, backend: str | None, home: Path) -> JsonObject:
    mode = settings.network
    guarantee = "the host's network" if mode == "on" else _GUARANTEES.get((mode, backend or ""), "none: no sandbox")
    return {
        "mode": mode,
        "allowedDomains": list(settings.allowed_domains),
        "alwaysAllowed": list(always_allowed(home)),
        "commands": list(settings.network_commands),
        "credentials": [
            {"host": host, "header": header, "env": env, "set": bool(os.environ.get(env))}
            for host, header, env in (entry.split() for entry in settings.credentials)
        ],
        "guarantee": guarantee,
    }


def network_lines(report: JsonObject) -> str:
    lines = [f"network: {report['mode']} · {report['guarantee']}"]
    if report["mode"] == "allowlist":
        lines.append(f"  allowed domains: {', '.join(report['allowedDomains']) or 'none (each asks)'}")
        if report["alwaysAllowed"]:
            lines.append(f"  always allowed (answered \"always\"): {', '.join(report['alwaysAllowed'])}")
    for entry in report["commands"]:
        prefix, arrow, domains = str(entry).partition(" -> ")
        lines.append(f"  {prefix}: {'proxy, plus ' + domains if arrow else 'the whole network'}")
    for cred in report["credentials"]:
        state = "set" if cred["set"] else "NOT SET: not sent"
        lines.append(f"  credential for {cred['host']}: {cred['header']} from ${cred['env']} ({state}; "
                     "http, and https through Tether's CA)")
    return "\n".join(lines) + "\n"
