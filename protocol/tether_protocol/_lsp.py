"""The LSP side of the wire: document sync, what Tether sends stock LSP clients and the agent
front they drive (SPEC §3.2, §3.20, §3.23, §3.26, §3.33-§3.35).

Owns: the subset of LSP's shapes Tether reads or writes, spelled as LSP spells them.
Must not: pull in lsprotocol (the ACP start path stays light) or guess a field Tether
neither reads nor writes (it is left out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ._codec import Described, Wire
from ._json import JsonObject

__all__ = [
    "ApplyWorkspaceEditParams",
    "ApplyWorkspaceEditResult",
    "CodeAction",
    "CodeActionContext",
    "CodeActionParams",
    "CodeActionResult",
    "Command",
    "CommandResult",
    "CreateFile",
    "CreateFileOptions",
    "Diagnostic",
    "DidChangeTextDocumentParams",
    "DidCloseTextDocumentParams",
    "DidOpenTextDocumentParams",
    "DidSaveTextDocumentParams",
    "ExecuteCommandParams",
    "LogMessageParams",
    "MessageActionItem",
    "OptionalVersionedTextDocumentIdentifier",
    "Position",
    "ProgressParams",
    "ProgressValue",
    "Range",
    "ShowDocumentParams",
    "ShowDocumentResult",
    "ShowMessageParams",
    "ShowMessageRequestParams",
    "ShowMessageRequestResult",
    "TextDocumentContentChangeEvent",
    "TextDocumentEdit",
    "TextDocumentIdentifier",
    "TextDocumentItem",
    "TextEdit",
    "WorkDoneProgressBegin",
    "WorkDoneProgressCancelParams",
    "WorkDoneProgressCreateParams",
    "WorkDoneProgressEnd",
    "WorkDoneProgressReport",
    "WorkspaceEdit",
]

_URI = "invalid params for {method}: textDocument.uri (a file:// URI string) is required"


class Position(Wire):
    """Line and character, both 0-based; characters are UTF-16 code units."""

    line: int
    character: int


class Range(Wire):
    start: Position
    end: Position


# ---- document sync (client -> Tether notifications) ----------------------------------


class TextDocumentItem(Wire):
    """`didOpen`'s document. Missing `text`/`languageId` count as empty."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"uri": _URI}

    uri: str
    language_id: str = ""
    version: int | None = None
    text: str = ""


class TextDocumentIdentifier(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"uri": _URI}

    uri: str
    version: int | None = None


class DidOpenTextDocumentParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"textDocument": _URI}

    text_document: TextDocumentItem


class TextDocumentContentChangeEvent(Wire):
    """`{text}` replaces the whole text; `{range, text}` replaces that range."""

    text: str
    range: Range | None = None
    range_length: int | None = None


class DidChangeTextDocumentParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"textDocument": _URI}

    text_document: TextDocumentIdentifier
    content_changes: list[TextDocumentContentChangeEvent] = msgspec.field(default_factory=list)


class DidCloseTextDocumentParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"textDocument": _URI}

    text_document: TextDocumentIdentifier


class DidSaveTextDocumentParams(Wire):
    """Accepted and ignored."""

    text_document: JsonObject | None = None
    text: str | None = None


# ---- workspace/applyEdit (Tether -> client request) ----------------------------------


class TextEdit(Wire):
    range: Range
    new_text: str


class OptionalVersionedTextDocumentIdentifier(Wire):
    """`version` is the open buffer's, or null for a file that is not open."""

    uri: str
    version: int | None


class TextDocumentEdit(Wire):
    text_document: OptionalVersionedTextDocumentIdentifier
    edits: list[TextEdit]


class CreateFileOptions(Wire):
    overwrite: bool | None = None
    ignore_if_exists: bool | None = None


# not a msgspec tag: a `TextDocumentEdit` beside it in `documentChanges` has none (so
# Tether sends the two and never reads them); `kind` is written first, always
class CreateFile(Wire, omit_defaults=False, kw_only=True):
    kind: Literal["create"] = "create"
    uri: str
    options: CreateFileOptions | UnsetType | None = UNSET


if TYPE_CHECKING:
    DocumentChanges = list[TextDocumentEdit | CreateFile]
else:  # sent only: msgspec writes an untagged union but neither reads nor describes one
    DocumentChanges = Annotated[list[Any], Described(list[TextDocumentEdit | CreateFile])]


