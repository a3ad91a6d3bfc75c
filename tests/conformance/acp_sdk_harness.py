"""The ACP Python SDK's side of tests/conformance/test_acp_python_sdk.py (and _models): the
client every SDK method written out, the daemon started by the SDK, and the checks the
scenarios share. Apart from the tests so that only the tests that use the SDK import it
(`acp` takes ~1 s to import, and every test worker collects every test module).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import acp
from acp import RequestError, spawn_agent_process, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    ContentToolCallContent,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    KillTerminalResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ResumeSessionResponse,
    SessionNotification,
    SetSessionConfigOptionResponse,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "conformance-acp.json"
README = "# Sample\n\nHello from the sample workspace.\n"
WAIT = 15.0  # seconds for any single exchange; well under the 60 s test timeout


# ---------------------------------------------------------------------------------
# The client: every method of the SDK's Client interface, written out.
# ---------------------------------------------------------------------------------


class ConformanceClient:
    """An ACP client as an editor would be: answers permissions from a queue, serves files
    from the real file system, refuses terminals (not advertised), records everything."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.agent: Any = None
        self.updates: list[tuple[str, Any]] = []  # (session_id, update model), arrival order
        self.permission_requests: list[dict[str, Any]] = []
        self.permission_asked = asyncio.Event()
        self.answers: asyncio.Queue[str] = asyncio.Queue()  # optionId, or "cancelled"
        self.permission_handlers_running = 0
        self.fs_reads: list[dict[str, Any]] = []
        self.fs_writes: list[dict[str, Any]] = []
        self.unexpected: list[tuple[str, Any]] = []  # calls Tether should never make

    # -- lifecycle -------------------------------------------------------------------
    def on_connect(self, conn: Any) -> None:
        self.agent = conn

    # -- session/update --------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # Record first, before any await: keeps arrival order observable (see test 4).
        self.updates.append((session_id, update))

    # -- session/request_permission --------------------------------------------------
    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append(
            {"session_id": session_id, "tool_call": tool_call, "options": options, "meta": kwargs}
        )
        self.permission_asked.set()
        self.permission_handlers_running += 1
        try:
            answer = await self.answers.get()
        finally:
            self.permission_handlers_running -= 1
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    # -- fs/* --------------------------------------------------------------------------
    def _checked_path(self, path: str) -> Path:
        p = Path(path)
        if not p.is_absolute():
            raise RequestError.invalid_params({"path": path, "reason": "ACP paths must be absolute"})
        resolved = p.resolve()
        if not resolved.is_relative_to(self.workspace):
            raise RequestError.invalid_params({"path": path, "reason": "outside the workspace"})
        return resolved

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.fs_reads.append({"session_id": session_id, "path": path, "line": line, "limit": limit})
        target = self._checked_path(path)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)  # ACP lines are 1-based
            end = start + limit if limit is not None else None
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.fs_writes.append({"session_id": session_id, "path": path, "content": content})
        target = self._checked_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)  # Tether leaves this to the editor
        target.write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    # -- terminal/*: not advertised (terminal=False), so Tether must never call them ---
    def _no_terminal(self, method: str, params: dict[str, Any]) -> RequestError:
        self.unexpected.append((method, params))
        return RequestError.method_not_found(method)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        raise self._no_terminal("terminal/create", {"session_id": session_id, "command": command})

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        raise self._no_terminal("terminal/output", {"session_id": session_id, "terminal_id": terminal_id})

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        raise self._no_terminal("terminal/release", {"session_id": session_id, "terminal_id": terminal_id})

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        raise self._no_terminal("terminal/wait_for_exit", {"session_id": session_id, "terminal_id": terminal_id})

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse | None:
        raise self._no_terminal("terminal/kill", {"session_id": session_id, "terminal_id": terminal_id})

    # -- elicitation (unstable in the SDK; not advertised) ----------------------------
    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> CreateElicitationResponse:
        self.unexpected.append(("elicitation/create", {"message": message}))
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        self.unexpected.append(("elicitation/complete", {"elicitation_id": elicitation_id}))

    # -- extensions: Tether sends none to the client -----------------------------------
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.unexpected.append((f"_{method}", params))
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.unexpected.append((f"_{method}", params))

    # -- helpers for the tests ---------------------------------------------------------
    def updates_for(self, session_id: str) -> list[Any]:
        return [u for sid, u in self.updates if sid == session_id]


