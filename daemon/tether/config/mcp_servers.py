"""MCP server entries: the user config's `[mcp_servers.NAME]` tables and ACP `mcpServers`.

Owns: `McpServerConfig` (stdio or HTTP/SSE, its sandbox's network and writable paths, timeouts, tool
filters), read from Codex's config.toml shape or an ACP client's entries, with errors naming server and key.
Must not: start anything, import anything outside the standard library, or accept servers from a workspace file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from tether_protocol import JsonObject

from .settings import ConfigError

__all__ = ["WORKSPACE", "McpServerConfig", "from_acp", "parse_mcp_servers"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TRANSPORTS = ("stdio", "http", "sse")
_STDIO_KEYS = frozenset({"command", "args", "env", "cwd", "network", "writable"})
WORKSPACE = "workspace"  # `cwd = "workspace"`, or in `writable`: the session's workspace
_HTTP_KEYS = frozenset({"url", "headers", "transport"})
_COMMON_KEYS = frozenset({"enabled", "startup_timeout_sec", "tool_timeout_sec", "enabled_tools", "disabled_tools"})
DEFAULT_STARTUP_TIMEOUT_S = 10.0
DEFAULT_TOOL_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One MCP server, as configured (hashable: identical entries share a connection)."""

    name: str
    transport: str  # "stdio" | "http" (streamable HTTP) | "sse"
    source: str  # "user config <path>" or "session/new" ...
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""  # "": a private directory of its own; "workspace"; else an absolute path
    network: bool = True  # in the sandbox (MCP servers usually need it)
    writable: tuple[str, ...] = ()  # absolute paths, or "workspace", writable in the sandbox
    workspace: str = ""  # the session's workspace (set per session: never resolved from)
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    enabled: bool = True
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    enabled_tools: tuple[str, ...] | None = None  # None: all
    disabled_tools: tuple[str, ...] = ()
    session_id: str = ""  # an ACP client's server belongs to its session

    def offers(self, tool: str) -> bool:
        """Whether the model is given this server's tool ``tool``."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools

    def describe(self) -> str:
        where = " ".join((self.command, *self.args)) if self.transport == "stdio" else self.url
        return f"{self.name} ({self.transport}: {where})"


def parse_mcp_servers(data: object, source: str, base_dir: Path | None) -> tuple[McpServerConfig, ...]:
    """The `[mcp_servers]` table of a user config file (``source`` names it in errors)."""
    if not isinstance(data, Mapping):
        raise _bad("mcp_servers", source, "a table of servers ([mcp_servers.NAME])")
    return tuple(_one(name, table, source, base_dir) for name, table in data.items())


def _one(name: object, table: object, source: str, base_dir: Path | None) -> McpServerConfig:
    if not isinstance(name, str) or not _NAME.match(name):
        raise _bad(f"mcp_servers.{name}", source, "a server name of letters, digits, '_' and '-' (at most 64)")
    key = f"mcp_servers.{name}"
    if not isinstance(table, Mapping):
        raise _bad(key, source, "a table with `command` (stdio) or `url` (HTTP)")
    unknown = sorted(set(table) - _STDIO_KEYS - _HTTP_KEYS - _COMMON_KEYS)
    if unknown:
        known = ", ".join(sorted(_STDIO_KEYS | _HTTP_KEYS | _COMMON_KEYS))
        raise _bad(f"{key}.{unknown[0]}", source, f"a known key ({known})")
    if ("command" in table) == ("url" in table):
        raise _bad(key, source, "exactly one of `command` (a stdio server) or `url` (an HTTP server)")
    common = _common(key, table, source)
    if "command" in table:
        network = table.get("network", True)
        if not isinstance(network, bool):
            raise _bad(f"{key}.network", source, "true or false (whether the server's sandbox has the network)")
        writable = _texts(table, "writable", key, source) or ()
        return McpServerConfig(
            name, "stdio", source, command=_text(table, "command", key, source, required=True),
            args=_texts(table, "args", key, source) or (), env=_pairs(table, "env", key, source),
            cwd=_place(_text(table, "cwd", key, source), base_dir), network=network,
            writable=tuple(_place(path, base_dir) for path in writable), **common,
        )
    transport = _text(table, "transport", key, source) or "http"
    if transport not in ("http", "sse"):
        raise _bad(f"{key}.transport", source, '"http" (streamable HTTP, the default) or "sse"')
    return McpServerConfig(
        name, transport, source, url=_url(table, key, source), headers=_pairs(table, "headers", key, source), **common
    )


def _place(path: str, base_dir: Path | None) -> str:
    """A configured path made absolute (relative to the config file's directory)."""
    if not path or path == WORKSPACE:
        return path
    place = Path(path).expanduser()
    if not place.is_absolute() and base_dir is not None:
        place = base_dir / place
    return str(place.absolute())


class _Common(TypedDict):
    """The keys every transport's table has, as `McpServerConfig` takes them."""

    enabled: bool
    startup_timeout_s: float
    tool_timeout_s: float
    enabled_tools: tuple[str, ...] | None
    disabled_tools: tuple[str, ...]


def _common(key: str, table: Mapping[str, Any], source: str) -> _Common:
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _bad(f"{key}.enabled", source, "true or false")
    return {
        "enabled": enabled,
        "startup_timeout_s": _seconds(table, "startup_timeout_sec", key, source, DEFAULT_STARTUP_TIMEOUT_S),
        "tool_timeout_s": _seconds(table, "tool_timeout_sec", key, source, DEFAULT_TOOL_TIMEOUT_S),
        "enabled_tools": _texts(table, "enabled_tools", key, source),
        "disabled_tools": _texts(table, "disabled_tools", key, source) or (),
    }


def _seconds(table: Mapping[str, Any], name: str, key: str, source: str, default: float) -> float:
    value = table.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        raise _bad(f"{key}.{name}", source, "a number of seconds above 0 and at most 3600")
    return float(value)


def _text(table: Mapping[str, Any], name: str, key: str, source: str, *, required: bool = False) -> str:
    value = table.get(name, "")
    if not isinstance(value, str) or "\0" in value or (required and not value.strip()):
        raise _bad(f"{key}.{name}", source, "a non-empty string" if required else "a string")
    return value


def _texts(table: Mapping[str, Any], name: str, key: str, source: str) -> tuple[str, ...] | None:
    if name not in table:
        return None
    value = table[name]
    if not isinstance(value, list) or not all(isinstance(v, str) and "\0" not in v for v in value):
        raise _bad(f"{key}.{name}", source, "a list of strings")
    return tuple(value)


def _pairs(table: Mapping[str, Any], name: str, key: str, source: str) -> tuple[tuple[str, str], ...]:
    value = table.get(name, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and "\0" not in k + v for k, v in value.items()
    ):
        raise _bad(f"{key}.{name}", source, "a table of string values")
    return tuple(sorted(value.items()))


def _url(table: Mapping[str, Any], key: str, source: str) -> str:
    url = _text(table, "url", key, source, required=True)
    if not url.startswith(("http://", "https://")):
        raise _bad(f"{key}.url", source, "an http:// or https:// URL")
    return url


def _bad(key: str, source: str, expected: str) -> ConfigError:
    return ConfigError(f"{key} (from {source}) is not valid; expected {expected}", key=key, source=source)


# ------------------------------------------------------------------------------ ACP


def from_acp(entries: list[JsonObject], where: str, session_id: str, *, remote_ok: bool) -> tuple[McpServerConfig, ...]:
    """ACP `mcpServers` (stdio `{name, command, args, env: [{name, value}]}`, or `{type:
    "http"|"sse", name, url, headers: [{name, value}]}`); ValueError names what is wrong."""
    out: list[McpServerConfig] = []
    for i, entry in enumerate(entries):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at} must be an object (an MCP server)")
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{at}.name must be a server name of letters, digits, '_' and '-' (at most 64)")
        kind = entry.get("type", "stdio")
        if kind not in _TRANSPORTS:
            raise ValueError(f'{at}.type must be "http", "sse" or absent (stdio), got {kind!r}')
        if kind != "stdio" and not remote_ok:
            raise ValueError(f"{at}: {kind} MCP servers are not supported")
        source = f"session {session_id} ({where})"
        if kind == "stdio":
            command = entry.get("command")
            if not isinstance(command, str) or not command:
                raise ValueError(f"{at}.command must be a non-empty string")
            args = entry.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise ValueError(f"{at}.args must be a list of strings")
            out.append(McpServerConfig(
                name, "stdio", source, command=command, args=tuple(args),
                env=_acp_pairs(entry.get("env", []), f"{at}.env"), session_id=session_id,
            ))
        else:
            url = entry.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ValueError(f"{at}.url must be an http:// or https:// URL")
            out.append(McpServerConfig(
                name, kind, source, url=url, headers=_acp_pairs(entry.get("headers", []), f"{at}.headers"),
                session_id=session_id,
            ))
    return tuple(out)


def _acp_pairs(items: object, at: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get("name"), str) and isinstance(i.get("value"), str) for i in items
    ):
        raise ValueError(f"{at} must be a list of {{name, value}} objects with string values")
    return tuple(sorted((i["name"], i["value"]) for i in items))
