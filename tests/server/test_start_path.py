"""What `tether serve` imports before it can answer `session/new`, and that every handler
the method table imports later is really there.

The start path (`initialize`, `session/new`) is most of an editor's first wait; the turn,
the tools, the approvals, the providers and the replay are imported by the context's
warm-up once the first session is open (or by the first request that needs them).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.server.methods import METHODS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
from local_http import LocalHTTPServer, Reply, sse

LATER = (
    "tether.agent.loop",
    "tether.agent.executor",
    "tether.approvals",
    "tether.tools.grep",
    "tether.tools.run_command",
    "tether.providers.select",
    "tether.handlers.prompt",
    "tether.handlers.loading",
    "tether.handlers.snapshots",
    "tether_protocol._converter",
    "tether_protocol._snapshots",
    "tether_protocol._lsp",
    "tether_protocol._extensions",
    "tether_protocol._methods",
    "tether_protocol._updates",
    # the generated ACP v1 areas the start does not need (each is loaded where its hand module was)
    "tether_protocol.acp_v1.updates",
    "tether_protocol.acp_v1.client_requests",
    "tether_protocol.acp_v1.prompt",
    # ACP's cancel: only the schema's joined class needs it
    "tether_protocol.acp_v1.lifecycle",
    # the generated v2 model (tens of ms): a v1 start never loads it (a v2 answer loads its
    # `initialize` area alone)
    "tether_protocol.acp_v2.schema_types",
    "tether_protocol.acp_v2.initialize",
    "tree_sitter",
    "httpx",
)


def test_the_server_and_the_session_handlers_import_nothing_of_the_turn() -> None:
    probe = (
        "import sys, tether.server.app, tether.handlers.sessions, tether.handlers.lifecycle;"
        f"print(sorted(m for m in {LATER!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# Run as `python -c`: the real daemon (`tether acp`) answering `initialize` and `session/new`
# from stdin, with what `sys.modules` holds at the moment each answer is written (the
# answer to `initialize` by `early`, the others by the connection's flush) saved as JSON.
DAEMON_PROBE = """
import json, sys
import tether.server.early as early
import tether_cli

seen = {}
def flushed(self):
    if any(b"sessionId" in frame for frame in self._outbox):
        seen.setdefault("session/new", sorted(sys.modules))
    flush(self)
write_all = early.write_all
def answer_initialize(fd, data):
    global flush
    seen.setdefault("initialize", sorted(sys.modules))
    write_all(fd, data)
    import tether.transport.connection as connection  # (the daemon imports it next)
    flush = connection.Connection.flush
    connection.Connection.flush = flushed
