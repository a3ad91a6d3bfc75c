"""Editor buffers: LSP document sync (`textDocument/didOpen|didChange|didClose`).

Owns: the text and version of every document the editor has open, updated by full or
incremental changes (positions in UTF-16 code units, LSP's default encoding). Tools read
these instead of the disk, so the agent sees unsaved work; `workspace/applyEdit` edits
name the version they were computed against. Must not: write anything anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tether_protocol import InvalidParams

from .handshake import uri_to_path

if TYPE_CHECKING:  # the method table imports `_lsp` on the first document notification
    from tether_protocol import (
        DidChangeTextDocumentParams,
        DidCloseTextDocumentParams,
        DidOpenTextDocumentParams,
        DidSaveTextDocumentParams,
        TextDocumentContentChangeEvent,
    )

    from .context import ClientConnection


@dataclass(slots=True)
class OpenDocument:
    uri: str
    path: Path
    version: int | None
    text: str
    language_id: str = ""


def utf16_offset(text: str, line: int, character: int) -> int:
    """The str index of an LSP position (UTF-16 columns; out of range clamps to line end)."""
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    units = 0
    index = start
    while index < end and units < character:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


def end_position(text: str) -> dict[str, int]:
    """The LSP position just past the last character."""
    last_nl = text.rfind("\n")
    last_line = text[last_nl + 1 :]
    units = sum(2 if ord(ch) > 0xFFFF else 1 for ch in last_line)
    return {"line": text.count("\n"), "character": units}


class DocumentStore:
    def __init__(self) -> None:
        self.by_path: dict[Path, OpenDocument] = {}
        # What tools read: absolute path string -> text (ToolContext.documents)
        self.texts: dict[str, str] = {}

    def get(self, path: Path) -> OpenDocument | None:
        return self.by_path.get(path)

    def open(self, uri: str, version: int | None, text: str, language_id: str = "") -> None:
        path = _path(uri)
        self.by_path[path] = OpenDocument(uri, path, version, text, language_id)
        self.texts[str(path)] = text

    def change(self, uri: str, version: int | None, changes: list[TextDocumentContentChangeEvent]) -> None:
        path = _path(uri)
        doc = self.by_path.get(path)
        if doc is None:
            raise InvalidParams(f"textDocument/didChange for {uri}, which is not open (send didOpen first)")
        text = doc.text
        for change in changes:
            rng = change.range
            if rng is not None:
                start = utf16_offset(text, rng.start.line, rng.start.character)
                end = utf16_offset(text, rng.end.line, rng.end.character)
                text = text[:start] + change.text + text[end:]
            else:
                text = change.text
        doc.text, doc.version = text, version
        self.texts[str(path)] = text

    def close(self, uri: str) -> None:
        path = _path(uri)
        self.by_path.pop(path, None)
        self.texts.pop(str(path), None)


def _path(uri: str) -> Path:
    return uri_to_path(uri).resolve()


async def did_open(ctx: ClientConnection, params: DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    ctx.documents.open(doc.uri, doc.version, doc.text, doc.language_id)


async def did_change(ctx: ClientConnection, params: DidChangeTextDocumentParams) -> None:
    doc = params.text_document
    ctx.documents.change(doc.uri, doc.version, params.content_changes)


async def did_close(ctx: ClientConnection, params: DidCloseTextDocumentParams) -> None:
    ctx.documents.close(params.text_document.uri)


async def did_save(_ctx: ClientConnection, _params: DidSaveTextDocumentParams) -> None:
    return None
