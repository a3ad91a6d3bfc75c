"""The generated JSON Schema: fresh, self-consistent, true to the converter, close to ACP.

`test_committed_schema_is_up_to_date` is the one that fails when a message class changes
and `protocol/schema.json` was not regenerated (`python -m tether_protocol.schema`).
"""

from __future__ import annotations

import copy
import functools
import json
import typing
from pathlib import Path
from typing import Any, Literal

import msgspec
import pytest
from jsonschema import Draft202012Validator
from schema_samples import INVALID, VALID
from tether_protocol import _errors, _messages
from tether_protocol import Described, build_schema, structure, unstructure
from tether_protocol._schema import GENERATED_COMMENT
from tether_protocol.schema import DEFAULT_PATH, main, render

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE.parents[1] / "protocol" / "schema.json"
ACP_SCHEMA_PATH = HERE / "acp-v1-schema.json"
STALE = "protocol/schema.json is stale; run python -m tether_protocol.schema"


@functools.cache
def _schema() -> dict[str, Any]:
    return build_schema()


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    schema = _schema()
    assert name in schema["$defs"], f"no $defs entry {name!r}"
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    )


def _errors_of(name: str, message: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in _validator(name).iter_errors(message)
    ]


def _refs(node: Any) -> typing.Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _message_classes() -> dict[str, type]:
    return {
        name: value
        for name, value in vars(_messages).items()
        if _is_struct(value) and value.__name__ == name
    }


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def _counts(cls: type) -> tuple[int, int]:
    """(properties, required) of a message class: a Struct's fields and its tag
    (`tag_field`, a property with one value: required, as msgspec always writes it)."""
    fields = msgspec.structs.fields(cls)
    tagged = cls.__struct_config__.tag_field is not None  # type: ignore[attr-defined]
    return len(fields) + tagged, sum(f.required for f in fields) + tagged


# ---- the committed file --------------------------------------------------------------


def test_committed_schema_is_up_to_date() -> None:
    # the schema the installed package has (this checkout's file, or a wheel's copy) is this one
    assert DEFAULT_PATH.read_bytes() == SCHEMA_PATH.read_bytes()
    assert SCHEMA_PATH.is_file(), STALE + " (the file is missing)"
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert json.loads(text) == build_schema(), STALE
    assert text == render(), STALE + " (same content, different formatting)"


def test_check_flag_reports_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "schema.json"
    assert main(["--check", "--output", str(target)]) == 1
    assert "is stale (missing); run python -m tether_protocol.schema" in capsys.readouterr().err

    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render()
    assert main(["--check", "--output", str(target)]) == 0

    target.write_text(render().replace('"title": "ToolCall"', '"title": "Edited"'))
    assert main(["--check", "--output", str(target)]) == 1
    assert "is stale; run python -m tether_protocol.schema" in capsys.readouterr().err


def test_build_schema_is_deterministic_and_fresh() -> None:
    first = build_schema()
    snapshot = copy.deepcopy(first)
    first["$defs"].clear()
    assert build_schema() == snapshot
    assert render() == render()
    assert snapshot["$comment"] == GENERATED_COMMENT
    assert render().isascii()


# ---- self-consistency ------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = _schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_ref_resolves() -> None:
    schema = _schema()
    refs = set(_refs(schema))
    assert refs, "the schema has no $ref at all"
    for ref in sorted(refs):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in schema["$defs"], f"dangling {ref}"


def test_every_def_is_reachable_from_a_method() -> None:
    schema = _schema()
    defs = schema["$defs"]
    seen: set[str] = set()
    todo = [r.removeprefix("#/$defs/") for r in _refs(schema["x-tether-methods"])]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(r.removeprefix("#/$defs/") for r in _refs(defs[name]))
    assert sorted(set(defs) - seen) == [], "defined but used by no method (missing from a method table?)"


