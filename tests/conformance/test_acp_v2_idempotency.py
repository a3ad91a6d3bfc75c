"""Idempotency keys on `session/prompt` (SPEC §12.5): at most one insertion per (session, key).

The official TypeScript SDK's v2 client (tests/conformance/ts/v2_idempotency.mjs) retries a
keyed prompt while it is held behind a running turn, and after both turns; a new key runs
a new turn and the same key on another session is that session's own. A v1 client retries
with `_meta.tether.idempotencyKey` during and after the turn, and a v2 and a v1 client
retry after the daemon restarted (the key is in the session's history database).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from test_acp_v2_typescript_sdk import run_v2_client

from daemon_harness import EXAMPLES

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "v2-idempotency.json"


def _users(updates: list[dict[str, Any]]) -> list[str]:
    return [u["messageId"] for u in updates if u["sessionUpdate"] == "user_message"]


def test_a_retry_of_a_held_prompt_gets_its_message_id_and_runs_no_second_turn(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    summary = run_v2_client(env, workspace, "v2_idempotency.mjs", "v2-idempotency.json")

    held = summary["held"]["messageId"]
    assert summary["retryHeld"] == summary["held"] and held != summary["slow"]["messageId"]
    # two turns ran (the slow one, the keyed one), each shown once
    assert _users(summary["during"]) == [summary["slow"]["messageId"], held]
    assert summary["retryAfter"] == summary["held"]
    # the next turn is the new key's: the retry after the turn inserted nothing
    new = summary["newKey"]["messageId"]
    assert new not in (held, summary["slow"]["messageId"])
    assert _users(summary["afterNewKey"]) == [new]
    other = summary["otherSession"]["messageId"]
    assert other not in (held, new) and _users(summary["other"]) == [other]
    assert (
        summary["badKey"]["code"] == -32602
        and "idempotencyKey must be a non-empty string" in summary["badKey"]["message"]
    )


class Ndjson:
    """`tether acp` over NDJSON: requests answered in any order, notifications kept."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc, self.ids, self.notes = proc, 0, []
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, workspace: Path, env: dict[str, str], version: int) -> Ndjson:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tether",
            "acp",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
            cwd=workspace,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        client = cls(proc)
        init = (
            {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}
            if version == 2
            else {"protocolVersion": 1, "clientCapabilities": {}}
        )
        assert (await client.request("initialize", init))["result"]["protocolVersion"] == version
        return client

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for line in self.proc.stdout:
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.waiting.pop(message["id"]).set_result(message)
            elif "method" in message:
                self.notes.append(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.ids] = future
        assert self.proc.stdin is not None
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}).encode() + b"\n"
        )
        return await asyncio.wait_for(future, 30)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n")

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        await asyncio.wait_for(self.proc.wait(), 20)
        self.reader.cancel()


def _keyed(session_id: str, text: str, key: str, version: int) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    if version == 2:
        return {**params, "idempotencyKey": key}
    return {**params, "_meta": {"tether": {"idempotencyKey": key}}}


