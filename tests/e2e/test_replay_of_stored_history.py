"""`session/load` replays stored history exactly as SPEC §4.5/§4.6 describe.

The daemon writes the replay as UTF-8 JSON straight from the stored bodies (`replay_frames`);
`replay_updates` spells the same updates out as dicts, the way the SPEC reads. These tests
hold the two together, for generated histories and for a long one loaded through a real
daemon (several write batches, both framings).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import to_builtins

from tether.handlers.loading import _READ_PAGE
from tether.rendering import PagedReplay, frame, replay_frames, replay_updates
from tether.rendering.acp_v1 import V1
from tether.rendering.emitter import _PREFIX
from tether.store import HistoryStore, MessageRecord, database_path
from tether_protocol import dumps, whole_text

_text = st.text(st.sampled_from('ab \n\t\0"\\é😀\u2028'), max_size=8) | st.text(
    st.characters(exclude_categories=("Cs",)), max_size=12
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_status = st.sampled_from(["complete", "incomplete", "cancelled", "interrupted", "error"])
_call_ids = st.sampled_from(["c1", "c2", "c3", "c4"])
_block = st.fixed_dictionaries({"type": st.just("text"), "text": _text}) | st.dictionaries(_text, _json, max_size=3)
_user = st.fixed_dictionaries({"role": st.just("user")}, optional={
    "content": st.lists(_block, max_size=3),
    "compaction": st.fixed_dictionaries({}, optional={"replaced": st.integers(0, 99) | _json}),
    "_meta": _json,
    "steered": st.fixed_dictionaries({}, optional={"afterStep": st.integers(0, 9) | _json}) | _json,
})
_assistant = st.fixed_dictionaries({"role": st.just("assistant")}, optional={
    "text": _text | _json,
    "thinking": _text | _json,
    "tool_calls": st.lists(st.fixed_dictionaries(
        {"id": _call_ids, "name": _text}, optional={"arguments": st.dictionaries(_text, _json, max_size=2)},
    ), max_size=3),
})
_tool = st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": _call_ids}, optional={
    "name": _text, "content": _text | _json, "is_error": _json, "title": _text | _json, "kind": _json,
    "locations": st.lists(st.fixed_dictionaries({"path": _text, "line": st.integers(0, 9)}), max_size=2) | _json,
    "blocks": st.lists(_block, max_size=2),  # what an MCP tool showed the client besides the text
})
_other = st.fixed_dictionaries({"role": st.sampled_from(["system", "narrator"])}, optional={"text": _text})
_history = st.lists(st.tuples(_user | _assistant | _tool | _other, _status), max_size=12)


@settings(max_examples=300, deadline=None)
@given(history=_history, session_id=_text, pending=st.sets(_call_ids, max_size=2))
def test_the_replay_text_is_the_encoding_of_the_replay_updates(
    history: list[tuple[dict[str, Any], str]], session_id: str, pending: set[str]
) -> None:
    frames = list(replay_frames(session_id, history, pending))
    assert frames == [frame(session_id, update) for update in replay_updates(history, pending=pending)]


_live_text = _text | st.text(st.sampled_from("a\ud800\udfffé"), max_size=6)  # lone surrogates: broken UTF-16


@settings(max_examples=300, deadline=None)
@given(text=_live_text, session_id=_live_text, kind=st.sampled_from(["text", "thought"]))
def test_a_live_chunk_is_framed_as_the_json_codec_writes_it(text: str, session_id: str, kind: str) -> None:
    """A live chunk takes msgspec's lane (`emitter.frame`); its bytes are the orjson
    lane's, a lone surrogate written as U+FFFD, and the replay of the same stored text."""
    chunk = V1.chunk(kind, text)
    sent = frame(session_id, chunk)
    assert sent == _PREFIX + dumps({"sessionId": session_id, "update": to_builtins(chunk)}) + b"}"
    assert json.loads(sent)["params"]["update"]["content"]["text"] == whole_text(text)
    stored = {"role": "assistant", kind if kind == "text" else "thinking": whole_text(text)}
    if text:
        assert list(replay_frames(whole_text(session_id), [(stored, "complete")])) == [
            frame(whole_text(session_id), V1.chunk(kind, whole_text(text)))
        ]


@settings(max_examples=300, deadline=None)
@given(history=_history, session_id=_text, cuts=st.lists(st.integers(0, 12), max_size=4), step_breaks=st.booleans())
def test_a_replay_sent_while_the_history_is_read_is_the_whole_replay(
    history: list[tuple[dict[str, Any], str]], session_id: str, cuts: list[int], step_breaks: bool
) -> None:
    """`session/load` replays page by page as it reads: pages cut anywhere (between a
    call and its results too) give the same updates, in the same order (with the step
    breaks of a client that is not Tether's own too)."""
    replay = PagedReplay(session_id, step_breaks)
    frames: list[bytes] = []
    start = 0
    for cut in sorted(cuts) + [len(history)]:
        frames.extend(replay.feed(history[start:cut]))
        start = max(start, cut)
    frames.extend(replay.finish())
    assert frames == list(replay_frames(session_id, history, step_breaks=step_breaks))


