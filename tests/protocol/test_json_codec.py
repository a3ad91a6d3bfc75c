"""The JSON codec of the wire and the store (orjson, the standard library where orjson
refuses or would change a value): what a client sends is read as `json.loads` reads it,
and what we write reads back as the value that was written."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tether_protocol import dumps, dumps_text, loads

_text = st.text(st.sampled_from('ab \n\t\0"\\é😀\u2028\ud800\udfff'), max_size=8) | st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


def _whole(value: Any) -> Any:
    """``value`` with lone surrogates as U+FFFD (the codec's one difference from json)."""
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {_whole(k): _whole(v) for k, v in value.items()}
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and int never equal to float (a changed type is a bug)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(value=_json, ascii_only=st.booleans())
def test_a_message_reads_as_the_standard_library_reads_it(value: Any, ascii_only: bool) -> None:
    """Including what orjson alone gets wrong or refuses: integers over 64 bits (it
    makes them floats), lone surrogate escapes (JavaScript writes them: read as U+FFFD,
    the one difference), NaN."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = _whole(json.loads(text))
    assert _same(loads(text), expected)
    if ascii_only:  # the same text as bytes off the wire
        assert _same(loads(text.encode()), expected)


@pytest.mark.parametrize("text", ['{"a": 1,}', "[1, 2", '{"a" 1}', "", "nul", '"\\x"', '{"id": 1} trailing'])
def test_invalid_json_fails_with_the_standard_library_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as std:
        json.loads(text)
    assert str(ours.value) == str(std.value)


def test_a_long_integer_keeps_every_digit() -> None:
    big = 123456789012345678901234567890
    assert loads(f'{{"id": {big}}}') == {"id": big}
    assert loads(f'{{"id": {big}}}'.encode()) == {"id": big}
    assert loads(dumps({"id": big})) == {"id": big}
    assert loads(b'{"id": 18446744073709551615}') == {"id": 2**64 - 1}
    assert loads(b"[-9223372036854775809, 9223372036854775808]") == [-(2**63) - 1, 2**63]
    assert type(loads(b"[-9223372036854775809]")[0]) is int


@settings(max_examples=400, deadline=None)
@given(value=_json)
def test_what_is_written_reads_back_as_the_value(value: Any) -> None:
    """Compact UTF-8 JSON; strict JSON (no NaN: null, as JSON.stringify writes it); a
    lone surrogate, which UTF-8 cannot hold, becomes U+FFFD."""
    data = dumps(value)
    assert dumps_text(value).encode() == data  # valid UTF-8 text, the same
    back = json.loads(data, parse_constant=lambda name: pytest.fail(f"{name} written"))
    assert _same(back, _whole(_nan_to_none(value)))


def test_a_lone_surrogate_is_the_replacement_character_and_a_pair_its_character() -> None:
    """JavaScript's JSON.stringify writes a broken pair as a lone escape: nothing past the
    decoder (SQLite, UTF-8, files) could take it."""
    text = '{"k\\ud800": ["x\\udc00y", "\\uD83D"], "pair": "\\ud83d\\ude00", "s": "\\u00e9"}'
    expected = {"k\ufffd": ["x\ufffdy", "\ufffd"], "pair": "😀", "s": "é"}
    assert loads(text) == loads(text.encode()) == expected
    assert loads('"a\ud800"') == "a\ufffd"  # handed in as str, already decoded
    assert loads(b'{"id": 123456789012345678901234567890, "t": "\\udfff"}') == {
        "id": 123456789012345678901234567890, "t": "\ufffd"}
    assert dumps({"name": "bad\udcff.txt"}) == '{"name":"bad\ufffd.txt"}'.encode()
    assert dumps_text(["\ud83d"]) == '["\ufffd"]'


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    return value


def test_keys_that_are_not_strings_are_written_as_the_standard_library_writes_them() -> None:
    assert dumps({1: "a", None: 2, 2.5: True}) == b'{"1":"a","null":2,"2.5":true}'


def test_a_value_orjson_cannot_write_is_still_strict_json() -> None:
    """An integer over 64 bits sends the value to the standard library, which would
    write NaN; a list shared by two keys is not a cycle."""
    shared = [float("nan")]
    assert dumps({"big": 2**70, "x": float("inf"), "a": shared, "b": shared}) == (
        b'{"big":1180591620717411303424,"x":null,"a":[null],"b":[null]}'
    )
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        dumps(cycle)


def test_lone_surrogates_are_replaced_at_any_depth_and_in_any_encoding() -> None:
    """json.loads reads bytes in UTF-16 and UTF-32 too (with "surrogatepass"), and nests
    as deep as the interpreter allows: the replacement followed the value and broke at
    ~500 levels."""
    deep = "[" * 900 + '"\\ud800"' + "]" * 900
    value = loads(deep)
    for _ in range(900):
        (value,) = value
    assert value == "\ufffd"
    for encoding in ("utf-16", "utf-16-le", "utf-32-be"):
        assert loads('{"a": "x\ud800y"}'.encode(encoding, "surrogatepass")) == {"a": "x\ufffdy"}
    # an escaped backslash before "u" is no escape; a pair stays the one character
    assert loads('["\\\\ud800", "\\\\\\ud800", "\\ud83d\\ude00"]') == ["\\ud800", "\\\ufffd", "😀"]
    with pytest.raises(json.JSONDecodeError) as ours:
        loads('["\\ud800", 1,]')
    with pytest.raises(json.JSONDecodeError) as std:
        json.loads('["\\ud800", 1,]')
    assert str(ours.value) == str(std.value)  # an error keeps its place