async def _replayed_prompts(workspace: Path, env: dict[str, str], session_id: str) -> list[str]:
    """The user messages a v1 `session/load` replays: what the session's history holds."""
    client = await Ndjson.start(workspace, env, 1)
    await client.request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    await client.close()
    return [
        n["params"]["update"]["content"]["text"]
        for n in client.notes
        if n.get("method") == "session/update" and n["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]


async def test_v1_retries_during_and_after_the_turn_and_both_versions_after_a_restart(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    first = await Ndjson.start(workspace, daemon_env, 1)
    session_id = (await first.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["result"]["sessionId"]
    keyed = _keyed(session_id, "slow first, keyed", "key-A", 1)
    # the retry is sent while the first request's turn runs: both get the turn's answer
    original, during = await asyncio.gather(
        first.request("session/prompt", keyed), first.request("session/prompt", keyed)
    )
    after = await first.request("session/prompt", keyed)
    other = await first.request("session/prompt", _keyed(session_id, "keyed again", "key-B", 1))
    await first.close()

    answer = original["result"]
    turn_id = answer["_meta"]["tether"]["turnId"]
    assert answer["stopReason"] == "end_turn" and during["result"] == answer and after["result"] == answer
    assert other["result"]["_meta"]["tether"]["turnId"] != turn_id
    assert await _replayed_prompts(workspace, daemon_env, session_id) == ["slow first, keyed", "keyed again"]

    # a new daemon: the key is found in the session's history
    v2 = await Ndjson.start(workspace, daemon_env, 2)
    await v2.request("session/resume", {"sessionId": session_id, "cwd": str(workspace)})  # v2 has no session/load
    again_v2 = await v2.request("session/prompt", _keyed(session_id, "slow first, keyed", "key-A", 2))
    await v2.close()
    assert again_v2["result"] == {"messageId": f"{turn_id}.0"}
    v1 = await Ndjson.start(workspace, daemon_env, 1)
    await v1.request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    again_v1 = await v1.request("session/prompt", keyed)
    await v1.close()
    assert again_v1["result"] == answer
    assert await _replayed_prompts(workspace, daemon_env, session_id) == ["slow first, keyed", "keyed again"]


async def test_a_key_whose_prompt_was_withdrawn_before_its_turn_is_free_again(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    client = await Ndjson.start(workspace, daemon_env, 1)
    session_id = (await client.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["result"]["sessionId"]
    slow = asyncio.ensure_future(client.request("session/prompt", _keyed(session_id, "slow first", "key-S", 1)))
    keyed = _keyed(session_id, "keyed: after a withdrawal", "key-W", 1)
    held = asyncio.ensure_future(client.request("session/prompt", keyed))

    def queued() -> bool:  # the keyed prompt is listed in the session's queue
        return any(
            ((n["params"]["update"].get("_meta") or {}).get("tether") or {}).get("queue")
            for n in client.notes
            if n.get("method") == "session/update"
        )

    async with asyncio.timeout(20):
        while not queued():
            await asyncio.sleep(0.02)
    client.notify("session/cancel", {"sessionId": session_id, "_meta": {"tether": {"cancelQueued": True}}})
    assert (await held)["result"]["stopReason"] == "cancelled"
    assert (await slow)["result"]["stopReason"] == "cancelled"
    again = await client.request("session/prompt", keyed)  # nothing was inserted under key-W: it runs now
    await client.close()

    assert again["result"]["stopReason"] == "end_turn"
    assert await _replayed_prompts(workspace, daemon_env, session_id) == ["slow first", "keyed: after a withdrawal"]


async def test_a_key_reused_with_another_prompt_is_refused_on_both_versions_and_inserts_nothing(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    """The same key with a different prompt is not a retry: `-32602` naming the key, and the
    second prompt is neither inserted nor answered as the first (the user would lose it
    without a word). The very same prompt again keeps getting the first answer, also after
    a restart, where the key's prompt is known from the history."""
    v1 = await Ndjson.start(workspace, daemon_env, 1)
    session_id = (await v1.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["result"]["sessionId"]
    first = await v1.request("session/prompt", _keyed(session_id, "keyed first", "key-R", 1))
    other_v1 = await v1.request("session/prompt", _keyed(session_id, "another prompt", "key-R", 1))
    same_v1 = await v1.request("session/prompt", _keyed(session_id, "keyed first", "key-R", 1))
    await v1.close()
    assert same_v1["result"] == first["result"]
    assert other_v1["error"]["code"] == -32602
    assert "'key-R' was already used on this session for a different prompt" in other_v1["error"]["message"]

    v2 = await Ndjson.start(workspace, daemon_env, 2)  # a new daemon: the first prompt is known from the history
    await v2.request("session/resume", {"sessionId": session_id, "cwd": str(workspace)})
    other_v2 = await v2.request("session/prompt", _keyed(session_id, "keyed first, edited", "key-R", 2))
    same_v2 = await v2.request("session/prompt", _keyed(session_id, "keyed first", "key-R", 2))
    await v2.close()
    assert other_v2["error"]["code"] == -32602 and "key-R" in other_v2["error"]["message"]
    assert same_v2["result"] == {"messageId": f"{first['result']['_meta']['tether']['turnId']}.0"}
    assert await _replayed_prompts(workspace, daemon_env, session_id) == ["keyed first"]
