"""The LSP side of the wire: document sync (`textDocument/did*`), and what Tether sends
stock LSP clients (`workspace/applyEdit`, `window/showMessageRequest`,
`window/showMessage`), and the agent front a stock LSP client drives (`workspace/executeCommand`,
`textDocument/codeAction`, work-done progress, `window/logMessage`, `window/showDocument`)
— SPEC §3.2, §3.20, §3.23, §3.26, §3.33-§3.35.

Owns: the subset of LSP's shapes Tether reads or writes, spelled as LSP spells them.
Must not: pull in lsprotocol (these few classes keep the ACP start path light); a
field Tether neither reads nor writes is left out rather than guessed.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import attrs

from ._fields import wire
from ._json import JsonObject

__all__ = [
    "ApplyWorkspaceEditParams", "ApplyWorkspaceEditResult", "CodeAction", "CodeActionContext",
    "CodeActionParams", "CodeActionResult", "Command", "CommandResult", "CreateFile", "Diagnostic",
    "ExecuteCommandParams", "LogMessageParams", "ProgressParams", "ProgressValue",
    "ShowDocumentParams", "ShowDocumentResult", "WorkDoneProgressBegin",
    "WorkDoneProgressCancelParams", "WorkDoneProgressCreateParams", "WorkDoneProgressEnd",
    "WorkDoneProgressReport",
    "CreateFileOptions", "DidChangeTextDocumentParams", "DidCloseTextDocumentParams",
    "DidOpenTextDocumentParams", "DidSaveTextDocumentParams", "MessageActionItem",
    "OptionalVersionedTextDocumentIdentifier", "Position", "Range", "ShowMessageParams",
    "ShowMessageRequestParams", "ShowMessageRequestResult",
    "TextDocumentContentChangeEvent", "TextDocumentEdit", "TextDocumentIdentifier",
    "TextDocumentItem", "TextEdit", "WorkspaceEdit",
]

_URI = "invalid params for {method}: textDocument.uri (a file:// URI string) is required"


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

    text_document: Union[JsonObject, None] = None
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


@attrs.define
class LogMessageParams:
    """`window/logMessage`: the turn's full answer, and its steps for a client without
    work-done progress (`type` 3 info, 4 log)."""

    type: int
    message: str


@attrs.define
class ShowDocumentParams:
    """`window/showDocument`: the session's Markdown transcript (in Tether's data dir)."""

    uri: str
    external: Union[bool, None] = None
    take_focus: Union[bool, None] = None


@attrs.define
class ShowDocumentResult:
    success: bool


# ---- the agent front: commands, code actions, progress (SPEC §3.33-§3.35) -------------

_COMMAND = "invalid params for workspace/executeCommand: command is required (a string such as \"tether.ask\")"


@attrs.define
class ExecuteCommandParams:
    """`tether.ask` (a prompt string, or `{prompt?, uri?, range?, diagnostics?, kind?}`),
    `tether.cancel`, `tether.newSession`, `tether.setMode` (a mode id, or nothing: asked)."""

    command: str = wire(error=_COMMAND)
    arguments: Union[list[Any], None] = None
    work_done_token: Union[int, str, None] = None


@attrs.define
class CommandResult:
    """What a `tether.*` command did: the workspace's session, and the turn it started
    (`tether.ask`), the mode it set (`tether.setMode`) or whether a turn was cancelled."""

    session_id: str
    turn_id: Union[str, None] = None
    mode_id: Union[str, None] = None
    cancelled: Union[bool, None] = None


@attrs.define
class Diagnostic:
    """A diagnostic the editor shows; fields Tether does not read are not listed."""

    range: Range
    message: str
    severity: Union[int, None] = None
    code: Union[int, str, None] = None
    source: Union[str, None] = None


@attrs.define
class CodeActionContext:
    diagnostics: list[Diagnostic] = attrs.Factory(list)
    only: Union[list[str], None] = None
    trigger_kind: Union[int, None] = None


_TEXT_DOCUMENT = "invalid params for textDocument/codeAction: textDocument.uri is required"
_RANGE = "invalid params for textDocument/codeAction: range ({start, end}) is required"


@attrs.define
class CodeActionParams:
    text_document: TextDocumentIdentifier = wire(error=_TEXT_DOCUMENT)
    range: Range = wire(error=_RANGE)
    context: CodeActionContext = attrs.Factory(CodeActionContext)


@attrs.define
class Command:
    title: str
    command: str
    arguments: Union[list[Any], None] = None


@attrs.define
class CodeAction:
    """"Ask Tether about this", "Explain", "Fix this with Tether": each runs `tether.ask`."""

    title: str
    kind: str
    command: Command
    diagnostics: Union[list[Diagnostic], None] = None
    is_preferred: Union[bool, None] = None


CodeActionResult = list[CodeAction]


@attrs.define
class WorkDoneProgressCreateParams:
    token: Union[int, str]


@attrs.define
class WorkDoneProgressCancelParams:
    """The user pressed cancel on the turn's progress (`cancellable: true`): the turn stops."""

    token: Union[int, str] = wire(error="invalid params for window/workDoneProgress/cancel: token is required")


@attrs.define
class WorkDoneProgressBegin:
    title: str
    kind: Literal["begin"] = "begin"
    cancellable: Union[bool, None] = None
    message: Union[str, None] = None
    percentage: Union[int, None] = None


@attrs.define
class WorkDoneProgressReport:
    kind: Literal["report"] = "report"
    cancellable: Union[bool, None] = None
    message: Union[str, None] = None
    percentage: Union[int, None] = None


@attrs.define
class WorkDoneProgressEnd:
    kind: Literal["end"] = "end"
    message: Union[str, None] = None


ProgressValue = Union[WorkDoneProgressBegin, WorkDoneProgressReport, WorkDoneProgressEnd]


@attrs.define
class ProgressParams:
    """`$/progress` of a token Tether created with `window/workDoneProgress/create`."""

    token: Union[int, str]
    value: ProgressValue
