"""The parts of a command a rule looks at, and the finder the program handlers report to.

Owns: `CommandPart` (one simple command that may run, as words) and `PartFinder`, the
interface through which `runners.py` records parts and reasons while `commands.py`
walks a command. Must not: parse, match or decide anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .shell_grammar import Word

__all__ = ["UNKNOWN_ARGS", "CommandPart", "PartFinder", "brief"]

# what `xargs` appends, or what `find` puts for `{}`: known only when it runs
UNKNOWN_ARGS = Word("<input>", None, False)


@dataclass(frozen=True, slots=True)
class CommandPart:
    words: tuple[Word, ...]
    # only runs the part after it (`nice`, `timeout 5`, `sh -c`): rules cover the inner part
    wrapper: bool = False
    # a guess at what a wrapper whose options are not modelled runs (`taskset -c 0 …`): a
    # deny rule hitting it is only a possible hit, and no allow rule needs to cover it
    maybe: bool = False

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(w.value if w.value is not None else w.source for w in self.words)

    @property
    def program(self) -> str | None:
        head = self.words[0] if self.words else None
        if head is None or head.value is None or not head.literal or head.glob:
            return None
        return head.value.rsplit("/", 1)[-1]

    def show(self) -> str:
        return brief(" ".join(w.source for w in self.words), 60)


class PartFinder(Protocol):
    """What a program handler (`runners.py`) may do while a command is walked."""

    parts: list[CommandPart]

    def expand(self, words: list[Word], depth: int) -> None:
        """Record the part `words` and whatever it runs."""

    def run_inner(self, words: list[Word], inner_at: int | None, depth: int, *, pure: bool = True) -> None:
        """Record `words` as a part that runs `words[inner_at:]` (and that inner part)."""

    def read_literal(self, word: Word | None, what: str, depth: int) -> None:
        """Parse a literal script (`sh -c '...'`); a non-literal one cannot be seen."""

    def guess(self, words: list[Word], depth: int) -> None:
        """Record `words` (and what they run) as a part that may run: a guess."""

    def guess_script(self, word: Word, depth: int) -> None:
        """Parse `word` as a script whose parts may run: a guess."""

    def not_simple(self, why: str) -> None:
        """The command is not plain, because `why`."""

    def writes_to(self, word: Word, program: str) -> None:
        """`program` writes the file `word` names (a non-literal one makes it not plain)."""

    def cannot_see(self, why: str) -> None:
        """The deny rules cannot see all of it (nor is it plain), because `why`."""


def brief(text: str, limit: int = 40) -> str:
    """Shell text short enough for a reason (`$G`, not a 6,000-character word)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
