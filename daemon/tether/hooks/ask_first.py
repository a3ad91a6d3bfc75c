"""Ask-first on intent: a destructive request with no clear target gets a question, not action.

Owns: that check (a destructive verb and a vague object with no concrete target: a few regular expressions,
no model call; why so narrow: docs/decisions/0007-hooks.md) and the question.
Must not: call the model, or look at anything but the prompt's text.
"""

from __future__ import annotations

import re

__all__ = ["clarifying_question"]

_DESTRUCTIVE = re.compile(
    r"\b(delete|remove|rm|drop|purge|wipe|erase|nuke|destroy|truncate|clean\s*up|clear\s+out|"
    r"get\s+rid\s+of|throw\s+away|reset\s+--hard|prune|uninstall)\b",
    re.IGNORECASE,
)
_VAGUE = re.compile(
    r"\b(old\s+(stuff|things|files|code|junk)|stuff|junk|the\s+mess|everything|all\s+of\s+(it|them|this|that)|"
    r"whatever|anything|things|the\s+rest|all\s+the\s+(files|things|old|unused)|remove\s+all|delete\s+all|"
    r"unused\s+(stuff|things|files)|what\s+we\s+don'?t\s+need|it\s+all)\b",
    re.IGNORECASE,
)
# a concrete target: a path or file name, code in backquotes, a quoted name, a glob
_CONCRETE = re.compile(r"(`[^`]+`|\"[^\"]+\"|'[^'\s]+'|[\w.-]*/[\w./-]+|\b[\w-]+\.[A-Za-z0-9]{1,8}\b|\*\.\w+)")


def clarifying_question(prompt: str) -> str | None:
    """The question to ask before acting on `prompt`, or None when it is clear enough."""
    text = prompt.strip()
    verb = _DESTRUCTIVE.search(text)
    vague = _VAGUE.search(text)
    if verb is None or vague is None or _CONCRETE.search(text):
        return None
    return (
        f"Before I {verb.group(0).lower()} anything: which files or directories do you mean by "
        f'"{vague.group(0)}"? Please name them (paths, a glob, or a directory), and say whether '
        f"anything in them must be kept. Nothing has been changed yet. (Tether asks first on a "
        f"destructive request with no clear target: the `ask_first` setting.)"
    )