# ---------------------------------------------------------------------------------
# Starting a daemon through the SDK
# ---------------------------------------------------------------------------------


class Wire:
    """Every JSON-RPC frame in wire order, recorded by a synchronous SDK stream observer."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: StreamEvent) -> None:
        self.frames.append((event.direction.value, event.message))

    def incoming(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            m
            for d, m in self.frames
            if d == StreamDirection.INCOMING.value and (method is None or m.get("method") == method)
        ]

    def index_of_response(self, direction: str, request_method: str) -> tuple[int, Any]:
        """(frame index, id) of the last response to the last `request_method` request sent the other way."""
        other = "outgoing" if direction == "incoming" else "incoming"
        ids = [m["id"] for d, m in self.frames if d == other and m.get("method") == request_method and "id" in m]
        assert ids, f"no {request_method} request on the wire"
        for i, (d, m) in enumerate(self.frames):
            if d == direction and "method" not in m and m.get("id") == ids[-1]:
                return i, ids[-1]
        raise AssertionError(f"no response to {request_method} (id {ids[-1]}) on the wire")


class Daemon:
    def __init__(
        self, conn: Any, process: asyncio.subprocess.Process, client: ConformanceClient, wire: Wire, stderr_path: Path
    ) -> None:
        self.conn = conn
        self.process = process
        self.client = client
        self.wire = wire
        self.stderr_path = stderr_path

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


class SdkErrors(logging.Handler):
    """ERROR records the SDK logs: it logs, rather than raises, a notification it cannot
    route or parse (a session/update the SDK fails to validate is dropped that way)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if Path(record.pathname).resolve().is_relative_to(_SDK_DIR):
            self.messages.append(record.getMessage())


_SDK_DIR = Path(acp.__file__).resolve().parent


# What the SDK logs for Tether's withdrawal of a request, in either spelling (see the
# module docstring).
SDK_IGNORES_CANCEL_REQUEST = frozenset(
    f"Unhandled error while handling notification method={method}" for method in ("$/cancelRequest", "$/cancel_request")
)


def daemon_argv() -> tuple[str, ...]:
    return (sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(SCRIPT))


@contextlib.asynccontextmanager
async def tether_acp(
    daemon_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    *,
    initialize: bool = True,
    name: str = "daemon",
    sdk_errors_allowed: frozenset[str] = frozenset(),
) -> AsyncIterator[Daemon]:
    client = ConformanceClient(workspace)
    wire = Wire()
    stderr_path = tmp_path / f"{name}.stderr"
    sdk_errors = SdkErrors()
    logging.getLogger().addHandler(sdk_errors)
    # The SDK pipes stderr and never reads it: give the daemon a file instead, so its log
    # can never fill a pipe and block it (and is there to read when a test fails).
    try:
        with open(stderr_path, "wb") as stderr:
            # The SDK passes only HOME/LOGNAME/PATH/SHELL/TERM/USER by default. daemon_env is
            # the test's whole environment (the interpreter's PATH/VIRTUAL_ENV, ...) minus
            # provider keys, plus a private TETHER_HOME and no user config.
            async with spawn_agent_process(
                client,
                *daemon_argv(),
                env=dict(daemon_env),
                cwd=workspace,
                transport_kwargs={"stderr": stderr.fileno()},
                observers=[wire],
            ) as (conn, process):
                daemon = Daemon(conn, process, client, wire, stderr_path)
                if initialize:
                    await asyncio.wait_for(initialize_client(conn), WAIT)
                yield daemon
    finally:
        logging.getLogger().removeHandler(sdk_errors)
    # The SDK closes stdin and waits 2 s before terminating: an ACP agent ends on EOF.
    assert process.returncode == 0, f"daemon exit code {process.returncode}\n{daemon.stderr()}"
    assert client.unexpected == [], client.unexpected
    assert set(sdk_errors.messages) <= sdk_errors_allowed, sdk_errors.messages


