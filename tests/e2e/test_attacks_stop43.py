"""Stop-43 attacks through the real daemon: what a turn leaves behind (a cancelled turn's half
thought, unanswered question or failed step) must not reach the next turn of its session or
another session once the turn's objects are kept per session (turn43); hostile prompt blocks
answered, stored and replayed as main does (codec43); history written by another process between
two prompts, or while one starts (checks43); v2 idle states in the Preview's shapes (shapes43);
a restored `remember` location and an MCP server's question posing as Tether's notice."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from tether_client import ClientError
from tether_protocol import encode_lsp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply
from test_attacks_on_restored_calls import read_readme_snapshot
from test_lone_surrogates import _raw_request
from test_real_provider_turn import FAKE_KEY, KEY_ENV, serve_command, text_chunks
from test_rewind import _sessions

from daemon_harness import text_of, until


def _script(tmp_path: Path, *replies: dict[str, Any]) -> Path:
    script = tmp_path / "stop43.json"
    script.write_text(json.dumps({"replies": list(replies)}))
    return script


async def _first_update(turn, kind: str) -> None:
    async def seen() -> None:
        async for update in turn:
            if update["sessionUpdate"] == kind:
                return

    await asyncio.wait_for(seen(), 30)


@pytest.mark.parametrize(
    "held", ["<thinking>the model muses, never shown as its answer", "an answer cut at a half tag <thin"]
)
async def test_a_cancelled_turns_half_thought_does_not_reach_the_next_turn(
    spawn_daemon, workspace: Path, tmp_path: Path, held: str
) -> None:
    """Turn 1 is cancelled while its model's text is inside a `<thinking>` block (or the
    sanitiser holds half a tag); turn 2's answer must come whole, as a message, untouched."""
    slow = {"when": {"user": "^first"}, "chunks": [held, *[" more"] * 200], "delay_ms": 50}
    script = _script(tmp_path, slow, {"when": {"user": "^second"}, "text": "king> is the whole answer."})
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    first = session.prompt("first")
    kind = "agent_thought_chunk" if held.startswith("<thinking>") else "agent_message_chunk"
    await _first_update(first, kind)
    await session.cancel()
    await first.wait()
    assert first.stop_reason == "cancelled"
    second = session.prompt("second")
    updates = [u async for u in second]
    assert second.stop_reason == "end_turn"
    assert text_of(updates) == "king> is the whole answer."
    assert text_of(updates, "agent_thought_chunk") == ""


WRITE = {"id": "call_write", "name": "write_file", "arguments": {"path": "stop43.txt", "content": "written\n"}}


