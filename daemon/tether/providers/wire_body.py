"""Reading one HTTP/1.1 response body off a connection: the bytes of each socket read.

Owns: h11's body events as one bytes object per socket read, handing the connection back only when the body
was read to its end (closing it otherwise), and decoding a `gzip`/`deflate` body a proxy sent unasked.
Must not: time reads (the caller's idle watch does), or keep a half-read connection.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

import h11

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable

_READ_SIZE = 65536


async def body_reads(
    conn: Any, release: Callable[[Any], None], error: Callable[[Exception], Exception]
) -> AsyncGenerator[bytes, None]:
    """The body of the response whose head `conn` just read, per socket read."""
    connection, read = conn.h11, conn.reader.read
    next_event, receive = connection.next_event, connection.receive_data
    need_data, data_type = h11.NEED_DATA, h11.Data
    finished = False
    try:
        parts: list[bytes] = []
        while True:
            event = next_event()
            if type(event) is data_type:
                parts.append(event.data)
                continue
            if event is need_data:
                if parts:
                    yield b"".join(parts)  # bytes even when h11 gave a bytearray; one part: no copy
                    parts = []
                receive(await read(_READ_SIZE))
                continue
            # EndOfMessage (or ConnectionClosed after a body read to the server's close)
            finished = True
            if parts:
                yield b"".join(parts)
            return
    except (h11.RemoteProtocolError, OSError) as exc:
        raise error(exc) from None
    finally:
        if finished:
            release(conn)
        else:
            conn.close()


def decoded(
    chunks: AsyncGenerator[bytes, None], encoding: str, error: Callable[[Exception], Exception]
) -> AsyncGenerator[bytes, None]:
    """`chunks` as sent when the body is identity-coded, else gzip/deflate decoded with zlib
    (`refused_coding` says first whether the coding is one of these)."""
    if encoding.strip().lower() in ("", "identity"):
        return chunks
    return _inflated(chunks, encoding.strip().lower(), error)


def refused_coding(encoding: str) -> str | None:
    """Why a body of this content-encoding cannot be read, or None when it can."""
    if encoding.strip().lower() in ("", "identity", "gzip", "x-gzip", "deflate"):
        return None
    return (
        f"the server sent a body with content-encoding {encoding!r}, which Tether neither asked "
        f"for nor decodes (gzip and deflate only); is a proxy recompressing the model's reply?"
    )


async def _inflated(
    chunks: AsyncGenerator[bytes, None], encoding: str, error: Callable[[Exception], Exception]
) -> AsyncGenerator[bytes, None]:
    # wbits 47: gzip or zlib, whichever header the body has; raw deflate when "deflate" has none
    inflater = zlib.decompressobj(47)
    first = True
    try:
        async for chunk in chunks:
            try:
                out = inflater.decompress(chunk)
            except zlib.error as exc:
                if not first or encoding != "deflate":
                    raise error(OSError(f"undecodable {encoding} body: {exc}")) from None
                inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                out = inflater.decompress(chunk)
            first = False
            if out:
                yield out
        tail = inflater.flush()
        if tail:
            yield tail
    finally:
        await chunks.aclose()
