"""Conformance: the official ACP Python SDK (`agent-client-protocol`, import `acp`) drives `tether acp`.

Nothing here speaks JSON-RPC by hand. The SDK's `spawn_agent_process` starts
`python -m tether acp` as a real subprocess and its `ClientSideConnection` sends every
request; `ConformanceClient` answers what Tether asks (permissions, file reads/writes)
through the SDK's `Client` interface. An observer on the connection records the raw
frames in wire order, so ordering rules and the SDK's parsing can be checked too.

What the SDK does with Tether's `$/cancelRequest` (§3.21, §5.8 of protocol/SPEC.md):
nothing. ACP spells that notification `$/cancel_request` with `{"requestId": …}`; the
SDK (0.12.x) routes neither spelling, logs "Unhandled error while handling notification
method=$/cancelRequest" (method not found) and leaves the client's `request_permission`
handler waiting. `test_cancel_while_a_permission_request_is_pending` pins this down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import acp
import pytest
from acp import RequestError, spawn_agent_process, spawn_stdio_connection, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ContentToolCallContent,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeniedOutcome,
    FileEditToolCallContent,
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
    UsageUpdate,
    UserMessageChunk,
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


# ---------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------


def test_the_client_implements_every_method_of_the_sdk_client_interface() -> None:
    # The SDK answers null for a Client method that is missing, so a missing one would
    # hide what Tether asked. Fail when an SDK upgrade adds a method we do not implement.
    wanted = {name for name in vars(Client) if not name.startswith("_") and callable(vars(Client)[name])}
    assert {
        "request_permission",
        "session_update",
        "read_text_file",
        "write_text_file",
        "create_terminal",
        "terminal_output",
        "release_terminal",
        "wait_for_terminal_exit",
        "kill_terminal",
        "ext_method",
        "ext_notification",
    } <= wanted
    missing = sorted(name for name in wanted if name not in vars(ConformanceClient))
    assert missing == []


async def test_initialize_new_session_and_a_turn_with_a_tool_call(daemon_env, workspace: Path, tmp_path: Path):
    async with tether_acp(daemon_env, workspace, tmp_path, initialize=False) as daemon:
        init = await asyncio.wait_for(initialize_client(daemon.conn), WAIT)
        assert init.protocol_version == 1
        caps = init.agent_capabilities
        assert caps is not None and caps.load_session is True
        assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context is True
        sc = caps.session_capabilities
        assert sc is not None
        assert sc.list is not None and sc.resume is not None and sc.close is not None
        assert init.agent_info is not None and init.agent_info.name == "tether"
        assert init.auth_methods == []

        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        assert session.session_id.startswith("sess_")
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        # §1.5.1: nothing is sent for a session before the session/new answer
        assert daemon.client.updates == []

        result = await prompt(daemon, session.session_id, "What does the README say?")
        assert result.stop_reason == "end_turn"
        assert result.field_meta and result.field_meta["tether"]["turnId"].startswith("turn_")

        updates = daemon.client.updates_for(session.session_id)
        assert len(updates) == len(daemon.client.updates)  # nothing for another session
        # the slash command list, right after the session/new answer (SPEC §4.11), as the SDK's class
        assert type(updates[0]).__name__ == "AvailableCommandsUpdate"
        assert "review" in [c.name for c in updates[0].available_commands]
        seq = kinds(updates[1:])
        assert seq == [
            "session_info_update",
            "agent_message_chunk",
            "tool_call",  # pending, title = tool name
            "tool_call_update",  # title, rawInput, locations
            "tool_call_update",  # in_progress
            "tool_call_update",  # completed with the result
            "usage_update",
            "agent_message_chunk",
            "usage_update",
        ], seq
        assert message_text(updates) == "Reading the README.The README says hello."

        start = next(u for u in updates if isinstance(u, ToolCallStart))
        assert (start.tool_call_id, start.kind, start.status) == ("call_read", "read", "pending")
        done = final_update(updates, "call_read")
        assert done.status == "completed"
        assert "Hello from the sample workspace." in tool_text(done)
        assert all(isinstance(u.used, int) and u.size == 128_000 for u in updates if isinstance(u, UsageUpdate))

        # We declared fs.readTextFile, so the README was read through the client (SPEC §3.24).
        assert [r["path"] for r in daemon.client.fs_reads] == [str(workspace / "README.md")]
        assert daemon.client.fs_reads[0]["session_id"] == session.session_id
        assert daemon.client.permission_requests == []  # reads are free in mode ask

        # §1.5.3: the prompt's answer comes after the turn's last update
        index, _ = daemon.wire.index_of_response("incoming", "session/prompt")
        assert all(m.get("method") != "session/update" for _, m in daemon.wire.frames[index + 1 :])
        assert_sdk_understands_every_frame(daemon.wire)


async def test_a_permission_allowed_then_one_rejected(daemon_env, workspace: Path, tmp_path: Path):
    async with tether_acp(daemon_env, workspace, tmp_path) as daemon:
        client = daemon.client
        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        sid = session.session_id

        # Allowed: the edit is written through fs/write_text_file (we declared it).
        client.answers.put_nowait("allow_once")
        result = await prompt(daemon, sid, "edit the readme")
        assert result.stop_reason == "end_turn"
        (asked,) = client.permission_requests
        assert asked["session_id"] == sid
        call = asked["tool_call"]
        assert (call.tool_call_id, call.kind, call.status) == ("call_edit", "edit", "pending")
        (diff,) = call.content
        assert isinstance(diff, FileEditToolCallContent)
        assert diff.path == str(workspace / "README.md")
        assert diff.old_text == README and "Hello, edited over ACP." in diff.new_text
        assert [(o.option_id, o.kind) for o in asked["options"]] == [
            ("allow_once", "allow_once"),
            ("allow_always", "allow_always"),
            ("reject_once", "reject_once"),
            ("reject_always", "reject_always"),
        ]
        assert client.fs_writes == [
            {
                "session_id": sid,
                "path": str(workspace / "README.md"),
                "content": "# Sample\n\nHello, edited over ACP.\n",
            }
        ]
        assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited over ACP.\n"
        edited = final_update(client.updates_for(sid), "call_edit")
        assert edited.status == "completed"

        # Rejected: the command does not run and the turn goes on to end_turn.
        client.updates.clear()
        client.answers.put_nowait("reject_once")
        result = await prompt(daemon, sid, "leave a marker")
        assert result.stop_reason == "end_turn"  # a rejection is not a cancel
        assert [r["tool_call"].tool_call_id for r in client.permission_requests] == ["call_edit", "call_marker"]
        marker_call = client.permission_requests[1]["tool_call"]
        assert marker_call.kind == "execute" and marker_call.raw_input["command"] == "echo ran > marker.txt"
        updates = client.updates_for(sid)
        rejected = final_update(updates, "call_marker")
        assert rejected.status == "failed" and "the user rejected" in tool_text(rejected)
        assert not any(
            isinstance(u, ToolCallProgress) and u.tool_call_id == "call_marker" and u.status == "in_progress"
            for u in updates
        )
        assert message_text(updates) == "Running.Finished."
        assert not (workspace / "marker.txt").exists()
        assert client.permission_handlers_running == 0
        assert_sdk_understands_every_frame(daemon.wire)


def withdrawals(wire: Wire) -> list[Any]:
    """Ids of the requests Tether withdrew, in either spelling: LSP's `$/cancelRequest`
    {"id"} (what Tether sends today) or ACP's `$/cancel_request` {"requestId"}."""
    out = []
    for m in wire.incoming():
        if m.get("method") == "$/cancelRequest":
            out.append(m["params"]["id"])
        elif m.get("method") == "$/cancel_request":
            out.append(m["params"]["requestId"])
    return out


