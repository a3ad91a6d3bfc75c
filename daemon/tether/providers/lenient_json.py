"""The second reading of a model's event data, for what orjson refused.

Owns: `lenient_json`, the fallback both streaming adapters (anthropic.py, openai_chunks.py)
take when orjson could not read an event: the standard library reads what orjson refuses
(NaN and Infinity, integers past 64 bits, bytes that are not valid UTF-8, replaced), and
data neither can read comes back as the caller's own "not JSON" value.
Must not: judge what the JSON says (the adapters do), or run before orjson has failed (the
hot path is one orjson call per event).
"""

from __future__ import annotations

import json
from typing import Any


def lenient_json(data: bytes, not_json: object) -> Any:
    """``data`` as the standard library reads it (bad UTF-8 replaced); ``not_json`` when it cannot."""
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return not_json