async def initialize_client(conn: Any) -> InitializeResponse:
    return await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
        ),
        client_info=Implementation(name="tether-conformance", title="ACP SDK conformance", version="1"),
    )


# ---------------------------------------------------------------------------------
# Checks shared by the scenarios
# ---------------------------------------------------------------------------------

# What the SDK parses each frame as (requests and notifications by method, responses by
# the method of the request they answer).
_INCOMING_PARAMS: dict[str, type[BaseModel]] = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
    "fs/read_text_file": ReadTextFileRequest,
    "fs/write_text_file": WriteTextFileRequest,
}
_RESULTS: dict[str, type[BaseModel]] = {
    "initialize": InitializeResponse,
    "session/new": NewSessionResponse,
    "session/load": LoadSessionResponse,
    "session/resume": ResumeSessionResponse,
    "session/list": ListSessionsResponse,
    "session/prompt": PromptResponse,
    "session/set_config_option": SetSessionConfigOptionResponse,
}
# Keys Tether adds to the initialize result for LSP clients only (SPEC §2.1); an ACP
# client gets a strict ACP answer with the LSP half under _meta.tether.lsp.
_LSP_KEYS_IN_INITIALIZE = {"capabilities", "serverInfo"}


def _dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def assert_sdk_understands_every_frame(wire: Wire) -> None:
    """The SDK's models are lenient (unknown keys dropped, malformed optional fields replaced
    by defaults). Re-parse every frame Tether sent and require a lossless round trip, so a
    field the SDK silently discarded or salvaged shows up as a failure."""
    sent_methods = {m["id"]: m["method"] for d, m in wire.frames if d == "outgoing" and "method" in m and "id" in m}
    checked = 0
    for direction, message in wire.frames:
        if direction != "incoming":
            continue
        assert message.get("jsonrpc") == "2.0", message
        if "method" in message:
            method = message["method"]
            if method in _INCOMING_PARAMS:
                raw = message["params"]
                assert _dump(_INCOMING_PARAMS[method].model_validate(raw)) == raw, method
                checked += 1
        elif "result" in message:
            method = sent_methods.get(message["id"])
            if method in _RESULTS:
                raw = dict(message["result"])
                if method == "initialize":
                    assert not (_LSP_KEYS_IN_INITIALIZE & set(raw)), raw
                    assert set(raw["_meta"]["tether"]["lsp"]) == _LSP_KEYS_IN_INITIALIZE
                assert _dump(_RESULTS[method].model_validate(raw)) == raw, method
                checked += 1
    assert checked, "nothing was checked"


def kinds(updates: list[Any]) -> list[str]:
    """Update kinds, consecutive text/thought chunks collapsed."""
    out: list[str] = []
    for u in updates:
        kind = u.session_update
        if out and out[-1] == kind and kind in ("agent_message_chunk", "agent_thought_chunk"):
            continue
        out.append(kind)
    return out


def message_text(updates: list[Any]) -> str:
    return "".join(u.content.text for u in updates if isinstance(u, AgentMessageChunk))


def tool_text(update: ToolCallStart | ToolCallProgress) -> str:
    out = []
    for block in update.content or []:
        if isinstance(block, ContentToolCallContent) and isinstance(block.content, TextContentBlock):
            out.append(block.content.text)
    return "".join(out)


def final_update(updates: list[Any], call_id: str) -> ToolCallProgress:
    done = [
        u
        for u in updates
        if isinstance(u, ToolCallProgress) and u.tool_call_id == call_id and u.status in ("completed", "failed")
    ]
    assert len(done) == 1, [u for u in updates if getattr(u, "tool_call_id", None) == call_id]
    return done[0]


async def prompt(daemon: Daemon, session_id: str, text: str) -> PromptResponse:
    return await asyncio.wait_for(daemon.conn.prompt(session_id=session_id, prompt=[text_block(text)]), WAIT)