async def test_cancel_while_a_permission_request_is_pending(daemon_env, workspace: Path, tmp_path: Path):
    async with tether_acp(daemon_env, workspace, tmp_path, sdk_errors_allowed=SDK_IGNORES_CANCEL_REQUEST) as daemon:
        client = daemon.client
        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        sid = session.session_id

        turn = asyncio.create_task(daemon.conn.prompt(session_id=sid, prompt=[text_block("leave a marker")]))
        await asyncio.wait_for(client.permission_asked.wait(), WAIT)
        (asked,) = daemon.wire.incoming("session/request_permission")
        await daemon.conn.cancel(session_id=sid)  # ... and the client never answers

        result = await asyncio.wait_for(turn, WAIT)
        assert result.stop_reason == "cancelled"  # a result, not an error
        updates = client.updates_for(sid)
        withdrawn = final_update(updates, "call_marker")
        assert withdrawn.status == "failed" and "not run: the turn was cancelled" in tool_text(withdrawn)
        assert not (workspace / "marker.txt").exists()

        # Tether withdrew its request before answering the prompt (today as LSP's
        # `$/cancelRequest` {"id"}, see test_withdrawal_uses_acp_spelling below).
        assert withdrawals(daemon.wire) == [asked["id"]]
        cancel_at = next(
            i
            for i, (d, m) in enumerate(daemon.wire.frames)
            if d == "incoming" and m.get("method") in ("$/cancelRequest", "$/cancel_request")
        )
        prompt_answered_at, _ = daemon.wire.index_of_response("incoming", "session/prompt")
        assert cancel_at < prompt_answered_at
        # The SDK (0.12.x) routes neither spelling: our request_permission handler is
        # still running, waiting for the user, as if nothing had been withdrawn.
        assert client.permission_handlers_running == 1

        # The user answers late. The SDK sends the answer; Tether ignores it, nothing runs.
        client.answers.put_nowait("allow_once")
        for _ in range(200):
            if any(d == "outgoing" and m.get("id") == asked["id"] for d, m in daemon.wire.frames):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the SDK never sent the late answer")
        stats = await asyncio.wait_for(daemon.conn.ext_method("tether/daemon/stats", {}), WAIT)
        assert stats["unknownResponses"] == 1 and stats["outgoingRequests"] == 0, stats
        assert not (workspace / "marker.txt").exists()

        # The session is usable again.
        result = await prompt(daemon, sid, "what does the readme say")
        assert result.stop_reason == "end_turn"
        assert_sdk_understands_every_frame(daemon.wire)


