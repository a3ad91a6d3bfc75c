"""How a tool call looks before it runs: its title and the places it points at.

Owns: a call's title and locations from its arguments, computed without ever raising (a
tool's own `title_for`/`locations_for` may fail on odd arguments), and the locations an
approval prompt shows. Must not: run or approve anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tools.base import ChangePreview, Tool, ToolLocation
from ..tools.diffs import first_changed_line

if TYPE_CHECKING:
    from .session import AgentSession

__all__ = ["asked_locations", "known_locations", "safe_title"]


def safe_title(tool: Tool[Any], args: object) -> str:
    """A call's title from its arguments as sent or validated (never raises)."""
    try:
        return str(tool.title_for(args))
    except Exception:
        return str(tool.name)


def known_locations(tool: Tool[Any], args: object, session: AgentSession) -> tuple[ToolLocation, ...]:
    """The places a call points at before it runs (never raises)."""
    try:
        return tuple(tool.locations_for(args, session.sandbox))
    except Exception:
        return ()


def asked_locations(known: tuple[ToolLocation, ...], previews: list[ChangePreview]) -> list[ToolLocation]:
    """The call's locations as its approval shows them: the same places, each file with
    the first line its change touches where a preview knows it."""
    first = {p.path: first_changed_line(p.old_text, p.new_text) for p in reversed(previews)}
    return [ToolLocation(loc.path, loc.line if loc.line is not None else first.get(loc.path)) for loc in known]
