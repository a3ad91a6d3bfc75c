"""Issue 32's codec spike: msgspec Structs (bench/codec_spike_model.py) against today's
attrs + cattrs classes and today's fast paths, on the same data in one run.

    .venv/bin/python bench/codec_spike.py [--runs 15] [--messages 50000] [--chunks 20000] [--only cold,hot,errors,schema]

1. cold: a fresh process's CPU (`time.process_time`, taken first thing in the process, so
   the interpreter's own start is not counted) to import and set up the model; medians of
   `--runs` processes, after one unrecorded run (byte-compiled):
   - today: `import tether_protocol` + every message class (`_messages`) + the converter,
     then the converter's generated structure and unstructure functions for every class of
     the method table (what the first use of each class pays, all at once);
   - msgspec: `import msgspec` + the slice's Structs, then a JSON Decoder and Encoder for
     every Struct (msgspec compiles a type's plan on first Decoder/encode).
2. hot paths (in this process, best of 5 repeats, each a full loop):
   - 20,000 `agent_message_chunk` notifications, text in -> bytes out: today's hot path
     (`V1.chunk` dict + `emitter.frame`), the typed attrs path (classes -> cattrs unstructure ->
     orjson), msgspec (Structs -> one encode);
   - 20,000 `session/prompt` requests with 3 blocks, bytes in -> typed params;
   - a conversation of `--messages` stored messages: load (each stored body -> typed
     message), save (typed -> body text), export (a snapshot document), restore (the
     document -> checked/typed), and replay (`session/load`'s notifications).
3. errors: the message each side gives for five bad inputs.
4. schema: msgspec.json.schema_components for the slice against protocol/schema.json.
Every msgspec output is compared with today's bytes (or JSON value) before it is timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import subprocess
import sys
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

COLD_TODAY = """
import time; t0 = time.process_time()
import tether_protocol
from tether_protocol import _messages, _methods
from tether_protocol._converter import converter
conv = converter()
t1 = time.process_time()
import attrs
classes = {c for m in _methods.V1 for c in (m.params, m.result) if isinstance(c, type) and attrs.has(c)}
seen, todo = set(), list(classes)
while todo:  # every attrs class reachable from the method table
    cls = todo.pop()
    if cls in seen: continue
    seen.add(cls)
    attrs.resolve_types(cls)
    for f in attrs.fields(cls):
        for t in (f.type, *getattr(f.type, '__args__', ())):
            for u in (t, *getattr(t, '__args__', ())):
                if isinstance(u, type) and attrs.has(u): todo.append(u)
for cls in seen:
    conv.get_structure_hook(cls); conv.get_unstructure_hook(cls)
t2 = time.process_time()
print(t1 - t0, t2 - t0, len(seen))
"""

COLD_MSGSPEC = """
import time; t0 = time.process_time()
import sys; sys.path.insert(0, {bench!r})
import msgspec
ta = time.process_time()
import codec_spike_model as m
t1 = time.process_time()
for cls in m.STRUCTS:  # a Decoder compiles the type's plan (msgspec does it on first use)
    msgspec.json.Decoder(cls)
