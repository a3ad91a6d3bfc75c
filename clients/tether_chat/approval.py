"""One approval asked inline: an edit's coloured diff with per-hunk choice, or a command.

Owns: reading `session/request_permission` for the terminal, each diff's hunks (SPEC §5.10),
which the user kept, the result (`acceptedHunks` when some were dropped), and what "allow
always" would store. Must not: read keys or draw (the app does), or pick an option the
daemon did not offer.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .wire import JsonObject, content_text

if TYPE_CHECKING:
    from .render import Painter

KEYS = {"y": "allow_once", "a": "allow_always", "n": "reject_once", "N": "reject_always", "w": "allow_once_network"}


class Approval:
    def __init__(self, params: JsonObject) -> None:
        self.params = params
        call = params.get("toolCall") or {}
        self.call: JsonObject = call if isinstance(call, dict) else {}
        self.title = str(self.call.get("title") or "a tool")
        meta = (params.get("_meta") or {}).get("tether") or {}
        self.reason = str(meta.get("reason") or "")
        self.hunks: list[JsonObject] = list(meta.get("hunks") or [])
        self.kept = [True] * len(self.hunks)
        self.offered = [str(o.get("optionId")) for o in params.get("options") or []]
        # what "allow always" stores and allows, as the daemon names the option
        self.always = next(
            (
                str(o.get("name"))
                for o in params.get("options") or []
                if o.get("optionId") == "allow_always" and o.get("name") != "Allow always"
            ),
            "",
        )
        self.future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()

    def diffs(self) -> list[JsonObject]:
        return [b for b in self.call.get("content") or [] if isinstance(b, dict) and b.get("type") == "diff"]

    def command_lines(self) -> list[str]:
        raw = self.call.get("rawInput") or {}
        text = content_text(self.call.get("content"))
        if not isinstance(raw, dict) or "command" not in raw:
            return [] if text is None or self.diffs() else text.splitlines()
        return [f"$ {raw['command']}", f"in {raw.get('cwd') or '.'} (the workspace)"]

    def shown(self, paint: Painter, workspace: Path) -> str:
        """For the scrollback: the question, then each diff with numbered hunks, or the command."""
        lines = [paint.style(f"? {self.title}", "1;33")]
        if self.reason:
            lines.append(paint.style(f"  {self.reason}", "2"))
        lines += ["  " + line for line in self.command_lines()]
        if self.always:
            lines.append(paint.style(f"  a: {self.always}", "2"))
        for block in self.diffs():
            lines += self._diff_lines(block, paint, workspace)
        return "\n".join(lines)

    def _diff_lines(self, block: JsonObject, paint: Painter, workspace: Path) -> list[str]:
        path = str(block.get("path", ""))
        shown = os.path.relpath(path, workspace) if Path(path).is_relative_to(workspace) else path
        old = str(block.get("oldText") or "").splitlines(keepends=True)
        new = str(block.get("newText") or "").splitlines(keepends=True)
        out: list[str] = []
        index = -1
        for line in difflib.unified_diff(old, new, f"a/{shown}", f"b/{shown}"):
            line = line.rstrip("\n")
            if line.startswith("@@"):
                index += 1
                number = self._number(path, index)
                line = f"{line}  {paint.style(f'[hunk {number}]', '1')}" if number else line
            out.append("  " + paint.diff_line(line))
        return out

    def _number(self, path: str, index: int) -> int | None:
        for n, hunk in enumerate(self.hunks, 1):
            if hunk.get("path") == path and hunk.get("index") == index:
                return n
        return None

    def panel(self) -> str:
        """The live question: the hunks kept so far and the keys."""
        lines = [f"? {self.title}"[:78]]
        if len(self.hunks) > 1:
            marks = "  ".join(f"[{'x' if kept else ' '}] {n}" for n, kept in enumerate(self.kept, 1))
            lines.append(f"  hunks: {marks}   (1-9 toggles a hunk)")
        keys = ["y once", "a always", "n reject", "N never"]
        if "allow_once_network" in self.offered:
            keys.insert(1, "w once+network")
        lines.append("  " + " · ".join(k for k in keys if self._offered(KEYS[k[0]])))
        return "\n".join(lines)

    def _offered(self, option: str) -> bool:
        return not self.offered or option in self.offered

    def toggle(self, number: int) -> None:
        if 1 <= number <= len(self.kept):
            self.kept[number - 1] = not self.kept[number - 1]

    def answer(self, key: str) -> bool:
        """Answer with the option of ``key``; False when that option is not offered."""
        option = KEYS.get(key)
        if option is None or not self._offered(option) or self.future.done():
            return False
        result: JsonObject = {"outcome": {"outcome": "selected", "optionId": option}}
        if option.startswith("allow") and not all(self.kept):
            accepted: dict[str, list[int]] = {}
            for hunk, kept in zip(self.hunks, self.kept, strict=True):
                accepted.setdefault(str(hunk.get("path")), [])
                if kept:
                    accepted[str(hunk.get("path"))].append(int(hunk.get("index", 0)))
            result["_meta"] = {"tether": {"acceptedHunks": accepted}}
        self.future.set_result(result)
        return True

    def cancel(self) -> None:
        if not self.future.done():
            self.future.set_result({"outcome": {"outcome": "cancelled"}})

    def summary(self) -> str:
        result = self.future.result() if self.future.done() else {}
        option = (result.get("outcome") or {}).get("optionId", "cancelled")
        kept = f" (hunks {', '.join(str(n) for n, k in enumerate(self.kept, 1) if k)} of {len(self.kept)})"
        return f"  → {option}{kept if len(self.hunks) > 1 and not all(self.kept) else ''}"
