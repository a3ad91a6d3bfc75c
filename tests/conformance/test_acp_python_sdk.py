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
import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from acp_sdk_harness import Wire

# ---------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------


def test_the_client_implements_every_method_of_the_sdk_client_interface() -> None:
    # The SDK answers null for a Client method that is missing, so a missing one would
    # hide what Tether asked. Fail when an SDK upgrade adds a method we do not implement.
    from acp.interfaces import Client
    from acp_sdk_harness import ConformanceClient

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
    from acp.schema import ToolCallStart, UsageUpdate
    from acp_sdk_harness import (
        WAIT,
        assert_sdk_understands_every_frame,
        final_update,
        initialize_client,
        kinds,
        message_text,
        prompt,
        tether_acp,
        tool_text,
    )

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
    from acp.schema import FileEditToolCallContent, ToolCallProgress
    from acp_sdk_harness import (
        README,
        WAIT,
        assert_sdk_understands_every_frame,
        final_update,
        message_text,
        prompt,
        tether_acp,
        tool_text,
    )

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
    from acp import text_block
    from acp_sdk_harness import (
        SDK_IGNORES_CANCEL_REQUEST,
        WAIT,
        assert_sdk_understands_every_frame,
        final_update,
        prompt,
        tether_acp,
        tool_text,
    )

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
    from acp import text_block
    from acp_sdk_harness import SDK_IGNORES_CANCEL_REQUEST, WAIT, final_update, tether_acp

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
    from acp.schema import AvailableCommandsUpdate, ToolCallStart, UserMessageChunk
    from acp_sdk_harness import WAIT, assert_sdk_understands_every_frame, message_text, prompt, tether_acp, tool_text

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
    from acp import text_block
    from acp_sdk_harness import SDK_IGNORES_CANCEL_REQUEST, WAIT, tether_acp

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
    from acp import RequestError, spawn_stdio_connection
    from acp_sdk_harness import WAIT, Wire, daemon_argv

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
    from acp import RequestError
    from acp_sdk_harness import ConformanceClient

    client = ConformanceClient(workspace)
    with pytest.raises(RequestError) as raised:
        await client.read_text_file(session_id="sess_x", path=bad_path)
    assert raised.value.code == -32602
    assert json.dumps(raised.value.to_error_obj())  # serialisable as a JSON-RPC error


async def test_the_sdk_switches_model_and_mode_through_config_options(daemon_env, workspace: Path, tmp_path: Path):
    from acp import RequestError
    from acp_sdk_harness import WAIT, assert_sdk_understands_every_frame, tether_acp

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