t2 = time.process_time()
print(t1 - t0, t2 - t0, len(m.STRUCTS), ta - t0)
"""


# The stdlib modules msgspec imports that a running daemon has mostly loaded already:
# with this prelude (before the clock starts) the rows are the marginal cost in a daemon.
PRELUDE = "import typing, re, inspect, enum, dataclasses, datetime, decimal, uuid, json, typing_extensions\n"


def cold(runs: int, prelude: str = "") -> dict[str, Any]:
    def sample(code: str) -> list[float]:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return [float(x) for x in out.stdout.split()]

    today_code, msgspec_code = prelude + COLD_TODAY, prelude + COLD_MSGSPEC.format(bench=str(BENCH))
    sample(today_code), sample(msgspec_code)  # byte-compiled, caches warm
    today, ms = [], []
    for _ in range(runs):  # alternated: load on the machine falls on both alike
        today.append(sample(today_code))
        ms.append(sample(msgspec_code))

    def med(rows: list[list[float]], i: int) -> float:
        return statistics.median(r[i] for r in rows) * 1000

    return {
        "today_import_ms": med(today, 0), "today_all_hooks_ms": med(today, 1), "today_classes": int(today[0][2]),
        "msgspec_import_ms": med(ms, 3), "msgspec_define_ms": med(ms, 0), "msgspec_all_decoders_ms": med(ms, 1),
        "msgspec_structs": int(ms[0][2]),
    }


def best(fn: Callable[[], Any], repeats: int = 5, gc_paused: bool = False) -> float:
    """The fastest of `repeats` runs (ms), each after a full collection; `gc_paused`: with the
    collector off, as Tether's large loads and dumps run (`tether_protocol._gc`)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        if gc_paused:
            gc.disable()
        try:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times) * 1000


# ---- 2. hot paths ----------------------------------------------------------------------


def chunk_bench(n: int) -> dict[str, float]:
    import codec_spike_model as m
    import msgspec

    import tether_protocol as t
    from tether.rendering.acp_v1 import V1
    from tether.rendering.emitter import frame
    from tether_protocol import dumps, unstructure

    texts = [f"delta {i} of the answer, a few words " for i in range(n)]
    sid = "sess_0123456789abcdef"
    enc = msgspec.json.Encoder()

    def today() -> list[bytes]:
        return [frame(sid, V1.chunk("text", x)) for x in texts]

    def typed_attrs() -> list[bytes]:
        return [
            dumps({"jsonrpc": "2.0", "method": "session/update", "params": unstructure(
                t.SessionNotification(sid, t.AgentMessageChunk(t.TextContent(text=x))))})
            for x in texts
        ]

    def ms() -> list[bytes]:
        return [enc.encode(m.UpdateNotification(params=m.SessionNotification(
            sid, m.AgentMessageChunk(m.TextContent(x))))) for x in texts]

    assert today() == ms(), "msgspec's chunk is not today's bytes"
    assert [json.loads(b) for b in typed_attrs()] == [json.loads(b) for b in today()]
    rounds: dict[str, list[float]] = {"today_dict_frame": [], "msgspec": []}
    for _ in range(21):  # the two hot paths alternating, so load falls on both alike
        rounds["today_dict_frame"].append(best(today, 1))
        rounds["msgspec"].append(best(ms, 1))
    return {
        "today_dict_frame": best(today), "attrs_cattrs": best(typed_attrs), "msgspec": best(ms),
        **{f"{k}_median_of_21_alternating": statistics.median(v) for k, v in rounds.items()},
    }


PROMPT = {
    "jsonrpc": "2.0", "id": 7, "method": "session/prompt",
    "params": {"sessionId": "sess_0123456789abcdef", "prompt": [
        {"type": "text", "text": "Refactor the parser so errors name the field; keep the tests green."},
        {"type": "resource_link", "uri": "file:///w/src/parser.py", "name": "parser.py", "mimeType": "text/x-python"},
        {"type": "resource", "resource": {"uri": "file:///w/NOTES.md", "text": "# notes\n" * 20, "mimeType": "text/markdown"}},
    ]},
}


def prompt_bench(n: int) -> dict[str, float]:
    import codec_spike_model as m
    import msgspec

    import tether_protocol as t
    from tether_protocol import loads, structure, unstructure

    raw = json.dumps(PROMPT).encode()
    dec = msgspec.json.Decoder(m.PromptRequest)

    def today() -> Any:
        for _ in range(n):
            structure(loads(raw)["params"], t.PromptParams, method="session/prompt")

    def ms() -> Any:
        for _ in range(n):
            dec.decode(raw)

    def ms_convert() -> Any:  # the envelope by orjson (as the peer reads it), params by msgspec
        for _ in range(n):
            msgspec.convert(loads(raw)["params"], m.PromptParams)

    typed = structure(PROMPT["params"], t.PromptParams)
    assert unstructure(typed) == msgspec.to_builtins(dec.decode(raw).params)
    return {"today_orjson_cattrs": best(today), "msgspec_decode": best(ms), "orjson_msgspec_convert": best(ms_convert)}