def test_every_message_class_has_a_def() -> None:
    defs = _schema()["$defs"]
    for name, cls in _message_classes().items():
        entry = defs[name]
        assert entry["title"] == name
        assert entry["type"] == "object"
        properties, required = _counts(cls)
        assert len(entry["properties"]) == properties, name
        assert len(entry.get("required", [])) == required, name
    # aliases point at the real class rather than duplicating it
    assert "ResumeSessionParams" not in defs
    assert defs["ToolCallContentBlock"]["description"].startswith("`{")
    assert "_meta" in defs["PromptParams"]["properties"]
    assert "meta" not in defs["PromptParams"]["properties"]


def test_tagged_unions_are_refs_with_a_discriminator_and_the_tag_required() -> None:
    defs = _schema()["$defs"]
    for name, tag, members in [
        ("ContentBlock", "type", _messages.ContentBlock),
        ("SessionUpdate", "sessionUpdate", _messages.SessionUpdate),
    ]:
        refs = [f"#/$defs/{m.__name__}" for m in typing.get_args(members)]
        assert [v["$ref"] for v in defs[name]["anyOf"]] == refs
        assert defs[name]["discriminator"]["propertyName"] == tag
        assert sorted(defs[name]["discriminator"]["mapping"].values()) == sorted(refs)
        for member in typing.get_args(members):
            entry = defs[member.__name__]
            assert tag in entry["required"]
            assert entry["properties"][tag] == {"enum": [member.__struct_config__.tag]}


def test_method_table() -> None:
    methods = _schema()["x-tether-methods"]
    expected = (
        set(_messages.CLIENT_REQUESTS)
        | set(_messages.CLIENT_NOTIFICATIONS)
        | set(_messages.AGENT_REQUESTS)
        | set(_messages.AGENT_NOTIFICATIONS)
    )
    assert set(methods) == expected == set(_messages.METHODS)
    assert methods["session/prompt"] == {
        "direction": "client->agent",
        "kind": "request",
        "extension": False,
        "params": {"$ref": "#/$defs/PromptParams"},
        "result": {"$ref": "#/$defs/PromptResult"},
    }
    assert methods["session/update"] == {
        "direction": "agent->client",
        "kind": "notification",
        "extension": False,
        "params": {"$ref": "#/$defs/SessionNotification"},
        "result": None,
    }
    assert methods["session/request_permission"] == {
        "direction": "agent->client",
        "kind": "request",
        "extension": False,
        "params": {"$ref": "#/$defs/RequestPermissionParams"},
        "result": {"$ref": "#/$defs/RequestPermissionResult"},
    }
    assert methods["shutdown"]["params"] == {"$ref": "#/$defs/EmptyParams"}
    assert methods["shutdown"]["result"] == {"type": "null"}
    assert methods["session/resume"]["params"] == {"$ref": "#/$defs/LoadSessionParams"}
    assert methods["$/cancel_request"]["direction"] == "both"
    assert methods["_tether/session/report"]["extension"] is True
    assert sorted(m for m, e in methods.items() if e["extension"]) == [
        "_tether/daemon/stats", "_tether/rules/list", "_tether/rules/remove",
        "_tether/session/changes", "_tether/session/cleared", "_tether/session/dequeue", "_tether/session/dump",
        "_tether/session/fork", "_tether/session/latest", "_tether/session/queue", "_tether/session/report",
        "_tether/session/restore", "_tether/session/rewind", "_tether/session/search", "_tether/session/steer",
        "_tether/toolCall/cancel",
    ]
    assert sorted(m for m, e in methods.items() if e["direction"] == "agent->client") == [
        "$/progress", "_tether/session/cleared", "fs/read_text_file", "fs/write_text_file", "session/request_permission",
        "session/update", "window/logMessage", "window/showDocument", "window/showMessage",
        "window/showMessageRequest", "window/workDoneProgress/create", "workspace/applyEdit",
    ]
    for entry in methods.values():
        assert entry["params"] is not None
        if entry["kind"] == "notification":
            assert entry["result"] is None
        else:
            assert entry["result"] is not None


def test_error_table() -> None:
    table = _schema()["x-tether-errors"]
    assert table == {
        str(cls.code): {"name": cls.__name__, "message": cls.default_message}
        for cls in _errors.ERROR_CLASSES
    }
    assert len(table) == len(_errors.ERROR_CLASSES), "two error classes share a code"
    assert table["-32602"]["name"] == "InvalidParams"


