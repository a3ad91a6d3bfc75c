"""User slash commands: `commands/NAME.md` in the user config's folder and in `<workspace>/.tether/`.

Owns: finding and reading those files (front matter `description:`, body with `$ARGUMENTS`; the
user's wins) and expanding one; a workspace command is only a prompt (docs/decisions/0018).
Must not: run anything, follow a link out of the workspace or into Tether's own files, or
shadow a built-in (`commands.py` lists built-ins first).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tools.regular_files import open_regular

if TYPE_CHECKING:
    from pathlib import Path

_NAME = re.compile(r"[A-Za-z][\w.-]*\Z")
_MAX_BYTES = 64 * 1024  # a command is a prompt; a bigger file is a mistake


@dataclass(frozen=True, slots=True)
class UserCommand:
    name: str
    description: str
    hint: str | None
    body: str

    def expand(self, args: str) -> str:
        if "$ARGUMENTS" in self.body:
            return self.body.replace("$ARGUMENTS", args)
        return f"{self.body}\n\n{args}" if args else self.body


def folders(workspace: Path) -> list[tuple[Path, str, Path | None]]:
    """The command folders, the user's first, each with how its commands are labelled and
    where its files must be (the user's own folder may link anywhere; the project's, only
    into the project)."""
    from ..config import user_config_path

    return [
        (user_config_path()[0].parent / "commands", "user", None),
        (workspace / ".tether" / "commands", "workspace: .tether/commands", workspace),
    ]


def _tethers_own(real: Path) -> bool:
    """Inside Tether's user config folder or its history (`registry.private_paths`)."""
    from .registry import private_paths

    return any(real.is_relative_to(os.path.realpath(own)) for own in private_paths(None))


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """`key: value` lines between `---` lines at the top, and the rest."""
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return {}, text
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields, body.partition("\n")[2]


def _read(path: Path, label: str, within: Path | None) -> UserCommand | None:
    """The command in ``path``; None for a file that is no command (a bad name, too big,
    empty, or outside ``within``: a project's command cannot be a link to `~/.ssh/id_rsa`,
    whose text would go to the model as the prompt, nor to Tether's config in a home folder)."""
    name = path.stem
    if not _NAME.match(name):
        return None
    try:
        real = path.resolve()
        if within is not None and (not real.is_relative_to(within.resolve()) or _tethers_own(real)):
            return None
        with open_regular(str(real)) as handle:  # never a FIFO swapped in since the folder was listed
            data = handle.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return None
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads
    except OSError:
        return None
    fields, body = _front_matter(text.lstrip("\ufeff"))
    body = body.strip()
    if not body:
        return None
    description = fields.get("description") or body.splitlines()[0][:80]
    hint = fields.get("argument-hint") or ("arguments" if "$ARGUMENTS" in body else None)
    return UserCommand(name, f"{description} ({label})", hint, body)


def entries(workspace: Path) -> list[tuple[str, str, str | None]]:
    """Each user command's name, description and argument hint (the list a client shows)."""
    return [(c.name, c.description, c.hint) for c in load(workspace).values()]


def load(workspace: Path) -> dict[str, UserCommand]:
    """The user commands by name (read now: a changed folder is seen at the next call)."""
    found: dict[str, UserCommand] = {}
    for folder, label, within in folders(workspace):
        try:
            paths = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for path in paths:
            command = _read(path, label, within)
            if command is not None and command.name not in found:
                found[command.name] = command
    return found
