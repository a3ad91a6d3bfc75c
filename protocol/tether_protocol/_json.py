"""JSON in and out, for the wire and the store: compact, UTF-8 kept as it is.

Owns: `loads`/`dumps`/`dumps_text` (orjson; the standard library where orjson refuses valid input
or would change a value: docs/decisions/0017), lone surrogates turned to U+FFFD both ways.
Must not: change any other value the standard library keeps, or import past the standard library,
orjson and `_gc` (the start path and the Python client import it).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeAlias

import orjson

from ._gc import collector_paused

if TYPE_CHECKING:
    from collections.abc import Callable

# A JSON object as parsed or about to be written: the type of the edges (wire payloads,
# API bodies, stored bodies, snapshot files), never of what lies between them
JsonObject: TypeAlias = dict[str, Any]

__all__ = ["dumps", "dumps_text", "loads", "type_name", "whole_text"]

_std_encode = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=lambda v: structs_as_builtins(v)
).encode
# A run of 19 digits is found as "0" * 19 once every digit is a "0": a tenth of the time
# of the regular expression \d{19}, which tries every position.
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19
# Where a lone surrogate can be in JSON text: an escape of a surrogate (a pair's half or
# a lone one), or a surrogate code point itself (text handed in as str, or bytes that
# json.loads decodes with "surrogatepass": CESU-8 from a UTF-8 sender, UTF-16 or UTF-32).
# Only looked for where orjson refused the text (or its long integers sent it here).
# (two searches: one pattern with both branches scans ~15x slower, at every position)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# An escaped backslash (kept as is, so the "u" after it is no escape), a pair of escapes
# (kept: the one character it spells), a lone escape, or a surrogate code point.
_ESCAPE_OR_SURROGATE = re.compile(
    r"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|u[dD][c-fC-F][0-9a-fA-F]{2})|[\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
# From this size on, the garbage collector is paused while the value is built (``_gc``)
_LARGE = 1 << 18


def loads(data: bytes | bytearray | str) -> Any:
    """``json.loads(data)``: the same value (but for lone surrogates, U+FFFD here), or the
    same error."""
    if len(data) < _LARGE:
        return _loads(data)
    with collector_paused():
        return _loads(data)


def _loads(data: bytes | bytearray | str) -> Any:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_RUN not in raw.translate(_DIGITS_TO_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # invalid, or valid JSON orjson refuses: the standard library decides
    # Decoded as json.loads decodes bytes (the same text, or the same UnicodeDecodeError)
    text = data if isinstance(data, str) else data.decode(json.detect_encoding(data), "surrogatepass")
    return json.loads(whole_surrogates(text))


def whole_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (an escape or a code point) as U+FFFD, as
    ``loads`` reads it. In the text, not the value: the decoder itself then makes every
    string (keys too) whole, at any depth, and an error stays at the same place (an escape
    is replaced by one as long, a character by one character). Text cut in two is given
    whole escapes: cut before a run of backslashes."""
    if _SURROGATE_ESCAPE.search(text) or (not text.isascii() and _SURROGATE.search(text)):
        return _ESCAPE_OR_SURROGATE.sub(_replace, text)
    return text


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 1:
        return "\ufffd"  # a surrogate code point
    if len(found) == 6 and found[1] == "u":
        return "\\ufffd"  # a lone surrogate escape
    return found  # an escaped backslash, or a pair


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The encoders' ``default`` (a C function once msgspec is loaded: it runs once per Struct)
structs_as_builtins: Callable[[Any], Any] = _not_json


def dumps(value: Any) -> bytes:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` as UTF-8, but a lone
    surrogate (which UTF-8 cannot hold: the standard library's text would not encode) is
    written as U+FFFD, and read back so. Floats may be spelled differently (``0.00001`` for
    ``1e-05``), never with another value; NaN and infinities are ``null``, not the
    standard library's invalid ``NaN``."""
    try:
        return orjson.dumps(value, default=structs_as_builtins)
    except TypeError:  # orjson.JSONEncodeError included
        return _std(value).encode()


def dumps_text(value: Any) -> str:
    """``dumps`` as text: valid UTF-8 when encoded (a lone surrogate is U+FFFD), so SQLite
    and files take it."""
    try:
        return orjson.dumps(value, default=structs_as_builtins).decode()
    except TypeError:
        return _std(value)


def _std(value: Any) -> str:
    try:
        text = _std_encode(value)
    except ValueError:  # NaN or an infinity (or a cycle, which fails again below)
        text = _std_encode(_finite(value, set()))
    return whole_text(text)


def whole_text(text: str) -> str:
    """``text`` with every lone surrogate as U+FFFD, as ``dumps`` writes one (UTF-8 and
    SQLite cannot take it); ASCII text is let through without a look."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


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


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}


def type_name(value: Any) -> str:
    """A decoded JSON value's kind as an error message says it ("an object", "null", "int")."""
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value), type(value).__name__)
