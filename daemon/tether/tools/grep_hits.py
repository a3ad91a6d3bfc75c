"""Collecting grep hits from either backend into one bounded, deterministic result.

Owns: `GrepRequest` (what both backends are asked to do), `Hit`, and `HitCollector`,
which counts every match but only keeps the first `limit` hits in (path, line) order,
however the backend orders its files.
Must not: search, read files or format text for the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.tools.textfile import clip_line

__all__ = ["GREP_LINE_CHARS", "GrepRequest", "Hit", "HitCollector"]

# Grep shows many lines at once, so each is cut shorter than read_file's lines.
GREP_LINE_CHARS = 500


@dataclass(frozen=True, slots=True)
class GrepRequest:
    pattern: str
    ignore_case: bool
    files: list[str]  # workspace-relative posix paths, already filtered by gitignore/glob
    limit: int  # hits to keep (max_results)


@dataclass(frozen=True, slots=True, order=True)
class Hit:
    rel: str
    line: int
    text: str


class HitCollector:
    """Receives one file's hits at a time (a file's hits are in line order)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0  # every match counted, kept or not
        self.files = 0
        self._kept: dict[str, list[tuple[int, str]]] = {}
        self._kept_count = 0
        # once enough hits are kept, files sorting after this path cannot make the cut
        self._ceiling: str | None = None

    def wants_more_of(self, rel: str, kept_so_far: int) -> bool:
        """Whether a backend should keep the text of a file's next hit (it still counts it)."""
        return kept_so_far < self.limit and (self._ceiling is None or rel <= self._ceiling)

    def add_file(self, rel: str, hits: list[tuple[int, str]], count: int) -> None:
        """Record `count` matches in `rel`; `hits` are the first of them (line, raw text)."""
        if count <= 0:
            return
        self.total += count
        self.files += 1
        if self._ceiling is not None and rel > self._ceiling:
            return
        kept = [(line, clip_line(text, GREP_LINE_CHARS)) for line, text in hits[: self.limit]]
        self._kept[rel] = kept
        self._kept_count += len(kept)
        if self._kept_count > 2 * self.limit:
            self._prune()

    def hits(self) -> list[Hit]:
        """The first `limit` hits by (path, line)."""
        out: list[Hit] = []
        for rel in sorted(self._kept):
            for line, text in self._kept[rel]:
                if len(out) == self.limit:
                    return out
                out.append(Hit(rel, line, text))
        return out

    def _prune(self) -> None:
        keep: dict[str, list[tuple[int, str]]] = {}
        count = 0
        for rel in sorted(self._kept):
            if count >= self.limit:
                break
            keep[rel] = self._kept[rel]
            count += len(keep[rel])
        self._kept, self._kept_count = keep, count
        self._ceiling = max(keep)
