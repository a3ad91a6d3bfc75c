"""The workspace's `.mcp.json`: servers a repository offers, listed, never started.

Owns: reading `<workspace>/.mcp.json` (the `{"mcpServers": {NAME: {...}}}` shape Claude Code
and others write) into short descriptions for `tether doctor`, with the user config table
that would enable each. Must not: start anything, or let the file add a server (only the
user's own config does), or import anything outside the standard library.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

_MAX_BYTES = 1024 * 1024


class OfferedServer(TypedDict):
    """One server `.mcp.json` offers, as `tether doctor` lists it (and prints with --json)."""

    name: str
    what: str  # "stdio: COMMAND ARGS" | "http: URL" | "sse: URL" | why it is neither
    file: str
    enable: str  # the user config table that would enable it ("" when none would)


def offered_servers(workspace: Path) -> list[OfferedServer]:
    """`{name, what, file, enable}` for each server `.mcp.json` names; [] when there is none."""
    path = workspace / ".mcp.json"
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [{"name": "(unreadable)", "what": "not valid JSON", "file": str(path), "enable": ""}]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    return [_one(str(name), entry, path) for name, entry in servers.items() if isinstance(entry, dict)]


def _one(name: str, entry: Mapping[str, object], path: Path) -> OfferedServer:
    command, url = entry.get("command"), entry.get("url")
    given = entry.get("args")
    args = [str(a) for a in given if isinstance(a, (str, int, float))] if isinstance(given, list) else []
    if isinstance(command, str):
        what = "stdio: " + " ".join([command, *args])
        enable = f"[mcp_servers.{name}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}"
    elif isinstance(url, str):
        kind = "sse" if entry.get("type") == "sse" else "http"
        what = f"{kind}: {url}"
        enable = f"[mcp_servers.{name}]\nurl = {json.dumps(url)}" + ('\ntransport = "sse"' if kind == "sse" else "")
    else:
        what, enable = "neither a command nor a url", ""
    return {"name": name, "what": what, "file": str(path), "enable": enable}
