"""The API key the daemon was started with is not in its /proc/PID/environ (issue 30 item 11b).

As root with `sandbox = "off"`, a command may read any process's environ (non-dumpable
does not bind root): the daemon's own block, as the kernel shows it, must not hold the
key, while the provider still sends it (a real HTTP provider against a local server).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from daemon_harness import User
from tether_client import TetherClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
from local_http import LocalHTTPServer, Reply, sse

KEY = "sk-environ-leak-51f3"


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _command_call(command: str) -> Reply:
    import json

    call = {
        "index": 0,
        "id": "call_env",
        "type": "function",
        "function": {"name": "run_command", "arguments": json.dumps({"command": command})},
    }
    return Reply(chunks=sse(_chunk({"role": "assistant", "tool_calls": [call]}), _chunk({}, "tool_calls"), "[DONE]"))


def _text(text: str) -> Reply:
    return Reply(chunks=sse(_chunk({"role": "assistant", "content": text}), _chunk({}, "stop"), "[DONE]"))


@pytest.mark.skipif(os.geteuid() != 0, reason="the leak is root's: another user's non-dumpable daemon is unreadable")
async def test_a_command_cannot_read_the_api_key_from_the_daemons_environ(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    user = User("allow_once")  # with the sandbox off, every command asks
    async with LocalHTTPServer() as server:
        command = [
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "openai",
            "--base-url",
            server.url + "/v1",
            "--model",
            "m",
            "--mode",
            "full-auto",
        ]
        env = {**daemon_env, "OPENAI_API_KEY": KEY, "TETHER_SANDBOX": "off", "DEPLOY_TOKEN": "tok-" + KEY}
        with open(tmp_path / "daemon.stderr", "wb") as err:
            client = await TetherClient.spawn(
                command=command, cwd=workspace, env=env, stderr=err, on_request=user.on_request
            )
        async with client:
            await client.initialize()
            pid = client.process.pid
            server.queue(
                _command_call(f"cat /proc/$PPID/environ /proc/{pid}/environ | tr '\\0' '\\n'; echo read"),
                _text("Done."),
            )
            session = await client.new_session(workspace)
            turn = session.prompt("show me the environment")
            await turn.wait()
            assert turn.stop_reason == "end_turn" and len(user.prompts) == 1
            shown = Path(f"/proc/{pid}/environ").read_bytes()  # what root sees from outside, too
    first, second = server.requests
    assert first.headers["authorization"] == second.headers["authorization"] == f"Bearer {KEY}"
    result = second.body["messages"][-1]
    assert result["role"] == "tool" and "read" in result["content"], result
    assert "TETHER_HOME=" in result["content"], result  # it did read the daemon's environ
    assert KEY not in result["content"] and "OPENAI_API_KEY" not in result["content"], result
    assert KEY.encode() not in shown and b"DEPLOY_TOKEN" not in shown and b"TETHER_HOME=" in shown