async def test_a_cancelled_turns_unanswered_question_does_not_answer_the_next(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Turn 1's write waits for approval; the user cancels instead of answering. Turn 2 makes
    the same write: it is asked again (the first question is no approval), and refused there."""
    script = _script(
        tmp_path,
        {"when": {"step": 1}, "text": "Running.", "tool_calls": [WRITE]},
        {"when": {"step": 2}, "text": "After."},
    )
    daemon = await spawn_daemon(script=script)
    asked: list[dict] = []
    first_open = asyncio.Event()

    async def on_request(method: str, params: dict):
        asked.append(params)
        if len(asked) == 1:
            first_open.set()
            await asyncio.Event().wait()  # never answered: the user cancels the turn
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    first = session.prompt("run it")
    first.start()
    await asyncio.wait_for(first_open.wait(), 30)
    await session.cancel()
    await first.wait()
    assert first.stop_reason == "cancelled"
    second = session.prompt("run it again")
    updates = [u async for u in second]
    assert second.stop_reason == "end_turn"
    assert len(asked) == 2 and asked[1]["toolCall"]["toolCallId"] == "call_write"
    assert not (workspace / "stop43.txt").exists()  # refused in turn 2: never written
    statuses = [u.get("status") for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert statuses[-1] == "failed"


async def test_one_sessions_cancelled_question_neither_blocks_nor_answers_anothers(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Two sessions of one workspace ask about the same write; questions go one at a time, so
    B's waits behind A's. A's turn is cancelled unanswered: B is asked next, and allowing it
    makes B's write only (A's question was no approval, A's write never happens)."""
    script = _script(
        tmp_path,
        {"when": {"step": 1}, "text": "Running.", "tool_calls": [WRITE]},
        {"when": {"step": 2}, "text": "After."},
    )
    daemon = await spawn_daemon(script=script)
    asked: list[str] = []

    async def on_request(method: str, params: dict):
        asked.append(params["sessionId"])
        if len(asked) == 1:
            await asyncio.Event().wait()  # A's: never answered
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    a = await daemon.client.new_session(workspace)
    b = await daemon.client.new_session(workspace)
    turn_a = a.prompt("write a")
    turn_a.start()
    await until(lambda: len(asked) == 1, 30)
    turn_b = b.prompt("write b")
    turn_b.start()
    await asyncio.sleep(0.5)
    assert asked == [a.id] and turn_b.stop_reason is None  # B waits its turn to ask
    await a.cancel()
    await turn_a.wait()
    assert turn_a.stop_reason == "cancelled" and not (workspace / "stop43.txt").exists()
    await turn_b.wait()
    assert asked == [a.id, b.id] and turn_b.stop_reason == "end_turn"
    assert (workspace / "stop43.txt").read_text() == "written\n"
    finals = [u for u in turn_a.updates if u.get("toolCallId") == "call_write" and u.get("status")]
    assert finals and finals[-1]["status"] != "completed"


async def test_a_failed_steps_error_is_not_the_next_turns(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    """Turn 1's model call fails; turn 2 succeeds: turn 2's run report and answer carry no
    part of turn 1's failure."""
    script = _script(
        tmp_path,
        {
            "when": {"user": "^first"},
            "chunks": ["partial "],
            "error": {"message": "stop43 upstream broke", "after_chunks": 1},
        },
        {"when": {"user": "^second"}, "text": "fine"},
    )
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    first = session.prompt("first")
    with pytest.raises(ClientError, match="stop43 upstream broke"):
        await first.wait()
    second = session.prompt("second")
    updates = [u async for u in second]
    assert second.stop_reason == "end_turn"
    assert text_of(updates) == "fine"
    assert "stop43 upstream broke" not in json.dumps(updates)
    report = await daemon.client.request("_tether/session/report", {"sessionId": session.id, "turnId": second.turn_id})
    assert "stop43 upstream broke" not in json.dumps(report), report


# what the third prompt's model request must hold when another daemon made the second turn
THREE_TURNS_AS_STORED = [
    ("user", "one"),
    ("assistant", "answer 0"),
    ("user", "two"),
    ("assistant", "answer 1"),
    ("user", "three"),
]


def _sent(request: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request.body["messages"][1:]]


async def test_a_turn_another_daemon_added_between_two_prompts_is_seen_by_the_model(
    spawn_daemon, workspace: Path
) -> None:
    """Daemon A prompts a session, daemon B loads it and prompts it (a second editor, `tether run`
    on it), then A prompts again: A's model must be sent the conversation as stored (B's turn
    included), not A's stale copy, as it is after a rewind from a shell."""
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", f"answer {i}")) for i in range(3)))
        env = {KEY_ENV["openai"]: FAKE_KEY}
        first = await spawn_daemon(command=serve_command("openai", server), env=env)
        second = await spawn_daemon(command=serve_command("openai", server), env=env)
        session = await first.client.new_session(workspace)
        await session.prompt("one").wait()
        elsewhere = await second.client.load_session(session.id, workspace)
        await elsewhere.prompt("two").wait()
        third = session.prompt("three")
        await third.wait()
        assert third.stop_reason == "end_turn"
    assert _sent(server.requests[2]) == THREE_TURNS_AS_STORED


REFUSED_PROMPTS = {
    "an unknown block type": (
        '[{"type": "video", "url": "x"}]',
        "params.prompt: item 0: unsupported type 'video'; accepted: resource, resource_link, text",
    ),
    "an image (not offered)": (
        '[{"type": "text", "text": "see"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]',
        "params.prompt: item 1: unsupported type 'image'; accepted: resource, resource_link, text",
    ),
    "a blob resource": (
        '[{"type": "resource", "resource": {"uri": "file:///etc/passwd", "blob": "aGk="}}]',
        "params.prompt: item 0: .resource.text: required field missing",
    ),
    "a link without its uri": (
        '[{"type": "resource_link", "name": "n"}]',
        "params.prompt: item 0: .uri: required field missing",
    ),
    "a list as _meta": (
        '[{"type": "text", "text": "m", "_meta": [1, 2]}]',
        "params.prompt: item 0: ._meta: expected an object, got an array",
    ),
    "a number as text": (
        '[{"type": "text", "text": 5}]',
        "params.prompt: item 0: .text: expected a string, got an integer",
    ),
    "an object as the prompt": ('{"type": "text", "text": "x"}', "params.prompt: expected an array, got an object"),
}


@pytest.mark.parametrize("case", list(REFUSED_PROMPTS))
async def test_a_hostile_prompt_block_is_refused_whole_with_its_place_named(
    spawn_daemon, workspace: Path, case: str
) -> None:
    """What main answers each hostile block (codec43 decodes the prompt once into the stored
    message): -32602 naming the block and field, and nothing of the prompt stored or shown."""
    prompt, why = REFUSED_PROMPTS[case]
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    answer = await _raw_request(daemon, 4301, "session/prompt", f'{{"sessionId": "{session.id}", "prompt": {prompt}}}')
    assert answer["error"] == {"code": -32602, "message": f"invalid params for session/prompt: {why}"}
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert dumped["messages"] == [] and dumped["turns"] == []


async def test_a_deep_or_oversized_prompt_is_refused_and_the_daemon_goes_on(spawn_daemon, workspace: Path) -> None:
    """A `_meta` nested past what JSON-RPC reads is a parse error (id null) and the connection goes
    on; a resource over the size cap is -32602 naming it; neither is stored."""
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    deep = '{"a":' * 20000 + "1" + "}" * 20000
    daemon.client.peer.send_raw(
        encode_lsp(
            f'{{"jsonrpc": "2.0", "id": 4302, "method": "session/prompt", "params": {{"sessionId": "{session.id}", '
            f'"prompt": [{{"type": "text", "text": "d", "_meta": {deep}}}]}}}}'.encode()
        )
    )
    huge = json.dumps([{"type": "resource", "resource": {"uri": "file:///big.txt", "text": "x" * (9 << 20)}}])
    answer = await _raw_request(daemon, 4303, "session/prompt", f'{{"sessionId": "{session.id}", "prompt": {huge}}}')
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith(
        "invalid params for session/prompt: prompt holds 9.0 MiB of text (the largest part, "
        "prompt[0].resource.text, 9.0 MiB), over the limit of 8 MiB per message; nothing was stored."
    )
    parse_errors = [m for m in daemon.client.peer.received if m.get("id") is None and "error" in m]
    assert [m["error"]["code"] for m in parse_errors] == [-32700]
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert dumped["messages"] == []
    turn = session.prompt("still there")
    await turn.wait()
    assert turn.stop_reason == "end_turn"


ODD_PROMPT = (
    '[{"type": "text", "text": "a\\u0000b \\ud83d", "annotations": {"audience": ["user"], "priority": 5}},'
    ' {"type": "resource", "resource": {"uri": "file:///etc/shadow", "text": "root:x\\udc00", "mimeType": "image/png"}},'
    ' {"type": "resource_link", "uri": "file:///root/.aws/credentials", "name": "c\\u0000", "_meta": {"k": [1, {"x": null}]}}]'
)


async def test_an_odd_but_valid_prompt_is_stored_and_replayed_as_main_stores_it(spawn_daemon, workspace: Path) -> None:
    """NUL, lone surrogates, annotations, a mismatched MIME type, a link to a credential store
    and a `_meta`: taken (a link is never read by Tether; the model's read_file refuses what is
    hidden), stored as main stores it (surrogates as U+FFFD, annotations dropped, `_meta` kept),
    and replayed from the store by another daemon as stored."""
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    answer = await _raw_request(
        daemon, 4304, "session/prompt", f'{{"sessionId": "{session.id}", "prompt": {ODD_PROMPT}}}'
    )
    assert answer["result"]["stopReason"] == "end_turn"
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    stored = dumped["messages"][0]["body"]
    assert stored["content"] == [
        {"type": "text", "text": "a\x00b \ufffd"},
        {
            "type": "resource",
            "resource": {"uri": "file:///etc/shadow", "mimeType": "image/png", "text": "root:x\ufffd"},
        },
        {
            "type": "resource_link",
            "uri": "file:///root/.aws/credentials",
            "name": "c\x00",
            "_meta": {"k": [1, {"x": None}]},
        },
    ]
    assert stored["guard"]["findings"][0]["pattern"] == "null_bytes"
    other = await spawn_daemon()
    loaded = await other.client.load_session(session.id, workspace)
    shown = [u["content"] for u in loaded.updates if u["sessionUpdate"] == "user_message_chunk"]
    assert shown == stored["content"]


async def test_a_session_scrubbed_and_restored_from_the_shell_is_what_its_live_daemon_sends(
    spawn_daemon, workspace: Path, daemon_env: dict
) -> None:
    """The user pasted a token into a prompt, then scrubs it from the shell while the editor's
    daemon has the session live: `dump`, edit, `delete`, `restore --keep-id`. The live daemon's
    next model request must carry the scrubbed history, not the token it held in memory."""
    token = "ghp_stop43SCRUBME0123456789abcdefABCDEF"
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", f"answer {i}")) for i in range(2)))
        live = await spawn_daemon(command=serve_command("openai", server), env={KEY_ENV["openai"]: FAKE_KEY})
        session = await live.client.new_session(workspace)
        await session.prompt(f"my token is {token}").wait()
        dumped = _sessions("dump", session.id, env=daemon_env, cwd=workspace)
        assert dumped.returncode == 0, dumped.stderr
        scrubbed = workspace.parent / "scrubbed.json"
        assert token in dumped.stdout
        scrubbed.write_text(dumped.stdout.replace(token, "[removed]"))
        for args in (("delete", session.id), ("restore", "--keep-id", str(scrubbed))):
            done = _sessions(*args, env=daemon_env, cwd=workspace)
            assert done.returncode == 0, done.stderr
        turn = session.prompt("go on")
        await turn.wait()
        assert turn.stop_reason == "end_turn"
    sent = json.dumps(server.requests[1].body)
    assert "[removed]" in sent and token not in sent


@pytest.mark.parametrize(
    "path", ["/etc/cron.d/MEMORY.md", "/root/.ssh/MEMORY.md", "/home/someone-else/.config/tether/MEMORY.md"]
)
async def test_a_restored_remember_location_is_this_users_memory_file_only(
    spawn_daemon, workspace: Path, daemon_env: dict, path: str
) -> None:
    """fix42 took any absolute, normal path ending in `/MEMORY.md` as `remember`'s user file
    (SPEC: "in the user's config"): a snapshot could make the replay offer `/etc/cron.d/MEMORY.md`
    to the editor as a place the agent wrote. A restored one is this user's MEMORY.md (as a
    workspace path is moved to this workspace), whatever the snapshot says."""
    client, snapshot = await read_readme_snapshot(spawn_daemon, workspace)
    call = snapshot["messages"][1]["body"]["tool_calls"][0]
    call.update(name="remember", arguments={"note": "x"})
    snapshot["messages"][2]["body"].update(name="remember", locations=[{"path": path}])
    restored = await client.request("_tether/session/restore", {"snapshot": snapshot})
    mine = str(Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "MEMORY.md")
    dumped = await client.request("_tether/session/dump", {"sessionId": restored["sessionId"]})
    assert dumped["messages"][2]["body"]["locations"] == [{"path": mine}]
    loaded = await client.load_session(restored["sessionId"], workspace)
    assert path not in json.dumps(loaded.updates)


async def test_a_prompt_queued_behind_a_cancelled_turn_gets_a_journal_and_report_of_its_own(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Turn 1 is cancelled while its write waits for approval; a prompt queued behind it starts
    at once (turn43: the session's journal and report builder are handed on). Turn 2's report
    has its own step only (a cancelled step is in neither, as on main), and the history holds
    each turn's own."""
    script = _script(
        tmp_path,
        {"when": {"user": "^first", "step": 1}, "text": "Writing.", "tool_calls": [WRITE]},
        {"when": {"user": "^second"}, "text": "second answer"},
    )
    daemon = await spawn_daemon(script=script)
    asked = asyncio.Event()

    async def on_request(method: str, params: dict):
        asked.set()
        await asyncio.Event().wait()  # never answered

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    first = session.prompt("first")
    first.start()
    await asyncio.wait_for(asked.wait(), 30)
    second = session.prompt("second")
    second.start()
    await until(lambda: second.request_id is not None, 10)
    await asyncio.sleep(0.3)  # queued behind turn 1
    await session.cancel()
    await first.wait()
    await second.wait()
    assert (first.stop_reason, second.stop_reason) == ("cancelled", "end_turn")
    assert text_of(second.updates) == "second answer"
    reports = await daemon.client.request("_tether/session/report", {"sessionId": session.id, "turnId": None})
    by_turn = {r["turnId"]: r for r in reports["reports"]}
    mine, before = by_turn[second.turn_id], by_turn[first.turn_id]
    assert (mine["stepCount"], mine["toolCallCount"], mine["status"]) == (1, 0, "complete")
    assert before["status"] == "cancelled" and before["stopReason"] == "cancelled"
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    second_turn = [m for m in dumped["messages"] if m["turn_id"] == second.turn_id]
    assert [m["role"] for m in second_turn] == ["user", "assistant"]
    assert not (workspace / "stop43.txt").exists()


PREVIEW = Path("/work/shared/reference/acp-v2-preview")
if not PREVIEW.is_dir():  # the tree's vendored copy of the same schemas
    PREVIEW = Path(__file__).resolve().parents[2] / "protocol/upstream/acp-v2-preview"


def _v2_problems(params: dict) -> list[str]:
    """What the v2 Preview schemas (stable and unstable) find wrong in a `session/update`."""
    from jsonschema import Draft202012Validator

    found = []
    for name in ("schema.json", "schema.unstable.json"):
        defs = json.loads((PREVIEW / name).read_text())["$defs"]
        check = Draft202012Validator({"$defs": defs, "$ref": "#/$defs/UpdateSessionNotification"})
        found += [f"{name}: {list(e.path)}: {e.message[:200]}" for e in check.iter_errors(params)]
    return found


async def test_a_v2_clients_failed_and_cancelled_turns_are_told_in_the_previews_shapes(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """A v2 session whose first turn's model fails, whose second is cancelled mid-stream and
    whose third prompt is refused at insertion: every update it is sent (the idle states with
    their error and stop reason above all: shapes43 builds them from the generated types)
    is one the v2 Preview schema accepts, and each turn ends in one idle state."""
    script = _script(
        tmp_path,
        {"when": {"user": "^fail"}, "chunks": ["half "], "error": {"message": "stop43 broke", "after_chunks": 1}},
        {"when": {"user": "^slow"}, "chunks": ["word "] * 400, "delay_ms": 20},
    )
    daemon = await spawn_daemon(script=script, initialize=False)
    assert (await daemon.client.initialize(protocolVersion=2))["protocolVersion"] == 2
    made = await daemon.client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    sid = made["sessionId"]
    updates = daemon.client._unclaimed.setdefault(sid, [])  # noqa: SLF001 (a v2 session has no Session object)

    def idles() -> list[dict]:
        return [u for u in updates if u["sessionUpdate"] == "state_update" and u["state"] == "idle"]

    for text in ("fail now", "slow please"):
        await daemon.client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        if text.startswith("slow"):
            await until(lambda: any(u["sessionUpdate"] == "agent_message_chunk" for u in updates[-5:]))
            daemon.client.peer.notify("session/cancel", {"sessionId": sid})
        count = 1 if text.startswith("fail") else 2
        await until(lambda count=count: len(idles()) == count, 30)
    with pytest.raises(ClientError) as refused:
        big = [{"type": "text", "text": "x" * (9 << 20)}]
        await daemon.client.request("session/prompt", {"sessionId": sid, "prompt": big})
    assert refused.value.code == -32602
    await asyncio.sleep(0.3)
    problems = [p for u in updates for p in _v2_problems({"sessionId": sid, "update": u})]
    assert not problems, problems
    failed, cancelled = idles()
    assert failed["stopReason"] != "end_turn" and "stop43 broke" in json.dumps(failed)
    assert cancelled["stopReason"] == "cancelled"
    assert len(idles()) == 2  # the refused prompt started no turn


def _stored_bodies(tether_home: Path, session_id: str) -> list[str]:
    """The message bodies as the history database holds them, byte for byte."""
    (db,) = tether_home.glob("workspaces/*/history.sqlite3")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    finally:
        conn.close()
    return [row[0] for row in rows]


MAIN_STORES = (
    '{"role":"user","content":[{"type":"text","text":"look","_meta":{"k":1}},'
    '{"type":"resource","resource":{"uri":"file:///w/a.py","mimeType":"text/x-python","text":"print(1)\\n"},'
    '"_meta":{"m":[1]}},{"type":"resource","resource":{"uri":"file:///w/b.txt","text":"plain"}},'
    '{"type":"resource_link","uri":"file:///w/c.md","name":"c.md","mimeType":"text/markdown","_meta":{"z":null}}]}'
)


async def test_a_prompts_blocks_are_stored_byte_for_byte_as_main_stores_them(
    spawn_daemon, workspace: Path, tether_home: Path
) -> None:
    """codec43 encodes a message's blocks with msgspec alone when they carry no extra keys: the
    stored JSON (which replays are sent as it is) must keep main's bytes, `mimeType` before a
    resource's `text` included."""
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    prompt = json.loads(MAIN_STORES)["content"]
    turn = session.prompt(prompt)
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    assert _stored_bodies(tether_home, session.id)[0] == MAIN_STORES


WAITING_HOOK = """import json, pathlib, sys, time
event = json.load(sys.stdin)
if "rewind now" in json.dumps(event.get("prompt")):
    folder = pathlib.Path(event["cwd"])
    (folder / "hook-waits").write_text("")
    for _ in range(300):  # until the shell's rewind is made (at most 30 s)
        if (folder / "rewound").exists():
            break
        time.sleep(0.1)
"""


async def test_a_shell_rewind_made_while_a_prompt_starts_is_not_lost_to_later_prompts(
    spawn_daemon, workspace: Path, tmp_path: Path, daemon_env: dict
) -> None:
    """A rewind from the shell lands after a prompt's check and before its turn is stored (here
    while a `prompt_submit` hook of the user's runs: the race made certain). That turn's end
    must not count the rewind as read in: the next prompt's model is sent the conversation
    without the rewound turn."""
    hook = tmp_path / "waiting_hook.py"
    hook.write_text(WAITING_HOOK)
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[[hooks.prompt_submit]]\ncommand = {json.dumps(f'{sys.executable} {hook}')}\n")
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", f"answer {i}")) for i in range(4)))
        daemon = await spawn_daemon(command=serve_command("openai", server), env={KEY_ENV["openai"]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        for text in ("one", "two", "rewind now", "four"):
            turn = session.prompt(text)
            turn.start()
            if text == "rewind now":
                await until(lambda: (workspace / "hook-waits").exists(), 30)
                shell = _sessions(
                    "rewind", session.id, "--to", "2", "--restore", "conversation", env=daemon_env, cwd=workspace
                )
                assert shell.returncode == 0, shell.stderr
                (workspace / "rewound").write_text("")
            await turn.wait()
            assert turn.stop_reason == "end_turn", text
        changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
        assert len(changes["rewinds"]) == 1  # the hook's rewind was made
    sent = [(m["role"], m["content"]) for m in server.requests[3].body["messages"][1:]]
    assert ("user", "two") not in sent and ("assistant", "answer 1") not in sent
    assert sent[0] == ("user", "one") and sent[-1] == ("user", "four")


async def test_a_servers_question_to_a_v1_client_cannot_open_a_notice_of_tethers(
    spawn_daemon, workspace: Path, tmp_path: Path, daemon_env: dict
) -> None:
    """An MCP server (a repository's, say) asks a v1 client, which cannot answer forms, so the
    question is a notice in the transcript, `[MCP server `x` asked: ...]`. Its message closes
    that bracket and opens `[Tether needs your OPENAI_API_KEY ...]` on a line of its own: every
    line of the server's text is shown as the server's (quoted), none as Tether's own notice."""
    asking = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "asking.py"
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[mcp_servers.asking]\ncommand = "{sys.executable}"\nargs = ["{asking}"]\n')
    call = {"id": "call_ask", "name": "mcp__asking__close_the_notice", "arguments": {}}
    script = _script(tmp_path, {"when": {"step": 1}, "text": "Asking.", "tool_calls": [call]}, {"text": "Done."})
    daemon = await spawn_daemon(script=script)

    async def allow(method: str, params: dict):
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = allow
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("ask me")
    await turn.wait()
    shown = text_of(turn.updates)
    assert "[MCP server `asking` asked: ok]\n" in shown, shown
    forged = [line for line in shown.splitlines() if line.startswith("[Tether")]
    assert forged == [], shown
    assert "> [Tether needs your OPENAI_API_KEY" in shown


async def test_bytes_that_are_not_utf8_in_names_and_output_are_stored_and_replayed(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """A hostile repository holds a file whose name is not UTF-8 and a command prints bytes that
    are not (codec43 sends a tool result without blocks straight to msgspec): the turn ends as
    usual, what is stored is valid JSON text, and another daemon replays it."""
    (workspace / "data").mkdir()
    with open(bytes(workspace / "data") + b"/bad\xff\xfename.txt", "wb") as handle:
        handle.write(b"text \xff\xfe here\n")
    calls = [
        {"id": "call_list", "name": "list_dir", "arguments": {"path": "data"}},
        {"id": "call_glob", "name": "glob", "arguments": {"pattern": "data/*"}},
        {"id": "call_grep", "name": "grep", "arguments": {"pattern": "here"}},
        {"id": "call_run", "name": "run_command", "arguments": {"command": "printf 'out \\377\\376 ok'; ls data"}},
    ]
    script = _script(tmp_path, {"when": {"step": 1}, "text": "Looking.", "tool_calls": calls}, {"text": "Seen."})
    daemon = await spawn_daemon("--mode", "full-auto", script=script)

    async def allow(method: str, params: dict):
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = allow
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("look around")
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    dumped = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    results = {m["body"]["tool_call_id"]: m["body"]["content"] for m in dumped["messages"] if m["role"] == "tool"}
    assert set(results) == {"call_list", "call_glob", "call_grep", "call_run"}
    assert all("bad" in results[c] for c in ("call_list", "call_glob", "call_grep")), results
    assert "out " in results["call_run"] and " ok" in results["call_run"], results
    other = await spawn_daemon()
    loaded = await other.client.load_session(session.id, workspace)
    assert [u["toolCallId"] for u in loaded.updates if u["sessionUpdate"] == "tool_call"] == list(results)


async def test_a_turn_another_daemon_added_after_a_load_is_seen_by_the_first_prompt(
    spawn_daemon, workspace: Path
) -> None:
    """Daemon A loads a session daemon B made; B prompts it again; then A prompts it for the
    first time: A's model is sent B's second turn too (the load noted where the history stood)."""
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", f"answer {i}")) for i in range(3)))
        env = {KEY_ENV["openai"]: FAKE_KEY}
        first = await spawn_daemon(command=serve_command("openai", server), env=env)
        second = await spawn_daemon(command=serve_command("openai", server), env=env)
        made = await second.client.new_session(workspace)
        await made.prompt("one").wait()
        loaded = await first.client.load_session(made.id, workspace)
        await made.prompt("two").wait()
        third = loaded.prompt("three")
        await third.wait()
        assert third.stop_reason == "end_turn"
    assert _sent(server.requests[2]) == THREE_TURNS_AS_STORED
