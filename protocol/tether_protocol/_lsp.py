"""The LSP side of the wire: document sync (`textDocument/did*`), and what Tether sends
stock LSP clients (`workspace/applyEdit`, `window/showMessageRequest`,
`window/showMessage`) — SPEC §3.2, §3.20, §3.23, §3.26.

Owns: the subset of LSP's shapes Tether reads or writes, spelled as LSP spells them.
Must not: pull in lsprotocol (these few classes keep the ACP start path light); a
field Tether neither reads nor writes is left out rather than guessed.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import attrs

from ._fields import wire

__all__ = [
    "ApplyWorkspaceEditParams", "ApplyWorkspaceEditResult", "CreateFile",
    "CreateFileOptions", "DidChangeTextDocumentParams", "DidCloseTextDocumentParams",
    "DidOpenTextDocumentParams", "DidSaveTextDocumentParams", "MessageActionItem",
    "OptionalVersionedTextDocumentIdentifier", "Position", "Range", "ShowMessageParams",
    "ShowMessageRequestParams", "ShowMessageRequestResult",
    "TextDocumentContentChangeEvent", "TextDocumentEdit", "TextDocumentIdentifier",
    "TextDocumentItem", "TextEdit", "WorkspaceEdit",
]

_URI = "invalid params: textDocument.uri is required"


@attrs.define
class Position:
    """Line and character, both 0-based; characters are UTF-16 code units."""

    line: int
    character: int


@attrs.define
class Range:
    start: Position
    end: Position


# ---- document sync (client -> Tether notifications) ----------------------------------


@attrs.define
class TextDocumentItem:
    """`didOpen`'s document. Missing `text`/`languageId` count as empty."""

    uri: str = wire(error=_URI)
    language_id: str = ""
    version: Union[int, None] = None
    text: str = ""


@attrs.define
class TextDocumentIdentifier:
    uri: str = wire(error=_URI)
    version: Union[int, None] = None


@attrs.define
class DidOpenTextDocumentParams:
    text_document: TextDocumentItem = wire(error=_URI)


@attrs.define
class TextDocumentContentChangeEvent:
    """`{text}` replaces the whole text; `{range, text}` replaces that range."""

    text: str
    range: Union[Range, None] = None
    range_length: Union[int, None] = None


@attrs.define
class DidChangeTextDocumentParams:
    text_document: TextDocumentIdentifier = wire(error=_URI)
    content_changes: list[TextDocumentContentChangeEvent] = attrs.Factory(list)


@attrs.define
class DidCloseTextDocumentParams:
    text_document: TextDocumentIdentifier = wire(error=_URI)


@attrs.define
class DidSaveTextDocumentParams:
    """Accepted and ignored."""

    text_document: Union[dict[str, Any], None] = None
    text: Union[str, None] = None


# ---- workspace/applyEdit (Tether -> client request) ----------------------------------


@attrs.define
class TextEdit:
    range: Range
    new_text: str


@attrs.define
class OptionalVersionedTextDocumentIdentifier:
    """`version` is the open buffer's, or null for a file that is not open."""

    uri: str
    version: Union[int, None]


@attrs.define
class TextDocumentEdit:
    text_document: OptionalVersionedTextDocumentIdentifier
    edits: list[TextEdit]


@attrs.define
class CreateFileOptions:
    overwrite: Union[bool, None] = None
    ignore_if_exists: Union[bool, None] = None


@attrs.define
class CreateFile:
    kind: Literal["create"] = attrs.field(default="create", kw_only=True)  # first on the wire
    uri: str
    options: Union[CreateFileOptions, None] = None


@attrs.define
class WorkspaceEdit:
    """A `CreateFile` (for a new file) and then one whole-text `TextDocumentEdit`."""

    document_changes: list[Union[TextDocumentEdit, CreateFile]]


@attrs.define
class ApplyWorkspaceEditParams:
    """`label` is optional in LSP; Tether always names the edit, first on the wire."""

    label: str = attrs.field(default="", kw_only=True)
    edit: WorkspaceEdit


@attrs.define
class ApplyWorkspaceEditResult:
    """`applied: true` means done; anything else fails the tool call."""

    applied: bool
    failure_reason: Union[str, None] = None


# ---- window/* (Tether -> client) -----------------------------------------------------


@attrs.define
class ShowMessageParams:
    """`window/showMessage`: `type` 1 error, 2 warning, 3 info, 4 log."""

    type: int
    message: str


@attrs.define
class MessageActionItem:
    title: str


@attrs.define
class ShowMessageRequestParams:
    """An approval asked of a stock LSP client: `type` 2, the actions `Allow once`,
    (`Allow once with network`), `Allow always`, `Reject`."""

    type: int
    message: str
    actions: list[MessageActionItem]


ShowMessageRequestResult = Union[MessageActionItem, None]