early.write_all = answer_initialize
provider = sys.argv[3] if len(sys.argv) > 3 else "scripted"
code = tether_cli.main(["acp", "--provider", provider, "--home", sys.argv[1]])
seen["exit"] = sorted(sys.modules)
json.dump(seen, open(sys.argv[2], "w"))
sys.exit(code)
"""

# Imported by the warm-up once the first session is answered, or by the first prompt,
# load or tool that needs them: the turn, its journal, the conversation model, the
# gitignore matcher's pathspec, the workspace watcher's watchfiles, the editor's LSP side.
NOT_BEFORE_SESSION_NEW = (
    "tether.agent.journal",
    "tether.agent.loop",
    "tether.agent.history",
    "tether.tools.base",
    "tether.tools.registry",
    "tether_protocol.conversation",
    "pathspec",
    "watchfiles",
    "httpx",
    "pygls",
    "lsprotocol",
    # nor attrs or the converter: `session/new`'s params and answer are msgspec Structs
    "attrs",
    "cattrs",
    *LATER,
)
# Not even attrs and cattrs before `initialize` is answered (flags such as `--provider`
# are validated by the settings' own hooks), nor the event loop, nor `logging` (the log
# starts once the answer is written, unless a workspace-config key is refused first), nor
# `shutil` (argparse's formatters ask it the terminal's width only to print help).
NOT_BEFORE_INITIALIZE = (
    "attrs",
    "cattrs",
    "asyncio",
    "anyio",
    "aiosqlite",
    "logging",
    "shutil",
    "tether.server.app",
    "tether.store",
)


def test_the_daemon_answers_initialize_and_session_new_before_importing_the_heavy_modules(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    seen_file = tmp_path / "seen.json"
    done = subprocess.run(
        [sys.executable, "-c", DAEMON_PROBE, str(tmp_path / "home"), str(seen_file)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    sent = [json.loads(line) for line in done.stdout.splitlines()]
    answers = [m for m in sent if "id" in m]
    assert [a["id"] for a in answers] == [1, 2] and "sessionId" in answers[1]["result"]
    # the slash command list comes after the session/new answer, never before it
    assert sent.index(answers[1]) < [m.get("method") for m in sent].index("session/update")
    seen = json.loads(seen_file.read_text())
    assert sorted(m for m in NOT_BEFORE_INITIALIZE if m in seen["initialize"]) == []
    assert sorted(m for m in NOT_BEFORE_SESSION_NEW if m in seen["session/new"]) == []
    assert "tether.server.app" in seen["session/new"]  # (the probe saw the real answer)


# ACP v2's generated model, one module per area (protocol/tools/acp_v2_areas.py)
V2_AREAS = sorted(
    f"tether_protocol.acp_v2.{path.stem}"
    for path in (Path(__file__).resolve().parents[2] / "protocol" / "tether_protocol" / "acp_v2").glob("*.py")
    if not path.stem.startswith("_")
)


def test_a_v2_answer_to_initialize_loads_only_the_initialize_area_of_the_v2_model(tmp_path: Path) -> None:
    """The v2 answer is built from the generated `InitializeResponse`: its area module is made
    before the answer is written, and no other area (nor `schema_types`, which names them all)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2, "capabilities": {}}}
    seen_file = tmp_path / "seen.json"
    done = subprocess.run(
        [sys.executable, "-c", DAEMON_PROBE, str(tmp_path / "home"), str(seen_file)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["result"]["protocolVersion"] == 2 and "capabilities" in answer["result"], answer
    loaded = [m for m in V2_AREAS if m in json.loads(seen_file.read_text())["initialize"]]
    assert len(V2_AREAS) > 3 and "tether_protocol.acp_v2.schema_types" in V2_AREAS  # (the glob found the areas)
    assert loaded == ["tether_protocol.acp_v2.initialize"]


async def test_a_turn_with_the_openai_provider_imports_neither_httpx_nor_httpcore(tmp_path: Path) -> None:
    """The provider's HTTP client is wire.py on h11: a whole turn against a real (local)
    OpenAI-compatible server loads no httpx, no httpcore (~30 ms of the first prompt)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seen_file = tmp_path / "seen.json"
    async with LocalHTTPServer() as server:
        server.queue(
            Reply(
                chunks=sse(
                    {"choices": [{"index": 0, "delta": {"content": "hi there"}}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    "[DONE]",
                )
            )
        )
        env = {
            **os.environ,
            "OPENAI_BASE_URL": f"{server.url}/v1",
            "OPENAI_API_KEY": "sk-fake",
            "TETHER_PROBE_PORTS": "",
        }
        daemon = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            DAEMON_PROBE,
            str(tmp_path / "home"),
            str(seen_file),
            "openai",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=workspace,
            env=env,
        )
        assert daemon.stdin is not None and daemon.stdout is not None

        async def call(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            assert daemon.stdin is not None and daemon.stdout is not None
            daemon.stdin.write(
                (json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n").encode()
            )
            while True:
                message = json.loads(await asyncio.wait_for(daemon.stdout.readline(), 60))
                if message.get("id") == id_ and "method" not in message:
                    return message

        await call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = (await call(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))["result"]["sessionId"]
        answer = await call(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]})
        daemon.stdin.close()
        assert await asyncio.wait_for(daemon.wait(), 60) == 0
    assert answer["result"]["stopReason"] == "end_turn", answer
    assert len(server.requests) == 1  # the turn did reach the model server
    loaded = json.loads(seen_file.read_text())["exit"]
    assert "tether.providers.wire" in loaded and "h11" in loaded
    assert [m for m in ("httpx", "httpcore") if m in loaded] == []
    # the daemon (a whole turn) loads no client, not even lazily: they are clients of it
    assert [m for m in loaded if m.partition(".")[0] in ("tether_client", "tether_chat")] == []


def test_every_handler_imported_later_exists() -> None:
    later = [m for m in METHODS if "." in m.handler.__qualname__ and "<locals>" not in m.handler.__qualname__]
    assert len(later) >= 12  # prompt, load, snapshots, reports, rules, diagnostics
    for method in later:
        module, name = method.handler.__qualname__.rsplit(".", 1)
        target = getattr(importlib.import_module(f"tether.{module}"), name, None)
        assert callable(target), f"{method.name}: tether.{module}.{name} does not exist"


async def test_after_the_first_prompt_its_route_calls_the_prompt_handler_itself(tmp_path: Path) -> None:
    """The handlers imported on first call leave no wrapper behind: from the second prompt on,
    the peer calls `handlers.prompt.session_prompt` (bound to the connection) directly, and a
    storage fault is still answered -32015 (the peer asks `storage_failed`, not a wrapper),
    and the params' class (imported on first use) stays in the route."""
    import functools

    from server_harness import running, settings_for

    from tether.handlers import prompt
    from tether.server.methods import storage_failed

    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running(settings_for(tmp_path), workspace) as daemon:
        route = daemon.server.rpc.routes["session/prompt"]
        assert not isinstance(route.handler, functools.partial)  # not imported yet: the start path
        session_id = await daemon.new_session(workspace)
        answer = await daemon.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert answer["stopReason"] == "end_turn"
        handler = daemon.server.rpc.routes["session/prompt"].handler
        assert isinstance(handler, functools.partial)
        assert handler.func is prompt.session_prompt and handler.args == (daemon.server,)
        assert daemon.server.rpc.options.known_failure is storage_failed
        from tether_protocol import PromptParams  # and its params class is looked up once

        assert daemon.server.rpc.routes["session/prompt"].params_cls is PromptParams
