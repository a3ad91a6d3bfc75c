"""The msgspec codec (`tether_protocol._codec`) says what today's converter says about bad
params: the same `-32602` message for each kind of mistake, so moving a class to msgspec
changes no error a client sees (docs/decisions/0001)."""

from __future__ import annotations

import json
from typing import Any, Literal, Union

import msgspec
import pytest

from tether_protocol import InvalidParams, PromptParams, SetModeParams, convert, decode, structure
from tether_protocol._codec import Wire

Meta = Union[dict[str, Any], None]


class TextContent(Wire, tag_field="type", tag="text"):
    text: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class ResourceLink(Wire, tag_field="type", tag="resource_link"):
    uri: str
    name: str
    mime_type: Union[str, None] = None


class TextResource(Wire):
    uri: str
    text: str
    mime_type: Union[str, None] = None


class EmbeddedResource(Wire, tag_field="type", tag="resource"):
    resource: TextResource


class Prompt(Wire):
    session_id: str
    prompt: list[Union[TextContent, ResourceLink, EmbeddedResource]]
    meta: Meta = msgspec.field(default=None, name="_meta")


class SetMode(Wire):
    session_id: str
    mode_id: Literal["read-only", "ask", "auto-edit", "full-auto"]


GOOD = {"sessionId": "s", "prompt": [
    {"type": "text", "text": "look at"},
    {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"},
    {"type": "resource", "resource": {"uri": "file:///b.py", "text": "x = 1\n"}},
]}


def _bad(path: list[Any], value: Any) -> dict[str, Any]:
    params = json.loads(json.dumps(GOOD))
    where = params
    for step in path[:-1]:
        where = where[step]
    where[path[-1]] = value
    return params


CASES = [
    ("wrong type deep in a list", "session/prompt", _bad(["prompt", 2, "resource", "text"], 5)),
    ("wrong type at the top", "session/prompt", _bad(["sessionId"], 7)),
    ("missing required field", "session/prompt", {"prompt": GOOD["prompt"]}),
    ("unknown tag", "session/prompt", _bad(["prompt", 1], {"type": "video", "data": "AA=="})),
    ("wrong enum value", "session/set_mode", {"sessionId": "s", "modeId": "yolo"}),
    ("missing enum field", "session/set_mode", {"sessionId": "s"}),
]

# What the attrs converter said before any class moved (main at the day-0 codec): the
# words a client gets must not change as the classes move to msgspec one by one
TODAY = {
    "wrong type deep in a list": (
        "invalid params for session/prompt: params.prompt: item 2: .resource.text: expected a string, got an integer"
    ),
    "wrong type at the top": "invalid params for session/prompt: params.sessionId: expected a string, got an integer",
    "missing required field": "invalid params for session/prompt: params.sessionId: required field missing",
    "unknown tag": (
        "invalid params for session/prompt: params.prompt: item 1: unsupported type 'video'; "
        "accepted: resource, resource_link, text"
    ),
    "wrong enum value": (
        "invalid params for session/set_mode: params.modeId: must be one of: read-only, ask, auto-edit, full-auto"
    ),
    "missing enum field": (
        "invalid params for session/set_mode: params.modeId: required field missing; "
        "send one of: read-only, ask, auto-edit, full-auto"
    ),
}


@pytest.mark.parametrize(("what", "method", "params"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_param_gets_todays_message(what: str, method: str, params: dict[str, Any]) -> None:
    today_cls, new_cls = (PromptParams, Prompt) if method == "session/prompt" else (SetModeParams, SetMode)
    with pytest.raises(InvalidParams) as today:
        structure(params, today_cls, method=method)
    with pytest.raises(InvalidParams) as from_dicts:
        convert(params, new_cls, method=method)
    with pytest.raises(InvalidParams) as from_text:
        decode(json.dumps(params).encode(), new_cls, method=method)
    assert today.value.message == TODAY[what]
    assert from_dicts.value.message == today.value.message, what
    assert from_text.value.message == today.value.message, what


def test_good_params_decode_and_encode_as_they_came() -> None:
    decoded = decode(json.dumps(GOOD), Prompt, method="session/prompt")
    assert isinstance(decoded.prompt[2], EmbeddedResource) and decoded.prompt[2].resource.text == "x = 1\n"
    assert msgspec.json.decode(msgspec.json.encode(decoded)) == GOOD  # None left out, tags first
