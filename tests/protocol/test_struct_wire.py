"""The bridge to the msgspec model (docs/decisions/0001): a Struct anywhere in what the
daemon writes goes out in the wire's spelling (`_json.dumps`), and the attrs converter
takes and gives Structs, so the model moves one module at a time without a client seeing it."""

from __future__ import annotations

from typing import Any

import pytest

from tether_protocol import (
    DequeueParams,
    DiffContent,
    EmbeddedResource,
    InvalidParams,
    PromptParams,
    QueueParams,
    SteerParams,
    TextContent,
    TextResource,
    ToolCall,
    ToolCallContentBlock,
    ToolCallUpdate,
    UpdateMeta,
    UpdateTetherMeta,
    dumps,
    loads,
    structure,
    unstructure,
)


def test_a_struct_inside_json_is_written_as_the_wire_always_had_it() -> None:
    call = ToolCall("c1", "Read a.py", "read", "pending", {"limit": 1e16, "é": "\n"})
    body = dumps({"sessionId": "s", "update": call})
    # the tag first, camelCase keys, written defaults kept, unset fields left out, and raw
    # JSON in orjson's spelling (msgspec's own encoder would write 1e16)
    assert body == (
        b'{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a.py",'
        b'"kind":"read","status":"pending","rawInput":{"limit":1e+16,"\xc3\xa9":"\\n"}}}'
    )


def test_none_fields_are_left_out_and_snake_case_meta_keys_stay() -> None:
    update = ToolCallUpdate("c1", status="completed", content=[DiffContent("/w/a.py", "new\n")],
                            meta=UpdateMeta(UpdateTetherMeta(approved_by="rule")))
    assert loads(dumps(update)) == {
        "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
        "content": [{"type": "diff", "path": "/w/a.py", "newText": "new\n"}],
        "_meta": {"tether": {"approvedBy": "rule"}},
    }


def test_a_lone_surrogate_in_a_struct_is_written_whole() -> None:
    # orjson refuses it; the standard library's path writes the Struct's built-ins, as U+FFFD
    assert loads(dumps([TextContent("a\ud800b")])) == [{"type": "text", "text": "a\ufffdb"}]


def test_what_is_neither_json_nor_the_model_is_still_refused() -> None:
    with pytest.raises(TypeError):
        dumps({"x": object()})


def test_an_attrs_class_holding_structs_structures_and_unstructures_them() -> None:
    wire: dict[str, Any] = {"sessionId": "s", "prompt": [
        {"type": "text", "text": "look"},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
    ]}
    params = structure(wire, SteerParams, method="_tether/session/steer")
    assert params.prompt == [TextContent("look"), EmbeddedResource(TextResource("file:///a", "x"))]
    assert unstructure(params) == wire
    assert unstructure(ToolCallContentBlock(TextContent("t"))) == {"type": "content", "content": {"type": "text", "text": "t"}}


def test_a_bad_struct_inside_an_attrs_class_is_named_as_before() -> None:
    bad = {"sessionId": "s", "prompt": [{"type": "text", "text": "ok"}, {"type": "resource", "resource": {"uri": "u"}}]}
    with pytest.raises(InvalidParams) as found:
        structure(bad, SteerParams, method="_tether/session/steer")
    assert found.value.message == (
        "invalid params for _tether/session/steer: params.prompt: item 1: .resource.text: required field missing"
    )


# What main's attrs converter said for each (checked against a worktree of main): a params
# class's own words come first, in field order, whatever else is wrong
_REQUIRED = "invalid params for _tether/session/dequeue: sessionId (a non-empty string) is required"
_QUEUE_ID = "invalid params for _tether/session/dequeue: queueId (a non-empty string from _tether/session/queue) is required"


@pytest.mark.parametrize(("cls", "params", "message"), [
    (QueueParams, {}, _REQUIRED),
    (QueueParams, {"sessionId": ""}, _REQUIRED),
    (QueueParams, {"sessionId": 3}, _REQUIRED),
    (DequeueParams, {"sessionId": "s"}, _QUEUE_ID),
    (DequeueParams, {"sessionId": "s", "queueId": ""}, _QUEUE_ID),
    (DequeueParams, {"queueId": 5}, _REQUIRED),
    (QueueParams, {"sessionId": "s", "_meta": 3},
     "invalid params for _tether/session/dequeue: params._meta: expected an object, got an integer"),
    (PromptParams, {"sessionId": "s", "prompt": [], "_meta": "x"},
     "invalid params for _tether/session/dequeue: params._meta: expected an object, got a string"),
])
def test_a_params_class_moved_to_msgspec_keeps_its_own_words(cls: type, params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParams) as found:
        structure(params, cls, method="_tether/session/dequeue")
    assert found.value.message == message
