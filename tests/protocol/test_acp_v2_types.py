"""The generated ACP v2 types (protocol/tools/gen_acp.py): the checked-in module is what
the vendored schema gives, and the open unions take a variant this schema does not know."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from tether_protocol import InvalidParams
from tether_protocol.acp_v2 import convert, decode, encode
from tether_protocol.acp_v2 import schema_types as v2

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_module_is_what_the_schema_generates() -> None:
    done = subprocess.run(
        [sys.executable, "protocol/tools/gen_acp.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


# Run alone in a fresh interpreter: every Struct of one area module gets its decoder, which
# resolves each field's type by name in that module (a name the area neither defines nor
# imports fails only then, at a client's first message of that kind).
AREA_ALONE = """
import importlib, json, sys, msgspec
from tether_protocol.acp_v2 import _open
module = importlib.import_module("tether_protocol.acp_v2." + sys.argv[1])
made = 0
for value in list(vars(module).values()):
    if isinstance(value, type) and issubclass(value, msgspec.Struct) and value.__module__ == module.__name__:
        try:
            msgspec.json.Decoder(value, dec_hook=_open.dec_hook)
        except TypeError as exc:  # (the schema's untagged unions of two Structs: `Any` elsewhere)
            assert "must be tagged" in str(exc), exc
        made += 1
print(made, json.dumps(sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith("tether_protocol.acp_v2."))))
"""
V2_AREAS = sorted(
    path.stem for path in (ROOT / "protocol" / "tether_protocol" / "acp_v2").glob("*.py") if path.stem[0] != "_"
)


@pytest.mark.parametrize("area", [a for a in V2_AREAS if a != "schema_types"])
def test_each_area_module_alone_resolves_every_field_type_it_names(area: str) -> None:
    done = subprocess.run([sys.executable, "-c", AREA_ALONE, area], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    made, loaded = done.stdout.split(" ", 1)
    assert int(made) > 0
    # and it loads only the areas listed before it (protocol/tools/acp_v2_areas.py's order)
    sys.path.insert(0, str(ROOT / "protocol" / "tools"))
    from acp_v2_areas import AREAS

    order = list(AREAS)
    assert area in order
    assert [a for a in json.loads(loaded) if a in order and order.index(a) > order.index(area)] == []


def test_an_update_kind_the_schema_does_not_know_decodes_and_encodes_as_it_came() -> None:
    line = b'{"sessionId":"s1","update":{"sessionUpdate":"replay_complete","_meta":{"tether":{"n":1}}}}'
    note = decode(line, v2.UpdateSessionNotification)
    assert note.update.value == {"sessionUpdate": "replay_complete", "_meta": {"tether": {"n": 1}}}
    assert encode(note) == line


def test_a_known_kind_is_checked_field_by_field_even_inside_a_nested_union() -> None:
    ok = b'{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}'
    note = decode(ok, v2.UpdateSessionNotification)
    assert isinstance(note.update.value.value, v2.SessionUpdate_state_update_idle)
    assert note.update.tag == "state_update"
    assert encode(note) == ok  # both tags written back, the outer first
    with pytest.raises(msgspec.ValidationError, match="messageId"):
        decode(
            b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
            b'"content":{"type":"text","text":"v1 had no id"}}}',
            v2.UpdateSessionNotification,
        )
    with pytest.raises(msgspec.ValidationError, match="stopReason"):
        decode(ok.replace(b'"end_turn"', b"7"), v2.UpdateSessionNotification)


def test_a_bad_v2_param_gets_the_v1_wording() -> None:
    with pytest.raises(InvalidParams, match=r"invalid params for initialize: params\.info"):
        convert({"protocolVersion": 2, "info": "tether"}, v2.InitializeRequest, method="initialize")


def test_an_idle_state_keeps_its_failure_typed_on_the_update_and_on_a_child() -> None:
    error = b'"error":{"code":-32603,"message":"the provider failed","data":{"status":502}}'
    line = b'{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"error",' + error
    note = decode(line + b"}}", v2.UpdateSessionNotification)
    idle = note.update.value.value
    assert isinstance(idle, v2.SessionUpdate_state_update_idle) and isinstance(idle.error, v2.Error)
    assert (idle.error.code, idle.error.data) == (-32603, {"status": 502})
    assert encode(note) == line + b"}}"  # the schema's order: the tags, then stopReason, then error
    child = b'{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"idle",'
    child += b'"stopReason":"error",' + error + b"}}}"
    note = decode(child, v2.UpdateSessionNotification)
    assert isinstance(note.update.value.state.value.error, v2.Error)
    assert encode(note) == child
    with pytest.raises(msgspec.ValidationError, match=r"error.code"):
        decode(line.replace(b"-32603", b'"x"') + b"}}", v2.UpdateSessionNotification)


def test_a_state_the_schema_does_not_know_passes_as_it_came() -> None:
    line = b'{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"paused","why":1}}'
    note = decode(line, v2.UpdateSessionNotification)
    assert note.update.tag == "state_update" and note.update.value.value == {
        "sessionUpdate": "state_update",
        "state": "paused",
        "why": 1,
    }
    assert encode(note) == line
