"""A restored snapshot's tool results held to what Tether's own tools write, before a replay shows them.

Owns: ``ResultFields``: a tool result's ``kind`` (ACP's), ``title`` (bounded), ``locations`` (absolute, normal,
inside the restoring workspace: those under the snapshot's recorded workspace moved there), ``blocks`` (ACP's
types, at most ``MAX_BLOCK_DATA`` of base64 a result) and a command's footer (its exit code, its directory).
Must not: touch a store, or check a body's types (``snapshot_checks`` decodes bodies first).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, get_args

from tether_protocol import COMMAND_FOOTER, ToolKind

from .snapshot_checks import SnapshotError

if TYPE_CHECKING:
    from tether_protocol import JsonObject

__all__ = ["ResultFields"]

_KINDS = frozenset(get_args(ToolKind))
MAX_TITLE = 16 * 1024  # characters (a command's title is the command)
MAX_LOCATIONS = 1000
MAX_BLOCK_DATA = 2 * 1024 * 1024  # base64 characters of a result's images and blobs (mcp/tools.py's cap)
_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
_MAX_LINE = 2**31 - 1
# run_command's footer (tools/run_command.py), as the v2 replay reads it back (rendering/replay_terminals.py)
_MEMORY = "MEMORY.md"  # `remember`'s user file lies outside the workspace (agent/memory_files.py)


class ResultFields:
    """The tool results of the messages as they come (their bodies checked)."""

    def __init__(self, workspace: str, recorded: str, user_memory: str | None = None) -> None:
        self.workspace = os.path.normpath(workspace)
        self.recorded = os.path.normpath(recorded) if os.path.isabs(recorded) else None
        self.user_memory = user_memory  # where `remember`'s user file is here (None: as recorded)
        self._command_dirs: dict[str, Any] = {}  # run_command call id -> its `cwd` argument
        self._moved = False

    def see(self, message: JsonObject, i: int) -> bool:
        """``messages[i]``; SnapshotError naming its first field Tether would not have written.
        True when a location was moved into the workspace (its body changed)."""
        body = message["body"]
        role = body.get("role")
        if role == "assistant":
            for call in body.get("tool_calls", ()):
                if call["name"] == "run_command":
                    self._command_dirs[call["id"]] = call.get("arguments", {}).get("cwd")
        elif role == "tool":
            self._moved = False
            problem = self._problem(body)
            if problem is not None:
                raise SnapshotError(
                    f"messages[{i}].body.{problem}; a restored tool result holds only what Tether writes"
                )
            return self._moved
        return False

    def _problem(self, body: JsonObject) -> str | None:
        kind, title = body.get("kind"), body.get("title")
        if kind is not None and kind not in _KINDS:
            return f"kind must be one of {sorted(_KINDS)}, not {str(kind)[:80]!r}"
        if title is not None and len(title) > MAX_TITLE:
            return f"title is {len(title)} characters, over {MAX_TITLE}"
        return self._locations(body) or _blocks(body.get("blocks", ())) or self._command(body)

    def _locations(self, body: JsonObject) -> str | None:
        locations = body.get("locations", ())
        if len(locations) > MAX_LOCATIONS:
            return f"locations holds {len(locations)}, over {MAX_LOCATIONS}"
        for j, location in enumerate(locations):
            line, path = location.get("line"), location["path"]
            if line is not None and not 0 <= line <= _MAX_LINE:
                return f"locations[{j}].line must be from 0 to {_MAX_LINE}, not {line}"
            moved = self._inside(path)
            if moved is None and not (body["name"] == "remember" and _memory_file(path)):
                return f"locations[{j}].path {path[:300]!r} is not a place in the workspace {self.workspace}"
            if moved is None:  # `remember`'s user file: this user's, wherever the snapshot's was
                moved = self.user_memory or path
            if moved is not None and moved != path:
                location["path"], self._moved = moved, True
        return None

    def _inside(self, path: str) -> str | None:
        """``path`` in the workspace (one under the recorded workspace moved there), or None."""
        if "\0" in path or not os.path.isabs(path) or os.path.normpath(path) != path:
            return None
        for root in (self.workspace, self.recorded):
            if root is not None and (path == root or path.startswith(root.rstrip("/") + "/")):
                return os.path.normpath(os.path.join(self.workspace, os.path.relpath(path, root)))
        return None

    def _command(self, body: JsonObject) -> str | None:
        """A command that ran (its footer): its exit code is a process's, its directory the workspace's."""
        if body["name"] != "run_command" or not isinstance(body.get("content"), str):
            return None
        footers = list(COMMAND_FOOTER.finditer(body["content"]))
        if not footers:
            return None  # refused, or not run
        code = footers[-1].group(1)
        if code is not None and not 0 <= int(code) <= 255:
            return f"content's footer says exit code {code[:40]}, not a process's (0 to 255)"
        cwd = self._command_dirs.get(body["tool_call_id"]) or "."
        if not isinstance(cwd, str) or self._inside(os.path.normpath(os.path.join(self.workspace, cwd))) is None:
            return f"tool_call_id {body['tool_call_id']!r} ran in {str(cwd)[:300]!r}, outside the workspace"
        return None


def _memory_file(path: str) -> bool:
    """`remember`'s user file: a MEMORY.md by an absolute, normal path (never `../`, a NUL byte)."""
    return "\0" not in path and os.path.isabs(path) and os.path.normpath(path) == path and path.endswith("/" + _MEMORY)


def _blocks(blocks: Any) -> str | None:
    data = 0
    for j, block in enumerate(blocks):
        kind = block.get("type")
        if kind not in _BLOCK_TYPES:
            return f"blocks[{j}].type must be one of {sorted(_BLOCK_TYPES)}, not {str(kind)[:80]!r}"
        resource = block.get("resource")
        for value in (block.get("data"), resource.get("blob") if isinstance(resource, dict) else None):
            data += len(value) if isinstance(value, str) else 0
    if data > MAX_BLOCK_DATA:
        return f"blocks hold {data} characters of base64 data, over {MAX_BLOCK_DATA}"
    return None
