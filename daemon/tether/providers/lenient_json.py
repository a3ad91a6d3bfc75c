"""The second reading of a model's event data, for what orjson refused.

Owns: `lenient_json`, the fallback both streaming adapters take: the standard library reads NaN, Infinity,
big integers and invalid UTF-8 (replaced); data neither can read is the caller's "not JSON" value.
Must not: judge what the JSON says (the adapters do), or run before orjson has failed.
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
