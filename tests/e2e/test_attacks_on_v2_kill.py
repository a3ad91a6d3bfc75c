"""A hostile model's commands against the per-item cancel (SPEC §12.4, §5.13): whatever a
command starts (a `setsid` daemon, a double fork, a child that ignores SIGTERM, one that
stops itself, one in a PID namespace of its own), once `tool_call/cancel` or
`terminal/cancel` stopped the call no process of it runs, and the turn goes on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import TYPE_CHECKING

import pytest
from v2_window import V2Window

from daemon_harness import host_pids, until

if TYPE_CHECKING:
    from pathlib import Path

# each escape leaves a process with a marker argument (`<n>.<run>`) to look for from outside
ESCAPES = {
    300: "setsid nohup sleep {m} >/dev/null 2>&1 &",  # a daemon in a session of its own
    301: "(setsid sleep {m} >/dev/null 2>&1 &)",  # a double fork: its parent is gone at once
    302: 'sh -c \'trap "" TERM; exec sleep "$1"\' ignorer {m} &',  # SIGTERM ignored
    303: "(setsid sh -c 'kill -STOP $$; exec sleep \"$1\"' stopper {m} &)",  # stopped, in its own session
    304: "(setsid unshare -rpf sleep {m} >/dev/null 2>&1 &)",  # its own PID namespace
}


def _script(folder: Path, run: str) -> Path:
    command = "\n".join([*(line.format(m=f"{n}.{run}") for n, line in ESCAPES.items()), f"sleep 31.{run}"])
    replies = [
        {
            "when": {"step": 1},
            "text": "Starting the server.",
            "tool_calls": [{"id": "call_serve", "name": "run_command", "arguments": {"command": command}}],
        },
        {"when": {"step": 2}, "text": "It was stopped; nothing of it is left."},
    ]
    path = folder / "escapes.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


async def _prompted(spawn_daemon, workspace: Path, folder: Path, sandbox: str, replies: list, prompt: str):
    """A v2 window on a daemon with `sandbox` whose model answers `replies`, `prompt` sent."""
    script = folder / "replies.json"
    script.write_text(json.dumps({"replies": replies}))
    config = folder / "config.toml"
    config.write_text(f'sandbox = "{sandbox}"\n')
    daemon = await spawn_daemon(script=script, initialize=False, env={"TETHER_CONFIG": str(config)})
    window = V2Window(daemon.client)
    await window.initialize()
    session = await window.new_session(workspace)
    await window.prompt(session, prompt)
    return daemon, window, session


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("how", ["tool_call/cancel", "terminal/cancel"])
async def test_no_process_of_a_cancelled_command_survives(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
    how: str,
    sandbox: str,
) -> None:
    run = f"{os.getpid():07d}{len(how)}{len(sandbox)}"
    config = tmp_path / "config.toml"
    config.write_text(f'sandbox = "{sandbox}"\n')  # "off": the user's own processes, asked every time
    daemon = await spawn_daemon(script=_script(tmp_path, run), initialize=False, env={"TETHER_CONFIG": str(config)})
    window = V2Window(daemon.client)
    await window.initialize({"_meta": {"terminal_output": True}})
    session = await window.new_session(workspace)
    await window.prompt(session, "start the server")
    marked = {n: f"{n}.{run}" for n in ESCAPES}
    # all running before the cancel (`unshare` may be refused: bubblewrap allows no user namespace)
    await until(lambda: host_pids(f"31.{run}") and all(host_pids(m) for n, m in marked.items() if n != 304), timeout=30)
    target = {"toolCallId": "call_serve"} if how == "tool_call/cancel" else {"terminalId": "call_serve"}
    try:
        answer = await daemon.client.request(how, {"sessionId": session, **target})
        ended = await window.idle(session)
        with contextlib.suppress(TimeoutError):  # a sandbox's inner processes die a moment after its leader
            await until(lambda: not any(host_pids(m) for m in [*marked.values(), f"31.{run}"]), timeout=10)
    finally:
        left = {n: host_pids(m) for n, m in marked.items()}
        for pids in left.values():
            for pid in pids:
                os.kill(pid, 9)
    assert answer == {}
    assert left == {n: [] for n in ESCAPES}
    assert ended == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    final = [u for u in window.of(session, "tool_call_update") if u.get("status")][-1]
    assert final["status"] == "cancelled"
    assert final["content"][0]["content"]["text"].startswith("cancelled by the user")  # what the model is told
    said = [u["content"]["text"] for u in window.of(session, "agent_message_chunk")]
    assert said[-1] == "It was stopped; nothing of it is left."  # the turn went on


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_command_that_stops_its_own_shell_is_still_cancelled(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
    sandbox: str,
) -> None:
    run = f"{os.getpid():07d}9{len(sandbox)}"
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {
                    "id": "call_stop",
                    "name": "run_command",
                    "arguments": {"command": f"sleep 35.{run} & kill -STOP $$; sleep 36.{run}"},
                }
            ],
        },  # the shell stops itself
        {"when": {"step": 2}, "text": "Stopped."},
    ]
    daemon, window, session = await _prompted(spawn_daemon, workspace, tmp_path, sandbox, replies, "run it")
    await until(lambda: host_pids(f"35.{run}"), timeout=30)

    answer = await daemon.client.request("tool_call/cancel", {"sessionId": session, "toolCallId": "call_stop"})
    ended = await window.idle(session)
    with contextlib.suppress(TimeoutError):
        await until(lambda: not host_pids(f"35.{run}"), timeout=10)

    assert answer == {} and ended["stopReason"] == "end_turn"
    assert host_pids(f"35.{run}") == [] and host_pids(f"36.{run}") == []
    assert [u["status"] for u in window.of(session, "tool_call_update") if u.get("status")][-1] == "cancelled"


async def test_a_cancel_naming_another_sessions_call_touches_nothing(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    run = f"{os.getpid():07d}77"
    replies = [
        {
            "when": {"step": 1, "user": "^run"},
            "tool_calls": [{"id": "call_1", "name": "run_command", "arguments": {"command": f"sleep 37.{run}"}}],
        },
        {"when": {"step": 2, "user": "^run"}, "text": "Stopped."},
        {"when": {"step": 1, "user": "^hello"}, "text": "Hello."},
    ]
    script = tmp_path / "two.json"
    script.write_text(json.dumps({"replies": replies}))
    daemon = await spawn_daemon(script=script, initialize=False)
    window = V2Window(daemon.client)
    await window.initialize({"_meta": {"terminal_output": True}})
    running, other = await window.new_session(workspace), await window.new_session(workspace)
    await window.prompt(other, "hello")
    await window.idle(other)
    await window.prompt(running, "run the check")
    await until(lambda: host_pids(f"37.{run}"), timeout=30)

    for method, key in (
        ("tool_call/cancel", "toolCallId"),
        ("terminal/cancel", "terminalId"),
        ("_tether/toolCall/cancel", "toolCallId"),
    ):
        error = await window.refused(method, {"sessionId": other, key: "call_1"})
        assert error.code == -32602 and other in error.message and running not in error.message
    window.client.peer.notify("session/cancel", {"sessionId": other})
    await asyncio.sleep(0.5)
    assert host_pids(f"37.{run}")  # still running: nothing of the other session stopped it
    assert window.states(running) == ["running", "requires_action", "running"]

    await daemon.client.request("tool_call/cancel", {"sessionId": running, "toolCallId": "call_1"})
    assert (await window.idle(running))["stopReason"] == "end_turn"


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_finished_commands_escaped_children_die_with_it(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
    sandbox: str,
) -> None:
    run = f"{os.getpid():07d}8{len(sandbox)}"
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {
                    "id": "call_bg",
                    "name": "run_command",
                    "arguments": {
                        "command": f"(setsid sleep 38.{run} >/dev/null 2>&1 &); setsid nohup sleep 39.{run} >/dev/null 2>&1 & "
                        f"sleep 0.5; echo started"
                    },
                }
            ],
        },
        {"when": {"step": 2}, "text": "Started."},
    ]
    _daemon, window, session = await _prompted(
        spawn_daemon,
        workspace,
        tmp_path,
        sandbox,
        replies,
        "start it in the background",
    )
    ended = await window.idle(session)
    with contextlib.suppress(TimeoutError):
        await until(lambda: not host_pids(f"38.{run}") and not host_pids(f"39.{run}"), timeout=10)
    left = host_pids(f"38.{run}") + host_pids(f"39.{run}")
    for pid in left:
        os.kill(pid, 9)

    assert ended["stopReason"] == "end_turn"
    final = [u for u in window.of(session, "tool_call_update") if u.get("status")][-1]
    assert final["status"] == "completed" and "started" in final["content"][0]["content"]["text"]
    assert left == []  # SPEC §5.13: background processes do not outlive the call, `setsid` ones too