async def test_cancel_then_answer_cancelled_as_acp_asks_clients_to(daemon_env, workspace: Path, tmp_path: Path):
    # ACP (prompt-turn, cancellation): after session/cancel the client MUST answer pending
    # permission requests with the `cancelled` outcome. Whichever arrives first, the turn
    # ends `cancelled` and the command does not run.
    async with tether_acp(daemon_env, workspace, tmp_path, sdk_errors_allowed=SDK_IGNORES_CANCEL_REQUEST) as daemon:
        client = daemon.client
        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        sid = session.session_id
        turn = asyncio.create_task(daemon.conn.prompt(session_id=sid, prompt=[text_block("leave a marker")]))
        await asyncio.wait_for(client.permission_asked.wait(), WAIT)
        await daemon.conn.cancel(session_id=sid)
        client.answers.put_nowait("cancelled")
        result = await asyncio.wait_for(turn, WAIT)
        assert result.stop_reason == "cancelled"
        assert final_update(client.updates_for(sid), "call_marker").status == "failed"
        assert not (workspace / "marker.txt").exists()
        assert client.permission_handlers_running == 0


async def test_list_then_load_replays_before_answering_and_resume_does_not(daemon_env, workspace: Path, tmp_path: Path):
    async with tether_acp(daemon_env, workspace, tmp_path, name="first") as first:
        session = await asyncio.wait_for(first.conn.new_session(cwd=str(workspace)), WAIT)
        sid = session.session_id
        assert (await prompt(first, sid, "What does the README say?")).stop_reason == "end_turn"
        listed = await asyncio.wait_for(first.conn.list_sessions(cwd=str(workspace)), WAIT)
        (info,) = [s for s in listed.sessions if s.session_id == sid]
        assert info.cwd == str(workspace)
        assert info.title == "What does the README say?"
        assert info.updated_at and info.updated_at.endswith("Z")
        assert listed.next_cursor is None
        assert_sdk_understands_every_frame(first.wire)

    # A second daemon process (same TETHER_HOME): session/load replays the history.
    async with tether_acp(daemon_env, workspace, tmp_path, name="second") as second:
        listed = await asyncio.wait_for(second.conn.list_sessions(cwd=str(workspace)), WAIT)
        assert sid in [s.session_id for s in listed.sessions]

        loaded = await asyncio.wait_for(second.conn.load_session(cwd=str(workspace), session_id=sid), WAIT)
        # the slash command list follows the answer (SPEC §4.11): it may be on the wire, and even
        # delivered, by the time this task resumes; it is no part of the replay
        delivered_before_return = [u for _sid, u in second.client.updates if not isinstance(u, AvailableCommandsUpdate)]
        assert loaded.modes is not None and loaded.modes.current_mode_id == "ask"

        # On the wire: every replayed update precedes the load response (SPEC §1.5.2).
        answered_at, _ = second.wire.index_of_response("incoming", "session/load")
        await asyncio.wait_for(second.conn.list_sessions(cwd=str(workspace)), WAIT)  # a round trip
        updates_on_wire = [
            (i, m["params"]["update"]["sessionUpdate"])
            for i, (d, m) in enumerate(second.wire.frames)
            if d == "incoming" and m.get("method") == "session/update"
        ]
        replayed_on_wire = [i for i, kind in updates_on_wire if kind != "available_commands_update"]
        assert replayed_on_wire and max(replayed_on_wire) < answered_at
        # Through the SDK: all of them reached session_update before load_session returned.
        assert len(delivered_before_return) == len(replayed_on_wire)
        # after them, nothing but the slash command list, once, after the answer
        assert [(i > answered_at, kind) for i, kind in updates_on_wire[len(replayed_on_wire) :]] == [
            (True, "available_commands_update")
        ]
        assert sum(isinstance(u, AvailableCommandsUpdate) for _sid, u in second.client.updates) == 1
        second.client.updates[:] = [
            (s, u) for s, u in second.client.updates if not isinstance(u, AvailableCommandsUpdate)
        ]

        replay = second.client.updates_for(sid)
        assert [u.session_update for u in replay] == [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "agent_message_chunk",
        ]
        user, first_text, tool, last_text = replay
        assert isinstance(user, UserMessageChunk) and user.content.text == "What does the README say?"
        assert first_text.content.text == "Reading the README."
        assert isinstance(tool, ToolCallStart)
        assert (tool.tool_call_id, tool.kind, tool.status) == ("call_read", "read", "completed")
        assert "Hello from the sample workspace." in tool_text(tool)
        # a later step's text a paragraph apart: this client is not Tether's own (SPEC §3.6)
        assert last_text.content.text == "\n\nThe README says hello."

        # The loaded session is live.
        second.client.updates.clear()
        assert (await prompt(second, sid, "anything else?")).stop_reason == "end_turn"
        assert message_text(second.client.updates_for(sid)) == "Nothing scripted for that."
        assert_sdk_understands_every_frame(second.wire)

    # A third daemon: session/resume makes it live without replaying anything.
    async with tether_acp(daemon_env, workspace, tmp_path, name="third") as third:
        resumed = await asyncio.wait_for(third.conn.resume_session(cwd=str(workspace), session_id=sid), WAIT)
        assert resumed.modes is not None and resumed.modes.current_mode_id == "ask"
        await asyncio.wait_for(third.conn.list_sessions(cwd=str(workspace)), WAIT)  # a round trip
        assert third.client.updates == []
        assert third.wire.incoming("session/update") == []

        assert (await prompt(third, sid, "anything else?")).stop_reason == "end_turn"
        updates = third.client.updates_for(sid)
        assert not any(isinstance(u, UserMessageChunk) for u in updates)  # live turn, no replay
        assert message_text(updates) == "Nothing scripted for that."
        assert_sdk_understands_every_frame(third.wire)


