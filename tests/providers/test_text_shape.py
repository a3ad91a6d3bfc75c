"""A text delta read from its bytes is exactly what parsing it would give, or is parsed.

`TextShape` learns a delta's bytes around its text from one chunk and then reads later
chunks of that shape without a JSON parser. For any text, encoded the way servers encode
it (orjson, the standard library with and without ASCII escapes), and for chunks that
differ elsewhere, what it returns must equal what `json.loads` reads, or be None.
"""

from __future__ import annotations

import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.providers.text_shape import TextShape

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def openai_chunk(text: str, *, created: int = 1750000000, dumps: str = "orjson") -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": created,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
    }
    if dumps == "orjson":
        return orjson.dumps(chunk)
    return json.dumps(chunk, ensure_ascii=dumps == "ascii").encode()


def content_of(raw: bytes) -> str:
    return str(json.loads(raw)["choices"][0]["delta"]["content"])


@settings(max_examples=400, deadline=None)
@given(
    TEXT,
    TEXT,
    st.sampled_from(["orjson", "ascii", "utf8"]),
    st.sampled_from(["orjson", "ascii", "utf8"]),
    st.booleans(),
)
def test_what_the_shape_reads_is_what_parsing_reads(
    first: str, later: str, first_dumps: str, later_dumps: str, other_time: bool
) -> None:
    shape = TextShape(b'"content":')
    learnt_from = openai_chunk(first, dumps=first_dumps)
    shape.learn(learnt_from, content_of(learnt_from))
    raw = openai_chunk(later, dumps=later_dumps, created=1750000001 if other_time else 1750000000)
    got = shape.match(raw)
    assert got is None or got == content_of(raw)
    plain = not any(c in later for c in '"\\') and all(ord(c) >= 0x20 for c in later)
    if first_dumps == later_dumps == "orjson" and not other_time and plain and first == content_of(learnt_from):
        assert got == later  # the shape was learnt and applies: no parse needed


def test_a_plain_delta_of_the_learnt_shape_is_read_without_parsing() -> None:
    shape = TextShape(b'"content":')
    shape.learn(openai_chunk("Hello"), "Hello")
    assert shape.match(openai_chunk(" wörld ✓")) == " wörld ✓"
    assert shape.match(openai_chunk('say "hi"')) is None  # an escape: parsed instead
    assert shape.match(openai_chunk("x", created=2)) is None  # another shape


def test_a_key_that_appears_twice_teaches_nothing() -> None:
    shape = TextShape(b'"content":')
    raw = b'{"choices":[{"delta":{"content":"a"}}],"x":{"content":"a"}}'
    shape.learn(raw, "a")
    assert not shape.learnt
    assert shape.match(raw) is None


def test_a_stream_that_never_repeats_its_shape_stops_being_tried() -> None:
    shape = TextShape(b'"content":')
    for n in range(40):  # every chunk differs outside the text, like OpenAI's obfuscation field
        raw = openai_chunk("abc", created=n)
        assert shape.match(raw) is None
        shape.learn(raw, "abc")
    assert not shape.learnt


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TEXT, st.sampled_from(["orjson", "ascii", "utf8"]), st.booleans()), max_size=6))
def test_a_whole_read_is_read_as_its_chunks_are(chunks: list[tuple[str, str, bool]]) -> None:
    shape = TextShape(b'"content":')
    shape.learn(openai_chunk("Hello"), "Hello")
    raws = tuple(openai_chunk(text, dumps=dumps, created=2 if other else 1750000000) for text, dumps, other in chunks)
    one_by_one = [shape.match(raw) for raw in raws]
    merged = shape.match_all(raws)
    if raws and all(text is not None for text in one_by_one):
        assert merged == "".join(str(text) for text in one_by_one)
    else:
        assert merged is None
    assert merged is None or merged == "".join(content_of(raw) for raw in raws)


def test_chunks_too_short_for_the_shape_are_not_read() -> None:
    shape = TextShape(b'"a":')
    shape.learn(b'{"a":"x"}', "x")
    assert shape.match_all((b'{"a":"}',)) is None  # prefix and suffix overlap: not a string