def conversation(count: int) -> list[dict[str, Any]]:
    """Stored bodies of `count` messages: turns of user, assistant + call, tool result, assistant."""
    bodies: list[dict[str, Any]] = []
    i = 0
    while len(bodies) < count:
        bodies += [
            {"role": "user", "content": [{"type": "text", "text": f"Step {i}: read src/mod_{i}.py and fix the bug."}]},
            {"role": "assistant", "text": "Reading it first.", "thinking": "The user wants a fix.",
             "tool_calls": [{"id": f"call_{i}", "name": "read_file", "arguments": {"path": f"src/mod_{i}.py"}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "name": "read_file", "content": "def f():\n    return 1\n" * 8,
             "is_error": False, "title": f"Read src/mod_{i}.py", "kind": "read",
             "locations": [{"path": f"/w/src/mod_{i}.py", "line": 1}]},
            {"role": "assistant", "text": f"Fixed mod_{i}: the function now returns the parsed value. " * 3},
        ]
        i += 1
    return bodies[:count]


def replay_msgspec(sid: str, messages: list[Any], enc: Any) -> list[bytes]:
    """The v1 replay as the renderer over typed messages (the complete-status subset)."""
    import codec_spike_model as m

    out, results = [], {}
    for msg in messages:
        if type(msg) is m.ToolResultMessage:
            results[msg.tool_call_id] = msg

    def send(update: Any) -> None:
        out.append(enc.encode(m.UpdateNotification(params=m.SessionNotification(sid, update))))

    for msg in messages:
        kind = type(msg)
        if kind is m.UserMessage:
            for block in msg.content:
                send(m.UserMessageChunk(block))
        elif kind is m.AssistantMessage:
            if msg.thinking:
                send(m.AgentThoughtChunk(m.TextContent(msg.thinking)))
            if msg.text:
                send(m.AgentMessageChunk(m.TextContent(msg.text)))
            for call in msg.tool_calls or ():
                r = results.get(call.id)
                send(m.ToolCall(
                    call.id, r.title or call.name, r.kind or "other", "failed" if r.is_error else "completed",
                    raw_input=call.arguments,
                    content=[m.ToolCallContentBlock(m.TextContent(r.content))],
                    locations=[m.ToolCallLocation(x.path, x.line) for x in r.locations] if r.locations else msgspec_unset(),
                ))
    return out


def msgspec_unset() -> Any:
    import msgspec

    return msgspec.UNSET


def history_bench(count: int) -> dict[str, float]:
    import codec_spike_model as m
    import msgspec

    from tether.rendering.replay import replay_frames
    from tether.store.snapshots import check_snapshot
    from tether_protocol import dumps, loads
    from tether_protocol.conversation import message_from_json, message_to_json

    bodies = conversation(count)
    stored = [dumps(b) for b in bodies]  # what the store's rows hold
    dec, enc = msgspec.json.Decoder(m.Message), msgspec.json.Encoder()
    typed_today = [message_from_json(loads(s)) for s in stored]
    typed_ms = [dec.decode(s) for s in stored]
    assert [enc.encode(x) for x in typed_ms] == stored, "msgspec's stored body is not today's bytes"
    assert [dumps(message_to_json(x)) for x in typed_today] == stored
    snap = {
        "tether_snapshot": 1,
        "session": {"id": "s", "workspace": "/w", "title": "t", "mode": "ask", "created_at": 1.0, "updated_at": 2.0,
                    "metadata": {}},
        "turns": [{"id": "t1", "seq": 1, "status": "complete", "stop_reason": "end_turn", "started_at": 1.0,
                   "finished_at": 2.0, "error": None}],
        "messages": [{"seq": i + 1, "turn_id": "t1", "role": b["role"], "status": "complete", "created_at": 1.5,
                      "body": b} for i, b in enumerate(bodies)],
        "reports": [], "pending": None, "exported_at": 3.0, "rules": [],
    }
    doc = dumps(snap)
    snap_dec = msgspec.json.Decoder(m.Snapshot)
    assert json.loads(enc.encode(snap_dec.decode(doc))) == json.loads(doc)
    sid = "sess_0123456789abcdef"
    pairs = [(b, "complete") for b in bodies]
    replay_today = [x.encode() for x in replay_frames(sid, pairs)]
    replay_ms = replay_msgspec(sid, typed_ms, enc)
    same = replay_today == replay_ms
    assert same or [json.loads(x) for x in replay_today] == [json.loads(x) for x in replay_ms], "replays differ"

    def export_ms_raw() -> bytes:  # bodies passed through as their stored text, never parsed
        rows = [{**x, "body": msgspec.Raw(s)} for x, s in zip(snap["messages"], stored)]
        return enc.encode({**snap, "messages": rows})

    assert json.loads(export_ms_raw()) == json.loads(doc)
    return {
        "load_today": best(lambda: [message_from_json(loads(s)) for s in stored], 3, True),
        "load_msgspec": best(lambda: [dec.decode(s) for s in stored], 3, True),
        "load_today_gc_on": best(lambda: [message_from_json(loads(s)) for s in stored], 3),
        "load_msgspec_gc_on": best(lambda: [dec.decode(s) for s in stored], 3),
        "save_today": best(lambda: [dumps(message_to_json(x)) for x in typed_today], 3, True),
        "save_msgspec": best(lambda: [enc.encode(x) for x in typed_ms], 3, True),
        "export_today": best(lambda: dumps({**snap, "messages": [
            {**x, "body": loads(s)} for x, s in zip(snap["messages"], stored)]}), 3, True),
        "export_msgspec_raw": best(export_ms_raw, 3, True),
        "restore_today": best(lambda: check_snapshot(loads(doc)), 3, True),
        "restore_msgspec": best(lambda: snap_dec.decode(doc), 3, True),
        "replay_today_text": best(lambda: [x.encode() for x in replay_frames(sid, pairs)], 3, True),
        "replay_msgspec_renderer": best(lambda: replay_msgspec(sid, typed_ms, enc), 3, True),
        "replay_msgspec_incl_decode": best(lambda: replay_msgspec(sid, [dec.decode(s) for s in stored], enc), 3, True),
        "replay_today_incl_loads": best(lambda: [x.encode() for x in replay_frames(
            sid, [(loads(s), "complete") for s in stored])], 3, True),
        "replay_bytes_identical": float(same),
        "doc_mb": len(doc) / 1e6,
    }


# ---- 3. errors, 4. schema ----------------------------------------------------------------


def bad_inputs() -> list[tuple[str, str, dict[str, Any]]]:
    deep = json.loads(json.dumps(PROMPT["params"]))
    deep["prompt"][2]["resource"]["text"] = 5
    missing = {"prompt": PROMPT["params"]["prompt"]}
    tag = {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA=="}]}
    extra = {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}], "promptt": []}
    return [
        ("wrong type deep in a list", "session/prompt", deep),
        ("missing required field", "session/prompt", missing),
        ("unknown tag", "session/prompt", tag),
        ("extra field", "session/prompt", extra),
        ("wrong enum value", "session/set_mode", {"sessionId": "s", "modeId": "yolo"}),
    ]


def errors() -> list[dict[str, str]]:
    import codec_spike_model as m
    import msgspec

    import tether_protocol as t
    from tether_protocol import InvalidParams, structure

    strict_prompt = msgspec.defstruct("PromptParams", [], bases=(m.PromptParams,), forbid_unknown_fields=True)
    rows = []
    for what, method, params in bad_inputs():
        today_cls = t.PromptParams if method == "session/prompt" else t.SetModeParams
        ms_cls = m.PromptParams if method == "session/prompt" else m.SetModeParams
        try:
            structure(params, today_cls, method=method)
            today = "(accepted)"
        except InvalidParams as exc:
            today = exc.message
        got = []
        for cls in (ms_cls, strict_prompt) if what == "extra field" else (ms_cls,):
            try:
                msgspec.json.decode(json.dumps(params), type=cls)
                got.append("(accepted)")
            except msgspec.ValidationError as exc:
                got.append(str(exc))
        try:
            msgspec.json.decode(json.dumps(params), type=ms_cls)
            kept = "(accepted)"
        except msgspec.ValidationError as exc:
            kept = todays_wording(exc, ms_cls, params, method)
        rows.append({"input": what, "today": today, "msgspec": " | forbid_unknown_fields: ".join(got),
                     "msgspec_reworded": kept, "same_as_today": str(kept == today)})
    return rows


_LABELS = {"str": "a string", "int": "an integer", "bool": "a boolean", "float": "a number",
           "array": "an array", "object": "an object", "null": "null"}
_MSGSPEC_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$")


def todays_wording(exc: Exception, cls: type, data: Any, method: str) -> str:
    """msgspec's ValidationError in today's words: its message parsed (msgspec gives text
    only, no structured path), the path walked through the Python types beside the data
    (for a Literal's choices in declared order and a union's accepted tags)."""
    import msgspec

    found = _MSGSPEC_ERROR.match(str(exc))
    assert found is not None
    what, path = found["what"], found["path"] or ""
    steps: list[Any] = [int(i) if i.isdigit() else i for i in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path) for i in i if i]
    missing = re.match(r"Object missing required field `(.+)`", what)
    if missing:
        steps.append(missing[1])
    tp: Any = cls
    value: Any = data
    for step in steps:  # the declared type at the failing position
        tp = _member(tp, value)
        if isinstance(step, int):
            tp, value = typing.get_args(tp)[0], value[step] if isinstance(value, list) and step < len(value) else None
        else:
            if not (isinstance(tp, type) and issubclass(tp, msgspec.Struct)):
                break  # a union's tag no member has: the union says what it accepts
            field = {f.encode_name: f for f in msgspec.structs.fields(tp)}.get(step)
            tp = field.type if field else Any
            value = value.get(step) if isinstance(value, dict) else None
    if what.startswith("Expected"):
        want, got = re.findall(r"`([^`]+)`", what)[:2]
        why = f"expected {_LABELS.get(want, want)}, got {_LABELS.get(got, got)}"
    elif missing:
        choices = typing.get_args(tp) if typing.get_origin(tp) is typing.Literal else ()
        why = "required field missing" + (f"; send one of: {', '.join(choices)}" if choices else "")
    elif what.startswith("Invalid enum value"):
        why = "must be one of: " + ", ".join(typing.get_args(tp))
    elif what.startswith("Invalid value") and steps and steps[-1] == "type":
        steps = steps[:-1]
        tags = sorted(m.__struct_config__.tag for m in typing.get_args(tp))
        why = f"unsupported type {what.split(' ', 2)[2]}; accepted: {', '.join(tags)}"
    else:
        why = what
    return f"invalid params for {method}: params.{_cattrs_path(steps)}: {why}"


