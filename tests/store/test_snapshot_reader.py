"""`SnapshotReader` reads a snapshot's text a value at a time: whatever the layout and
wherever the reads cut it (inside an escape, a surrogate pair, a number, a literal), it
hands over what the wire's reading gives (a lone surrogate is U+FFFD); a file cut short or
damaged is named by line, column and character."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.store.snapshot_reader import STREAMED_LISTS, SnapshotReader
from tether.store.snapshots import SnapshotError
from tether_protocol import loads

_pieces = st.sampled_from(["a", "\\\\", "\\ud83d\\ude00", "\\ud800", "\\ude00", "\\u00e9", "\\n", "é", "😀",
                           "\\\\ud800", "\\\\\\ud83d\\ude00", " ", "1", '\\"'])
_string = st.lists(_pieces, max_size=12).map(lambda parts: '"' + "".join(parts) + '"')
_scalar = _string | st.sampled_from(["0", "-0.5", "12345.5e3", "1E-7", "true", "false", "null", "123456789012"])


def _value(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _scalar
    inner = _value(depth - 1)
    return _scalar | st.lists(inner, max_size=3).map(lambda items: "[" + " , ".join(items) + "]") | st.lists(
        st.tuples(_string, inner), max_size=3
    ).map(lambda pairs: "{" + ",\n  ".join(f"{k}: {v}" for k, v in pairs) + "}")


def _read(text: str, chunk: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in SnapshotReader(io.BytesIO(text.encode("utf-8")), "snap.json", chunk).entries():
        out[key] = list(value) if key in STREAMED_LISTS and not isinstance(value, list) else value  # type: ignore[call-overload]
    return out


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(st.tuples(st.sampled_from(["turns", "messages", "x", "reports", "session"]),
                               st.lists(_value(2), max_size=4)), max_size=4),
    extra=_value(2), chunk=st.integers(1, 13), space=st.sampled_from(["", " ", "\n  ", "\t\r\n"]),
)
def test_what_is_read_is_what_the_wire_reads_whatever_the_chunks(
    entries: list[tuple[str, list[str]]], extra: str, chunk: int, space: str
) -> None:
    body = [f'"{key}"{space}:{space}[{space}{("," + space).join(items)}{space}]' for key, items in entries]
    text = "{" + space + ("," + space).join([*body, f'"extra":{space}{extra}']) + space + "}" + space
    assert _read(text, chunk) == loads(text)


@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_a_file_cut_short_or_damaged_is_named_by_line_column_and_character(chunk: int) -> None:
    text = json.dumps({"tether_snapshot": 1, "messages": [{"seq": i, "body": "x" * i} for i in range(5)]}, indent=1)
    cut = text.index('"seq": 3') + 3
    with pytest.raises(SnapshotError) as cut_short:
        _read(text[:cut], chunk)
    line = text[:cut].count("\n") + 1
    column = cut - text[:cut].rindex("\n")
    assert str(cut_short.value) == (
        f"line {line}, column {column} (character {cut}): the file ends inside messages[3]: it was cut short"
    )

    at = text.index('"body": "xx"')
    with pytest.raises(SnapshotError) as damaged:
        _read(text[:at] + "!" + text[at + 1:], chunk)
    line = text[:at].count("\n") + 1
    assert str(damaged.value).startswith(
        f"line {line}, column {at - text[:at].rindex(chr(10))} (character {at}): messages[2] is not JSON"
    )
    for bad, problem in [
        ("", "snap.json is empty: expected a snapshot written by `tether sessions dump`"),
        ("[1]", "line 1, column 1 (character 0): a snapshot is a JSON object: expected '{', found '['"),
        ('{"a": 1} x', "line 1, column 10 (character 9): extra text after the snapshot's closing '}'"),
        ('{"a": 1 "b": 2}', "line 1, column 9 (character 8): expected ',' or '}' in the snapshot, found '\"'"),
        (b"{\xff}", "the file is not UTF-8 text (invalid start byte)"),
    ]:
        with pytest.raises(SnapshotError) as caught:
            data = bad if isinstance(bad, bytes) else bad.encode()
            list(SnapshotReader(io.BytesIO(data), "snap.json", chunk).entries())
        assert problem in str(caught.value)


def test_every_cut_of_escapes_and_surrogate_pairs_reads_the_same() -> None:
    pieces = ["\\ud83d\\ude00", "\\\\ud83d\\ude00", "\\\\\\ud83d\\ude00", "\\ud800x", "\\ude00", "\\\\", "é😀", "\\u00e9"]
    text = '{"messages": [' + ", ".join(f'{{"t{i}": "{"ab" * i}{p}{p}"}}' for i, p in enumerate(pieces)) + "]}"
    for chunk in range(1, 60):  # every alignment of a read's end with every escape
        assert _read(text, chunk) == loads(text), chunk
