"""The SSE decoder on bytes: any split of a stream into reads gives the events of the whole.

Streams are generated (event names, multi-line data, comments, `id`/`retry` fields, a
byte-order mark, LF, CRLF or CR line ends) and cut at random points; the events must be
those the stream was built from, read whole or in pieces, and an event the end of the
stream cut off is never dispatched. The adapters are checked the same way through an
transport that delivers each piece as one read (test_sse_adapters.py).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.providers.sse import SSEDecoder, SSEEvent

# field values: any text without line ends (a value may hold colons, spaces, `data:`)
VALUE = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12)
NAME = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), min_size=1, max_size=8)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def events(draw: st.DrawFn) -> tuple[list[str], SSEEvent]:
    """One event's lines (without line ends) and the event a decoder must give for them."""
    name = draw(st.none() | NAME)
    data = draw(st.lists(VALUE, min_size=1, max_size=3))
    lines = [f"data: {value}" if draw(st.booleans()) or value.startswith(" ") else f"data:{value}" for value in data]
    if name is not None:
        lines.insert(draw(st.integers(0, len(lines))), f"event: {name}")
    for extra in draw(
        st.lists(st.sampled_from([": keep-alive", ":", "id: 7", "retry: 1000", "x-other: 1"]), max_size=2)
    ):
        lines.insert(draw(st.integers(0, len(lines))), extra)
    return lines, (name or "", "\n".join(data).encode())


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent], int]:
    """(the stream, its events, where its last event's lines start)."""
    end = draw(ENDINGS)
    text = "\ufeff" if draw(st.booleans()) else ""
    expected: list[SSEEvent] = []
    last = 0
    for lines, event in draw(st.lists(events(), max_size=6)):
        if draw(st.booleans()):
            text += ": a comment block" + end + end  # dispatches nothing
        last = len(text.encode())
        text += "".join(line + end for line in lines) + end
        expected.append(event)
    return text.encode(), expected, last


def feed(pieces: list[bytes]) -> tuple[list[SSEEvent], SSEDecoder]:
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    return out, decoder


def split(raw: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(raw)) for c in cuts})
    return [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]


@settings(max_examples=400, deadline=None)
@given(streams(), st.lists(st.integers(0, 400), max_size=12))
def test_any_split_gives_the_events_of_the_whole(stream: tuple[bytes, list[SSEEvent], int], cuts: list[int]) -> None:
    raw, expected, _last = stream
    assert feed([raw])[0] == expected
    events, decoder = feed(split(raw, cuts))
    assert events == expected
    assert not decoder.pending


@settings(max_examples=200, deadline=None)
@given(streams(), st.data())
def test_an_event_the_end_of_the_stream_cut_off_is_not_dispatched(
    stream: tuple[bytes, list[SSEEvent], int], data: st.DataObject
) -> None:
    raw, expected, last = stream
    if not expected:
        return
    # cut inside the last event: after its first byte, before the blank line that ends it
    blank = 2 if raw.endswith(b"\r\n") else 1
    cut = data.draw(st.integers(last + 1, len(raw) - blank))
    events, decoder = feed(split(raw[:cut], data.draw(st.lists(st.integers(0, cut), max_size=6))))
    assert events == expected[:-1]
    assert decoder.pending


def test_a_crlf_split_between_two_reads_is_one_line_end() -> None:
    events, _ = feed([b"data: a\r", b"\ndata: b\r\n\r", b"\n", b"data: c\r\r"])
    assert events == [("", b"a\nb"), ("", b"c")]


def test_mixed_line_ends_comments_and_fields_without_a_space() -> None:
    raw = b": hello\n\nevent:ping\r\ndata\r\n\r\nevent: x\rdata:  two spaces\ndata:{}\r\rid: 1\n\n"
    assert feed([raw])[0] == [("ping", b""), ("x", b" two spaces\n{}")]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert feed([b"event: ping\n\nretry: 5\n\n: only a comment\n\n"])[0] == []


@st.composite
def uniform_streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """Streams as the APIs send them: every frame `data: x`, or every frame `event: n` + `data: x`."""
    named = draw(st.booleans())
    expected = [(draw(NAME) if named else "", draw(VALUE).encode()) for _ in range(draw(st.integers(0, 8)))]
    raw = b"".join(
        (b"event: " + name.encode() + b"\n" if named else b"") + b"data: " + data + b"\n\n" for name, data in expected
    )
    return raw, expected


@settings(max_examples=300, deadline=None)
@given(uniform_streams(), st.lists(st.integers(0, 300), max_size=12))
def test_uniform_streams_split_anywhere(stream: tuple[bytes, list[SSEEvent]], cuts: list[int]) -> None:
    raw, expected = stream
    assert feed([raw])[0] == expected
    assert feed(split(raw, cuts))[0] == expected
