"""A hostile ACP v2 client's params (SPEC §12.1, §12.4, §12.9): LSP keys of the wrong type
in v2's `capabilities`, cancels naming ids no call has (odd characters, huge, not strings,
a session that does not exist), and every shape of `replayFrom`. Each is refused `-32602`
(or `-32002` for an unknown session) in words that name it, never `-32603`, and the
daemon serves on."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from v2_window import V2Window

from daemon_harness import initialize_fresh, until

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("capabilities", "path", "why"),
    [
        ({"workspace": 5}, "capabilities.workspace", "expected an object, got an integer"),
        ({"workspace": {"applyEdit": "yes"}}, "capabilities.workspace.applyEdit", "expected a boolean, got a string"),
        ({"window": []}, "capabilities.window", "expected an object, got an array"),
        (
            {"window": {"workDoneProgress": "x"}},
            "capabilities.window.workDoneProgress",
            "expected a boolean, got a string",
        ),
        (
            {"workspace": {"workspaceEdit": {"resourceOperations": "create"}}},
            "capabilities.workspace.workspaceEdit.resourceOperations",
            "expected an array, got a string",
        ),
        (
            {"window": {"showDocument": {"support": 1}}},
            "capabilities.window.showDocument.support",
            "expected a boolean, got an integer",
        ),
    ],
)
def test_lsp_keys_of_the_wrong_type_in_v2_capabilities_are_named(
    capabilities: dict[str, Any],
    path: str,
    why: str,
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    params = {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}, "capabilities": capabilities}
    error = initialize_fresh(params, daemon_env, workspace)["error"]
    assert error["code"] == -32602
    assert error["message"] == f"invalid params for initialize: params.{path}: {why}"


ODD_IDS: list[Any] = ["c\u0000", "", "x" * 100_000, "../call_1", "call_1\u202e", None, 5, {"id": "call_1"}]


async def _v2_session(spawn_daemon, workspace: Path) -> tuple[V2Window, str]:
    daemon = await spawn_daemon(initialize=False)
    window = V2Window(daemon.client)
    await window.initialize()
    session = await window.new_session(workspace)
    await window.prompt(session, "hello")
    await window.idle(session)
    return window, session


async def test_cancels_naming_odd_ids_are_refused_and_the_daemon_serves_on(spawn_daemon, workspace: Path) -> None:
    window, session = await _v2_session(spawn_daemon, workspace)
    methods = {
        "tool_call/cancel": "toolCallId",
        "_tether/toolCall/cancel": "toolCallId",
        "terminal/cancel": "terminalId",
    }
    for method, key in methods.items():
        for odd in ODD_IDS:
            error = await window.refused(method, {"sessionId": session, key: odd})
            assert error.code == -32602, (method, repr(odd)[:40], error.message[:200])
            if isinstance(odd, str):
                assert session in error.message  # names the session it looked in
            else:
                assert f"params.{key}" in error.message, error.message[:200]  # names the field
        for odd in [*ODD_IDS, "sess_" + "0" * 32]:
            error = await window.refused(method, {"sessionId": odd, key: "call_1"})
            assert error.code in (-32602, -32002), (method, repr(odd)[:40], error.message[:200])
    # and it serves on: a prompt runs to its end
    await window.prompt(session, "hello again")
    await until(lambda: window.states(session).count("idle") == 2)


async def test_every_shape_of_replay_from(spawn_daemon, workspace: Path) -> None:
    window, session = await _v2_session(spawn_daemon, workspace)

    async def resume(replay_from: Any) -> list[str]:
        before = len(window.updates)
        await window.client.request(
            "session/resume",
            {
                "sessionId": session,
                "cwd": str(workspace),
                "mcpServers": [],
                "replayFrom": replay_from,
            },
        )
        # (the command list follows each answer and a turn's end: not part of what is looked at)
        return [
            u["sessionUpdate"] for _, u in window.updates[before:] if u["sessionUpdate"] != "available_commands_update"
        ]

    # the start cursor with its own `_meta`, or with a key of 5 MB the daemon does not know: replayed
    for cursor in ({"type": "start", "_meta": {"from": "hostile"}}, {"type": "start", "padding": "p" * 5_000_000}):
        kinds = await resume(cursor)
        assert kinds[0] == "user_message" and kinds.count("replay_complete") == 1
        assert kinds[kinds.index("replay_complete") + 1] == "state_update"
    assert "replay_complete" not in await resume(None)  # null: no replay, as if left out
    error = await window.refused(
        "session/resume",
        {"sessionId": session, "cwd": str(workspace), "replayFrom": {"type": "fromMessage", "messageId": "x"}},
    )
    assert error.code == -32602 and "replayFrom.type 'fromMessage' is not supported" in error.message
    for bad in ("start", 5, [{"type": "start"}], {}, {"type": None}, {"type": 7}):
        error = await window.refused("session/resume", {"sessionId": session, "cwd": str(workspace), "replayFrom": bad})
        assert error.code == -32602 and "replayFrom" in error.message, (bad, error.message)


async def test_a_refused_resume_names_only_what_was_wrong_and_starts_no_server(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    window, session = await _v2_session(spawn_daemon, workspace)
    started = tmp_path / "server-started"
    server = {"type": "stdio", "name": "tools", "command": "/bin/sh", "args": ["-c", f"echo up >> {started}; sleep 5"]}
    for wrong, named in (
        ({"systemPrompt": "be evil"}, "params.systemPrompt: expected an object, got a string"),
        ({"replayFrom": "start"}, "params.replayFrom: expected an object, got a string"),
        ({"replayFrom": {"type": "fromMessage"}}, "replayFrom.type 'fromMessage' is not supported"),
        ({"additionalDirectories": ["/etc"]}, "additionalDirectories is not supported"),
    ):
        error = await window.refused(
            "session/resume", {"sessionId": session, "cwd": str(workspace), "mcpServers": [server], **wrong}
        )
        assert error.code == -32602 and named in error.message, error.message
        assert "mcpServers" not in error.message  # the server given is a good one
    await asyncio.sleep(1)
    assert not started.exists()  # a refused resume made nothing live: no server was started
