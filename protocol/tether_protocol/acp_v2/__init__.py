"""ACP v2 (Preview) on the wire: the generated message types and their codec.

Owns: the generated area modules (`initialize`, ..., `messages`; `schema_types` names them all;
protocol/tools/gen_acp.py writes them) and `decode`/`convert`/`encode` with the open unions' hooks
(`convert`'s errors in v1's `-32602` wording). Must not: be imported on v1's paths.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from .._codec import reworded
from .._errors import InvalidParams
from ._open import OpenUnion, dec_hook, enc_hook

T = TypeVar("T")

__all__ = ["OpenUnion", "convert", "decode", "encode"]


def decode(data: bytes | str, cls: type[T]) -> T:
    """``cls`` from JSON text (msgspec's own error on a mismatch)."""
    return msgspec.json.decode(data, type=cls, dec_hook=dec_hook)


def convert(data: Any, cls: type[T], *, method: str) -> T:
    """``cls`` from parsed JSON, or `InvalidParams` in the v1 wording (`params.PATH: WHY`)."""
    try:
        return msgspec.convert(data, type=cls, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        raise InvalidParams(reworded(exc, cls, data, method, dec_hook=dec_hook)) from None


def encode(obj: Any) -> bytes:
    return msgspec.json.encode(obj, enc_hook=enc_hook)