def _long_history(turns: int) -> list[tuple[str, list[tuple[dict[str, Any], str]]]]:
    """Turns of every kind the replay knows, with odd text; ~5 messages a turn."""
    out = []
    for t in range(turns):
        status = ["complete", "cancelled", "interrupted", "error", "incomplete"][t % 5]
        call = f"call_{t}"
        messages: list[tuple[dict[str, Any], str]] = [
            ({"role": "user", "content": [
                {"type": "text", "text": f"question {t}: é 😀 \u2028 \"quoted\" \\ \x01"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            ]}, "complete"),
            ({"role": "assistant", "text": f"Looking at part {t}.", "thinking": "hm\n" if t % 3 == 0 else "",
              "tool_calls": [{"id": call, "name": "read_file", "arguments": {"path": f"src/p{t}.py"}},
                             {"id": f"lost_{t}", "name": "grep", "arguments": {}}]}, status),
            ({"role": "tool", "tool_call_id": call, "name": "read_file", "content": f"     1\tdef p{t}():\n",
              "is_error": t % 4 == 0, "title": f"Read src/p{t}.py", "kind": "read",
              **({"locations": [{"path": f"/w/src/p{t}.py", "line": 1}]} if t % 2 else {})}, status),
            ({"role": "assistant", "text": f"Part {t} is fine."}, status),
        ]
        if t % 7 == 6:
            messages.append(({"role": "user", "content": [{"type": "text", "text": "Summary."}],
                              "compaction": {"replaced": 5 * t}}, "complete"))
        out.append((f"turn_{t}", messages))
    return out


async def _store(home: Path, workspace: Path, session_id: str, turns: int) -> list[tuple[dict[str, Any], str]]:
    async with await HistoryStore.open(database_path(workspace, home)) as store:
        await store.create_session(session_id, str(workspace), "ask", title="long")
        for turn_id, messages in _long_history(turns):
            (first, _), *rest = messages
            await store.begin_turn(session_id, turn_id, MessageRecord("user", first))
            await store.append_messages(session_id, turn_id, [MessageRecord(b["role"], b, s) for b, s in rest])
            await store.finish_turn(turn_id, "complete", "end_turn")
        return [(m.body, m.status) for m in await store.load_messages(session_id)]


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_a_long_history_is_replayed_whole_and_in_order_before_the_answer(
    spawn_daemon, workspace: Path, tether_home: Path, framing: str
) -> None:
    stored = await _store(tether_home, workspace, "sess_long", 300)  # 1,200+ messages, ~2,000 updates
    expected = json.loads(json.dumps(replay_updates(stored)))
    assert len(stored) > _READ_PAGE  # read in more than one page, replayed while read

    daemon = await spawn_daemon(framing=framing)
    loaded = await daemon.client.load_session("sess_long", workspace)

    assert len(expected) > 3 * 256  # more than a few write batches
    replayed = [u for u in loaded.updates if u["sessionUpdate"] != "available_commands_update"]
    assert replayed == expected  # all of it, in order, before the answer (the command list comes after it)
    assert loaded.info["modes"]["currentModeId"] == "ask"
    # and the session goes on
    turn = loaded.prompt("and now?")
    await turn.wait()
    assert turn.stop_reason == "end_turn"


async def test_a_call_id_reused_in_a_later_turn_replays_with_its_own_result(spawn_daemon, workspace: Path, tmp_path: Path):
    # some local models (and scripts) number their calls call_0, call_1… in every turn
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("bravo\n")
    script = tmp_path / "same-ids.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"user": "^read a", "step": 1}, "tool_calls": [{"id": "call_0", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"when": {"user": "^read b", "step": 1}, "tool_calls": [{"id": "call_0", "name": "read_file", "arguments": {"path": "b.txt"}}]},
        {"text": "Read."},
    ]}))
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    for prompt in ("read a", "read b"):
        turn = session.prompt(prompt)
        await turn.wait()
        assert turn.stop_reason == "end_turn"
    other = await spawn_daemon(script=script)
    loaded = await other.client.load_session(session.id, workspace)
    calls = [u for u in loaded.updates if u["sessionUpdate"] == "tool_call"]
    shown = [(c["title"], c["content"][0]["content"]["text"]) for c in calls]
    assert [title for title, _ in shown] == ["Read a.txt", "Read b.txt"]
    assert "alpha" in shown[0][1] and "bravo" in shown[1][1]
