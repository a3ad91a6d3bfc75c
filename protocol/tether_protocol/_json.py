"""JSON in and out, for the wire and the store: compact, UTF-8 kept as it is.

orjson does the work (a 10,000-message session's replay, dump and restore spent most of
their time in the standard library's encoder and decoder: orjson encodes ~10x and decodes
~1.5-2.5x faster, bench/RESULTS.md). Where orjson refuses valid input or would change a
value, the standard library takes over, so callers see exactly the values and errors
they saw before:

* decoding: a lone surrogate escape (``"\\ud800"``, which JavaScript's JSON.stringify
  writes for a broken pair) and ``NaN``/``Infinity`` are refused by orjson; integers
  outside 64 bits are turned into floats by it (a request id would change), so text
  with a run of 19 digits or more (-2**63 - 1 has 19) is read by the standard library;
* encoding: dict keys that are not strings, integers outside 64 bits, lone surrogates.

One value differs from the standard library's, on purpose: a lone surrogate is not a
character (no UTF-8 encoder, SQLite or file takes it), so it becomes U+FFFD, the
replacement character, both where it comes in (decoding) and where one made inside
would go out (encoding). A pair written as two escapes is the one character it spells.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["dumps", "dumps_text", "loads"]

_std_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
# A run of 19 digits is found as "0" * 19 once every digit is a "0": a tenth of the time
# of the regular expression \d{19}, which tries every position.
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19
# What a lone surrogate looks like in JSON text: an escape of one, or (text handed in as
# str) one encoded with "surrogatepass"
_SURROGATE_IN_TEXT = re.compile(rb"\\[uU][dD][89a-fA-F]|\xed[\xa0-\xbf]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(data: bytes | bytearray | str) -> Any:
    """``json.loads(data)``: the same value (but for lone surrogates, U+FFFD here), or the
    same error."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_RUN not in raw.translate(_DIGITS_TO_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # invalid, or valid JSON orjson refuses: the standard library decides
    value = json.loads(data)
    return _whole(value) if _SURROGATE_IN_TEXT.search(raw) else value


def _whole(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) as U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_whole(k): _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` as UTF-8 (a lone
    surrogate becomes U+FFFD). Floats may be spelled differently (``0.00001`` for
    ``1e-05``), never with another value; NaN and infinities are ``null``, not the
    standard library's invalid ``NaN``."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError included
        return _std(value).encode()


def dumps_text(value: Any) -> str:
    """``dumps`` as text."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return _std(value)


def _std(value: Any) -> str:
    try:
        text = _std_encode(value)
    except ValueError:  # NaN or an infinity (or a cycle, which fails again below)
        text = _std_encode(_finite(value, set()))
    return _SURROGATE.sub("\ufffd", text)


def _finite(value: Any, seen: set[int]) -> Any:
    """``value`` with NaN and infinities as None, as orjson writes them."""
    if isinstance(value, float):
        return value if value - value == 0.0 else None
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            return value  # a cycle: left for the encoder to refuse
        seen.add(id(value))  # the path from the top: a value shared by two parents is no cycle
        try:
            if isinstance(value, dict):
                return {k: _finite(v, seen) for k, v in value.items()}
            return [_finite(v, seen) for v in value]
        finally:
            seen.discard(id(value))
    return value