# ---------------------------------------------------------------------------------
# ACP's request cancellation: `$/cancel_request` with params {requestId}, both ways.
# ---------------------------------------------------------------------------------


async def test_withdrawal_uses_acp_spelling(daemon_env, workspace: Path, tmp_path: Path):
    async with tether_acp(daemon_env, workspace, tmp_path, sdk_errors_allowed=SDK_IGNORES_CANCEL_REQUEST) as daemon:
        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        turn = asyncio.create_task(
            daemon.conn.prompt(session_id=session.session_id, prompt=[text_block("leave a marker")])
        )
        await asyncio.wait_for(daemon.client.permission_asked.wait(), WAIT)
        (asked,) = daemon.wire.incoming("session/request_permission")
        await daemon.conn.cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        daemon.client.answers.put_nowait("cancelled")  # let the SDK's handler finish
        assert [m["params"] for m in daemon.wire.incoming("$/cancel_request")] == [{"requestId": asked["id"]}]


async def test_acp_cancel_request_from_the_client_cancels_a_prompt(daemon_env, workspace: Path, tmp_path: Path):
    # The SDK has no high-level call for `$/cancel_request`; its public low-level
    # Connection (acp.spawn_stdio_connection) sends it as ACP spells it.
    first_update = asyncio.Event()

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        if method == "session/update":
            first_update.set()
            return None
        raise RequestError.method_not_found(method)

    wire = Wire()
    with open(tmp_path / "daemon.stderr", "wb") as stderr:
        async with spawn_stdio_connection(
            handler, *daemon_argv(), env=dict(daemon_env), cwd=workspace, stderr=stderr.fileno(), observers=[wire]
        ) as (conn, process):
            await asyncio.wait_for(conn.send_request("initialize", {"protocolVersion": 1}), WAIT)
            session = await asyncio.wait_for(
                conn.send_request("session/new", {"cwd": str(workspace), "mcpServers": []}), WAIT
            )
            turn = asyncio.create_task(
                conn.send_request(
                    "session/prompt",
                    {
                        "sessionId": session["sessionId"],
                        "prompt": [{"type": "text", "text": "stream slowly"}],
                    },
                )
            )
            await asyncio.wait_for(first_update.wait(), WAIT)
            (prompt_request,) = [m for d, m in wire.frames if d == "outgoing" and m.get("method") == "session/prompt"]
            await conn.send_notification("$/cancel_request", {"requestId": prompt_request["id"]})
            # ACP: the prompt answers with a result (stopReason cancelled) or a -32800 error.
            try:
                result = await asyncio.wait_for(turn, WAIT)
            except RequestError as exc:
                assert exc.code == -32800
            else:
                assert result["stopReason"] == "cancelled", result
    assert process.returncode == 0


