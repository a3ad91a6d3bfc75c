"""`tether doctor`: what Tether would use here, and why (`--json`: the same facts as one object).

Owns: printing the version, each setting with its layer (secrets masked), the provider and why, the history,
ripgrep, the OS sandbox and its guarantees, the user's MCP servers (probed) and those `.mcp.json` offers.
Must not: start a workspace's offered server, or exit 0 when no provider is available (exit 1).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tether_protocol import JsonObject

from . import __version__
from .config import ConfigError, Settings, describe, load_settings
from .tools.visible_text import visible

if TYPE_CHECKING:  # the MCP package is imported only when a server is probed
    from .mcp.offered import OfferedServer
    from .mcp.probe import ProbeRow


def doctor_main(workspace: Path, flags: dict[str, object], *, as_json: bool = False) -> int:
    if as_json:
        report = doctor_report(workspace, flags)
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0 if report["provider"]["ok"] else 1
    report = doctor_report(workspace, flags)
    out = _Visible(sys.stdout)
    out.write(f"tether {report['version']} (Python {report['python']})\n")
    out.write(f"workspace: {workspace}\n\nsettings (later layers win):\n")
    if "error" in report:
        out.write(f"  configuration error: {report['error']}\n")
        return 1
    for key, item in report["settings"].items():
        out.write(f"  {key:<18} {item['value'] or '-':<40} {item['source']}\n")
    if report["refused"]:
        out.write("\nrefused in the workspace config (ignored; your own settings apply):\n")
        for item in report["refused"]:
            out.write(f"  {item['key'] or '(the file)'}: {item['reason']}\n")
    out.write("\nprovider:\n")
    provider = report["provider"]
    if provider["ok"]:
        out.write(f"  {provider['name']} · model {provider['model'] or '-'} · {provider['baseUrl'] or '-'}\n")
        out.write(f"  why: {provider['why']}\n")
        if provider["keyEnv"]:
            out.write(f"  key: {'set' if provider['keySet'] else 'not set'} ({provider['keyEnv']} or TETHER_API_KEY)\n")
    else:
        out.write(f"  none: {provider['error']}\n")
    out.write(f"\nhistory: {report['history']}\n")
    out.write(f"ripgrep: {report['ripgrep'] or 'not found (grep uses its pure-Python twin)'}\n")
    out.write(f"sandbox: {_sandbox_line(report['sandbox'])}\n")
    _sandbox_reads(out, report["sandbox"])
    if "network" in report:
        from .netproxy.summary import network_lines

        out.write(network_lines(report["network"]))
    _mcp_lines(out, report)
    return 0 if provider["ok"] else 1


def _mcp_lines(out: _Visible, report: JsonObject) -> None:
    servers, offered = report["mcpServers"], report["mcpOffered"]
    if servers:
        out.write("\nMCP servers (user config; each started to check it, then stopped):\n")
    for row in servers:
        state = f"started, {len(row['tools'])} tools" if row["started"] else f"not started: {row['error']}"
        out.write(f"  {row['what']} · {state}\n")
    for row in offered:
        out.write(f"\n{row['file']} offers {row['name']} ({row['what']}): offered, not started: enable it in "
                  f"your user config\n")
        if row["enable"]:
            out.write("".join(f"    {line}\n" for line in row["enable"].splitlines()))

class _Visible:
    """Writes to a terminal with every control character escaped: a value from a workspace
    file (a `model` holding escape sequences) is shown, never obeyed by the terminal."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> None:
        self._out.write(visible(text))


def _sandbox_reads(out: _Visible, sandbox: JsonObject) -> None:
    """What each guarantee rests on, and what commands cannot read (room above for more
    lines per guarantee, e.g. the network's)."""
    out.write("  rests on:\n" + "".join(f"    {line}\n" for line in sandbox["guarantees"]))
    if not sandbox["ok"]:
        out.write("  nothing is hidden from commands: they run unconfined (every one asks first)\n")
        return
    reads = sandbox["reads"]
    out.write("  hidden from commands (present here):\n")
    for row in reads["hidden"]:
        if row["exists"]:
            out.write(f"    {row['shown']}  ({row['why']})\n")
    missing = [row["shown"] for row in reads["hidden"] if not row["exists"]]
    if missing:
        out.write(f"  also hidden if created: {', '.join(missing)}\n")
    if reads["filtered"]:
        how = "shown without credential lines" if sandbox["backend"] == "bwrap" else "hidden whole (Landlock)"
        files = ", ".join(row["shown"] + ("" if row["exists"] else " (absent)") for row in reads["filtered"])
        out.write(f"  token files, {how}: {files}\n")
    if reads["exposed"]:
        out.write(f"  exposed by your allow_read: {', '.join(reads['exposed'])}\n")