def _member(tp: Any, value: Any) -> Any:
    """The union member `value` is (by its tag), or `tp` itself."""
    members = [m for m in typing.get_args(tp) if isinstance(m, type)] if typing.get_origin(tp) is typing.Union else []
    for member in members:
        config = getattr(member, "__struct_config__", None)
        if config and config.tag_field and isinstance(value, dict) and value.get(config.tag_field) == config.tag:
            return member
    return tp


def _cattrs_path(steps: list[Any]) -> str:
    """Today's spelling of a path: `prompt: item 2: .resource.text` (cattrs' list items)."""
    out = ""
    for step in steps:
        out += f": item {step}: " if isinstance(step, int) else (f".{step}" if out else step)
    return out.rstrip(": ")


SCHEMA_SLICE = ["PromptParams", "PromptResult", "SessionNotification", "InitializeParams", "InitializeResult"]


def schema_diff() -> list[str]:
    """Per class of the slice: properties, required keys and tags that differ."""
    import codec_spike_model as m
    import msgspec

    _, ms_defs = msgspec.json.schema_components([getattr(m, n) for n in SCHEMA_SLICE], ref_template="#/$defs/{name}")
    today = json.loads((ROOT / "protocol" / "schema.json").read_text())["$defs"]
    notes = []
    for name, ours in sorted(ms_defs.items()):
        theirs = today.get(name)
        if theirs is None:
            notes.append(f"{name}: not in protocol/schema.json")
            continue
        if "properties" not in ours:
            kinds = "oneOf/anyOf" if ("oneOf" in ours or "anyOf" in ours) else sorted(ours)
            tkinds = "oneOf" if "oneOf" in theirs else sorted(theirs)
            if kinds != tkinds or ("discriminator" in ours) != ("discriminator" in theirs):
                notes.append(f"{name}: union {json.dumps(ours)[:160]} vs today {json.dumps(theirs)[:160]}")
            continue
        props, tprops = set(ours["properties"]), set(theirs.get("properties", {}))
        req, treq = set(ours.get("required", [])), set(theirs.get("required", []))
        diffs = []
        if props != tprops:
            diffs.append(f"properties only msgspec {sorted(props - tprops)}, only today {sorted(tprops - props)}")
        if req != treq:
            diffs.append(f"required only msgspec {sorted(req - treq)}, only today {sorted(treq - req)}")
        for key in sorted(props & tprops):
            a, b = ours["properties"][key], theirs["properties"][key]
            if _shape(a) != _shape(b):
                diffs.append(f"{key}: {_shape(a)} vs today {_shape(b)}")
        if diffs:
            notes.append(f"{name}: " + "; ".join(diffs))
    notes.append(f"({len(ms_defs)} definitions compared)")
    return notes


