"""Every method of the method table through a real daemon (split32 moved the handlers to
handlers/, services/ and rendering/, each imported on its first call): a hostile client's
params of every wrong shape, and of the right one naming nothing that exists, are answered
by the handler's own checks (`-32602`, or `-32002`
for a session that is not there), never `-32603` (a handler that does not import, or a
bug) nor `-32601` (a method the table lost), on ACP v1 and v2; the daemon logs no traceback."""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from tether.server.methods import METHODS
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

# last: they end the session the others are sent about
ENDING = ("session/close", "session/delete")
NOT_SENT = ("initialize", "shutdown", "exit")


def _requests() -> list[str]:
    names = [m.name for m in METHODS if not m.notification and m.name not in NOT_SENT]
    return sorted(names, key=lambda name: name in ENDING)


def _required(method: str) -> list[str]:
    """The wire names of the fields the method's params class requires."""
    later = next(m for m in METHODS if m.name == method).spec.params_class
    cls = getattr(importlib.import_module(f"tether_protocol.{later.module}"), later.name)
    return [f.encode_name for f in msgspec.structs.fields(cls) if f.required]


def _well_formed(method: str, session_id: str, workspace: Path) -> dict[str, Any]:
    """Params of the right shape (so the handler itself is reached), naming nothing that exists
    but the session."""
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    values: dict[str, Any] = {
        "sessionId": session_id,
        "cwd": str(workspace),
        "modeId": "ask",
        "configId": "mode",
        "value": "ask",
        "modelId": "default",
        "prompt": [{"type": "text", "text": "hello"}],
        "toolCallId": "call_none",
        "terminalId": "term_none",
        "queueId": "q_none",
        "query": "hello",
        "id": 999_999,
        "command": "tether.cancel",
        "textDocument": {"uri": (workspace / "README.md").as_uri()},
        "range": whole,
    }
    return {"mcpServers": [], **{key: values[key] for key in _required(method)}}


def _params(method: str, session_id: str, workspace: Path) -> list[Any]:
    return [
        {},
        None,
        [],
        "x",
        {"sessionId": session_id},
        {"sessionId": "../../etc/passwd"},
        {"sessionId": 5},
        {"sessionId": session_id, "prompt": 5, "turnId": [], "cwd": 5, "path": {}, "messageSeq": "x"},
        _well_formed(method, session_id, workspace),
    ]


@pytest.mark.parametrize("version", [1, 2])
async def test_every_method_answers_hostile_params_in_its_own_words(
    spawn_daemon, workspace: Path, version: int
) -> None:
    daemon = await spawn_daemon(initialize=False)
    client = daemon.client
    if version == 2:
        await client.request(
            "initialize", {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}, "capabilities": {}}
        )
    else:
        await client.initialize()
    session_id = (await client.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["sessionId"]
    wrong: list[str] = []
    for method in _requests():
        for params in _params(method, session_id, workspace):
            try:
                await asyncio.wait_for(client.request(method, params), 20)
            except ClientError as error:
                # v2 has no session/load: -32601 naming session/resume (SPEC §12.9)
                lost = error.code == -32601 and not (version == 2 and method == "session/load")
                if error.code == -32603 or lost:
                    wrong.append(f"{method} {str(params)[:60]}: {error.code} {error.message[:160]}")
    assert wrong == []
    assert "Traceback" not in daemon.stderr()