def _sandbox_line(sandbox: JsonObject) -> str:
    if not sandbox["ok"]:
        return f"none: {sandbox['why']} (commands run unconfined, and every one asks for approval)"
    network = {"on": "on for every command", "allowlist": "allowlist (below)"}.get(sandbox["network"], "off")
    whole = [entry for entry in sandbox["networkCommands"] if " -> " not in entry]  # the table form: below
    if sandbox["network"] != "on" and whole:
        network += f" (on for: {', '.join(whole)})"
    return f"{sandbox['backend']} ({sandbox['version']}) · network {network}\n  why: {sandbox['why']}"


def sandbox_report(setting: str, network: str, network_commands: tuple[str, ...]) -> JsonObject:
    """The OS sandbox commands would run in here: backend, version, network policy."""
    from .sandbox import choose_sandbox

    choice = choose_sandbox(setting)
    return {
        "ok": choice.sandboxed,
        "setting": setting,
        "backend": choice.sandbox.name if choice.sandbox else None,
        "version": choice.sandbox.version if choice.sandbox else None,
        "why": choice.reason,
        "network": network,
        "networkCommands": list(network_commands),
    }


def doctor_report(workspace: Path, flags: dict[str, object]) -> JsonObject:
    """The facts `tether doctor` prints, as data: version, workspace, settings (secrets
    masked, each with its source), provider choice or why there is none, history path,
    ripgrep. Configuration errors are reported in `error`, not raised."""
    report: JsonObject = {
        "version": __version__,
        "python": sys.version.split()[0],
        "workspace": str(workspace),
    }
    try:
        settings = load_settings(workspace, flags=flags, env=os.environ)
    except ConfigError as exc:
        report["error"] = str(exc)
        report["provider"] = {"ok": False, "error": f"configuration error: {exc}"}
        return report
    report["settings"] = {key: {"value": shown, "source": source} for key, shown, source in describe(settings)}
    report["refused"] = [
        {"key": item.key, "file": item.file, "reason": item.reason} for item in settings.refused
    ]

    from tether_protocol import TetherError

    from .providers.select import choose_provider
    from .store import database_path
    from .tools.grep_rg import find_rg

    try:
        choice = asyncio.run(choose_provider(settings))
        report["provider"] = {
            "ok": True,
            "name": choice.provider,
            "model": choice.model or None,
            "baseUrl": choice.base_url or None,
            "why": choice.reason,
            "keyEnv": choice.key_env or None,
            "keySet": bool(choice.api_key) if choice.key_env else None,
        }
    except TetherError as exc:
        report["provider"] = {"ok": False, "error": exc.message}
    home = Path(settings.home) if settings.home else None
    report["history"] = str(database_path(workspace, home))
    report["ripgrep"] = find_rg()
    report["sandbox"] = sandbox_report(settings.sandbox, settings.network, settings.network_commands)
    report["sandbox"].update(_read_report(settings))
    from .netproxy.summary import network_report
    from .store import tether_home

    report["network"] = network_report(settings, report["sandbox"]["backend"], tether_home(home))
    report["mcpServers"], report["mcpOffered"] = mcp_report(settings, workspace)
    return report


def _read_report(settings: Settings) -> JsonObject:
    """What commands cannot read (after deny_read/allow_read) and what each guarantee rests on."""
    from .sandbox import choose_sandbox
    from .sandbox.effective import guarantees, read_facts
    from .services.registry import private_paths

    own = private_paths(Path(settings.home) if settings.home else None)
    reads = read_facts(os.environ, own, (*settings.deny_read, *settings.workspace_deny_read), settings.allow_read)
    return {"reads": reads, "guarantees": guarantees(choose_sandbox(settings.sandbox))}


def mcp_report(settings: Settings, workspace: Path) -> tuple[list[ProbeRow], list[OfferedServer]]:
    """The user config's MCP servers, each started (within its start-up timeout) or why
    not; the servers the workspace's `.mcp.json` offers (never started)."""
    from .mcp.offered import offered_servers

    servers: list[ProbeRow] = []
    if settings.mcp_servers:
        from dataclasses import replace

        import anyio

        from .mcp.launch import LaunchSettings
        from .mcp.probe import probe
        from .services.registry import private_paths

        hidden = private_paths(Path(settings.home) if settings.home else None)
        launch = LaunchSettings(settings.allow_env, hidden, settings.sandbox)
        configs = tuple(replace(c, workspace=str(workspace)) for c in settings.mcp_servers)
        servers = anyio.run(probe, configs, launch)
    return servers, offered_servers(workspace)
