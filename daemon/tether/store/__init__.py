"""Tether's per-workspace history: sessions, turns, messages and run reports in SQLite.

Owns: the store's public names (``HistoryStore``, its records and errors, ``database_path``,
search; snapshots imported when first named) and all of Tether's SQL (docs/decisions/0015-store.md).
Must not: know providers, the agent loop or the wire protocol: it stores plain records and float
timestamps; typed values become their one stored JSON at its edge (``records``, ``turn_json``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tether.store.errors import (
    InvalidCursor,
    StorageFault,
    StoreError,
    TurnElsewhere,
    TurnWaiting,
)
from tether.store.history import HistoryStore
from tether.store.pages import last_summary
from tether.store.paths import database_path, tether_home, workspace_key
from tether.store.records import (
    MESSAGE_ROLES,
    MESSAGE_STATUSES,
    TURN_STATUSES,
    MessageRecord,
    MessageView,
    SessionRecord,
    TurnMessageView,
    TurnRecord,
    new_turn_id,
)
from tether.store.rules import RuleRecord
from tether.store.schema import latest_version
from tether.store.search import Hit, search

if TYPE_CHECKING:
    from tether.store.snapshots import (
        SNAPSHOT_VERSION,
        SnapshotError,
        export_session,
        export_session_json,
        fork_session,
        import_session,
    )

# Snapshots are imported when first named (`session/new` does not). (Not `search`: the
# function is named like its module, which importing `tether.store.search` would bind here.)
_LAZY = dict.fromkeys(
    ("SNAPSHOT_VERSION", "SnapshotError", "export_session", "export_session_json", "fork_session", "import_session"),
    "snapshots",
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tether.store.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MESSAGE_ROLES",
    "MESSAGE_STATUSES",
    "SNAPSHOT_VERSION",
    "TURN_STATUSES",
    "HistoryStore",
    "Hit",
    "InvalidCursor",
    "MessageRecord",
    "MessageView",
    "RuleRecord",
    "SessionRecord",
    "SnapshotError",
    "StorageFault",
    "StoreError",
    "TurnElsewhere",
    "TurnMessageView",
    "TurnRecord",
    "TurnWaiting",
    "database_path",
    "export_session",
    "export_session_json",
    "fork_session",
    "import_session",
    "last_summary",
    "latest_version",
    "new_turn_id",
    "search",
    "tether_home",
    "workspace_key",
]