@pytest.mark.parametrize("bad_path", ["relative/README.md", "/etc/hostname"])
async def test_the_client_refuses_paths_it_must_not_serve(bad_path: str, workspace: Path):
    # The test client itself (not Tether): fs requests outside the workspace are errors.
    client = ConformanceClient(workspace)
    with pytest.raises(RequestError) as raised:
        await client.read_text_file(session_id="sess_x", path=bad_path)
    assert raised.value.code == -32602
    assert json.dumps(raised.value.to_error_obj())  # serialisable as a JSON-RPC error


async def test_the_sdk_switches_model_and_mode_through_config_options(daemon_env, workspace: Path, tmp_path: Path):
    env = {**daemon_env, "TETHER_MODELS": "small,large"}
    async with tether_acp(env, workspace, tmp_path) as daemon:
        session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), WAIT)
        options = {o.id: o for o in session.config_options or []}
        assert [o.value for o in options["model"].options] == ["default", "small", "large"]
        assert options["model"].category == "model" and options["mode"].current_value == "ask"

        sid = session.session_id
        answer = await asyncio.wait_for(
            daemon.conn.set_config_option(config_id="model", session_id=sid, value="large"), WAIT
        )
        assert {o.id: o.current_value for o in answer.config_options} == {"model": "large", "mode": "ask"}
        answer = await asyncio.wait_for(
            daemon.conn.set_config_option(config_id="mode", session_id=sid, value="read-only"), WAIT
        )
        assert {o.id: o.current_value for o in answer.config_options} == {"model": "large", "mode": "read-only"}
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(daemon.conn.set_config_option(config_id="model", session_id=sid, value="huge"), WAIT)
        assert "small, large" in str(refused.value)
        await asyncio.wait_for(daemon.conn.set_session_mode(mode_id="ask", session_id=sid), WAIT)
        await asyncio.wait_for(daemon.conn.list_sessions(cwd=str(workspace)), WAIT)  # the updates are in

        updates = [u for u in daemon.client.updates_for(sid) if u.session_update != "available_commands_update"]
        assert [u.session_update for u in updates] == ["current_mode_update", "config_option_update"]
        assert updates[0].current_mode_id == "read-only"
        assert {o.id: o.current_value for o in updates[1].config_options} == {"model": "large", "mode": "ask"}
        assert_sdk_understands_every_frame(daemon.wire)