def _shape(schema: dict[str, Any]) -> str:
    """A property's type without descriptions, titles and defaults, for comparing."""
    keep = {k: v for k, v in schema.items() if k not in ("description", "title", "default")}
    if "anyOf" in keep:
        keep["anyOf"] = sorted(_shape(s) for s in keep["anyOf"])
    return json.dumps(keep, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--only", default="cold,hot,errors,schema")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    import msgspec

    print(f"# python {sys.version.split()[0]}, msgspec {msgspec.__version__}")
    if "cold" in parts:
        print("## cold (ms CPU, medians of", args.runs, "fresh processes)")
        print(json.dumps(cold(args.runs), indent=1))
        print("## cold with the stdlib prelude loaded first (the marginal cost in a running daemon)")
        print(json.dumps(cold(args.runs, PRELUDE), indent=1))
    if "hot" in parts:
        print(f"## {args.chunks} agent_message_chunk notifications (ms, best of 5)")
        print(json.dumps(chunk_bench(args.chunks), indent=1))
        print(f"## {args.chunks} session/prompt decodes, 3 blocks (ms, best of 5)")
        print(json.dumps(prompt_bench(args.chunks), indent=1))
        print(f"## a {args.messages}-message conversation (ms, best of 3, collector paused but the _gc_on rows)")
        print(json.dumps(history_bench(args.messages), indent=1))
    if "errors" in parts:
        print("## validation errors")
        for row in errors():
            print(json.dumps(row, indent=1))
    if "schema" in parts:
        print("## schema_components vs protocol/schema.json")
        print("\n".join(schema_diff()))


if __name__ == "__main__":
    main()