@pytest.mark.parametrize(("name", "message"), [pytest.param(d, m, id=i) for i, d, m in VALID])
def test_realistic_messages_validate(name: str, message: dict[str, Any]) -> None:
    assert _errors_of(name, message) == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param(d, m, id=i)
        for i, d, m in VALID
    ],
)
def test_realistic_messages_structure_and_round_trip(name: str, message: dict[str, Any]) -> None:
    """The converter accepts what the schema accepts, and what it emits fits the schema."""
    if name in SENT_ONLY:
        return _assert_sent_only(getattr(_messages, name), message)
    obj = structure(message, getattr(_messages, name))
    assert _errors_of(name, unstructure(obj)) == []
    assert _kept(message, unstructure(obj)), "the converter dropped or changed what it read"


# Tether sends these and never reads them: each is an untagged union of two objects (a dump's
# snapshot or file, a latest session or none), which msgspec writes but will not read. (LSP's
# `documentChanges`, another, is a field read as raw JSON: `_lsp.DocumentChanges`.)
SENT_ONLY = frozenset({"DumpResult", "LatestResult"})


def _assert_sent_only(cls: Any, wire: Any) -> None:
    with pytest.raises(TypeError, match="must be tagged"):
        structure(wire, cls)


def _kept(sent: Any, back: Any) -> bool:
    """Everything in `sent` is in `back` (which may add defaults)."""
    if isinstance(sent, dict):
        return isinstance(back, dict) and all(k in back and _kept(v, back[k]) for k, v in sent.items())
    if isinstance(sent, list):
        return isinstance(back, list) and len(sent) == len(back) and all(map(_kept, sent, back))
    return bool(sent == back)


@pytest.mark.parametrize(("name", "message"), [pytest.param(d, m, id=i) for i, d, m in INVALID])
def test_invalid_messages_are_rejected(name: str, message: dict[str, Any]) -> None:
    assert _errors_of(name, message) != [], "the schema accepted it"
    with pytest.raises(_errors.InvalidParams):
        structure(message, getattr(_messages, name))


# ---- every class, every field ------------------------------------------------------------


def _sample(tp: Any, *, nulls: bool) -> Any:
    """A value of annotation `tp`; `nulls` picks None wherever the annotation allows it."""
    if tp is Any:
        return "any"
    if typing.get_origin(tp) is typing.Annotated:  # msgspec's checks: "s" is long enough
        base, *checks = typing.get_args(tp)
        described = [c.shape for c in checks if isinstance(c, Described)]
        if described and not any(map(_is_struct, typing.get_args(base))):  # raw JSON described by a shape
            return unstructure(_sample(described[0], nulls=nulls))
        return _sample(base, nulls=nulls)
    if tp is type(None):
        return None
    if tp in (str, int, float, bool):
        return {str: "s", int: 3, float: 1.5, bool: True}[tp]
    if _is_struct(tp):
        return tp(**{f.name: _sample(f.type, nulls=nulls) for f in msgspec.structs.fields(tp)})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return args[-1]
    if origin is list:
        return [_sample(args[0], nulls=nulls)]
    if origin is tuple:  # `tuple[X, ...]`
        return (_sample(args[0], nulls=nulls),)
    if origin is dict:
        return {"key": _sample(args[1], nulls=nulls)}
    if origin is typing.Union:
        if nulls and type(None) in args:
            return None
        return _sample(next(a for a in args if a not in (type(None), msgspec.UnsetType)), nulls=nulls)
    raise TypeError(f"no sample for {tp!r}")


@pytest.mark.parametrize("nulls", [False, True], ids=["all-set", "nulls"])
@pytest.mark.parametrize("name", sorted(_message_classes()))
def test_every_class_unstructures_to_its_schema(name: str, nulls: bool) -> None:
    obj = _sample(_message_classes()[name], nulls=nulls)
    wire = unstructure(obj)
    assert _errors_of(name, wire) == []
    if name in SENT_ONLY:
        return _assert_sent_only(type(obj), wire)
    assert structure(wire, type(obj)) == obj