class WorkspaceEdit(Wire):
    """A `CreateFile` (for a new file) and then one whole-text `TextDocumentEdit`."""

    document_changes: DocumentChanges


class ApplyWorkspaceEditParams(Wire, omit_defaults=False, kw_only=True):
    """`label` is optional in LSP; Tether always names the edit, first on the wire."""

    label: str = ""
    edit: WorkspaceEdit


class ApplyWorkspaceEditResult(Wire):
    """`applied: true` means done; anything else fails the tool call."""

    applied: bool
    failure_reason: str | None = None


# ---- window/* (Tether -> client) -----------------------------------------------------


class ShowMessageParams(Wire):
    """`window/showMessage`: `type` 1 error, 2 warning, 3 info, 4 log."""

    type: int
    message: str


class MessageActionItem(Wire):
    title: str


class ShowMessageRequestParams(Wire):
    """An approval asked of a stock LSP client: `type` 2, the actions `Allow once`,
    (`Allow once with network`), `Allow always`, `Reject`."""

    type: int
    message: str
    actions: list[MessageActionItem]


ShowMessageRequestResult = MessageActionItem | None


class LogMessageParams(Wire):
    """`window/logMessage`: the turn's full answer, and its steps for a client without
    work-done progress (`type` 3 info, 4 log)."""

    type: int
    message: str


class ShowDocumentParams(Wire):
    """`window/showDocument`: the session's Markdown transcript (in Tether's data dir)."""

    uri: str
    external: bool | None = None
    take_focus: bool | None = None


class ShowDocumentResult(Wire):
    success: bool


# ---- the agent front: commands, code actions, progress (SPEC §3.33-§3.35) -------------

_COMMAND = 'invalid params for workspace/executeCommand: command is required (a string such as "tether.ask")'


class ExecuteCommandParams(Wire):
    """`tether.ask` (a prompt string, or `{prompt?, uri?, range?, diagnostics?, kind?}`),
    `tether.cancel`, `tether.newSession`, `tether.setMode` (a mode id, or nothing: asked)."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"command": _COMMAND}

    command: str
    arguments: list[Any] | None = None
    work_done_token: int | str | None = None


class CommandResult(Wire):
    """What a `tether.*` command did: the workspace's session, and the turn it started
    (`tether.ask`), the mode it set (`tether.setMode`) or whether a turn was cancelled."""

    session_id: str
    turn_id: str | None = None
    mode_id: str | None = None
    cancelled: bool | None = None


class Diagnostic(Wire):
    """A diagnostic the editor shows; fields Tether does not read are not listed."""

    range: Range
    message: str
    severity: int | None = None
    code: int | str | None = None
    source: str | None = None


class CodeActionContext(Wire):
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    only: list[str] | None = None
    trigger_kind: int | None = None


_TEXT_DOCUMENT = "invalid params for textDocument/codeAction: textDocument.uri is required"
_RANGE = "invalid params for textDocument/codeAction: range ({start, end}) is required"


class CodeActionParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"textDocument": _TEXT_DOCUMENT, "range": _RANGE}

    text_document: TextDocumentIdentifier
    range: Range
    context: CodeActionContext = msgspec.field(default_factory=CodeActionContext)


class Command(Wire):
    title: str
    command: str
    arguments: list[Any] | None = None


class CodeAction(Wire):
    """ "Ask Tether about this", "Explain", "Fix this with Tether": each runs `tether.ask`."""

    title: str
    kind: str
    command: Command
    diagnostics: list[Diagnostic] | None = None
    is_preferred: bool | None = None


CodeActionResult = list[CodeAction]


class WorkDoneProgressCreateParams(Wire):
    token: int | str


class WorkDoneProgressCancelParams(Wire):
    """The user pressed cancel on the turn's progress (`cancellable: true`): the turn stops."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "token": "invalid params for window/workDoneProgress/cancel: token is required",
    }

    token: int | str


class WorkDoneProgressBegin(Wire, tag_field="kind", tag="begin"):
    title: str
    cancellable: bool | None = None
    message: str | None = None
    percentage: int | None = None


class WorkDoneProgressReport(Wire, tag_field="kind", tag="report"):
    cancellable: bool | None = None
    message: str | None = None
    percentage: int | None = None


class WorkDoneProgressEnd(Wire, tag_field="kind", tag="end"):
    message: str | None = None


ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd


class ProgressParams(Wire):
    """`$/progress` of a token Tether created with `window/workDoneProgress/create`."""

    token: int | str
    value: ProgressValue
