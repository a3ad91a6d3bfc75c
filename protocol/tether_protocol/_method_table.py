"""The method table of protocol v1: every method Tether serves or sends, its params and result
classes, direction and kind; the only place that says them.

Owns: `MethodSpec[P, R]` (a handler's registration checked by mypy) and `V1_SPECS`, the classes
named, not imported (`"ses.NewSessionParams"`), so the start path imports no message module for it.
Must not: hold shapes (the message modules do); `_methods` resolves it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from ._rpc_types import Later

if TYPE_CHECKING:
    from . import _client_requests as cr
    from . import _config_options as cfg
    from . import _extensions as ext
    from . import _initialize as init
    from . import _lsp as lsp
    from . import _queue as que
    from . import _rewind as rw
    from . import _sessions as ses
    from . import _snapshots as snap
    from . import _updates as upd

Direction = Literal["client->agent", "agent->client", "both"]
Kind = Literal["request", "notification"]

# The message modules by the short names the table (and its annotations) use.
MODULES = {
    "cr": "_client_requests",
    "cfg": "_config_options",
    "ext": "_extensions",
    "init": "_initialize",
    "lsp": "_lsp",
    "que": "_queue",
    "rw": "_rewind",
    "ses": "_sessions",
    "snap": "_snapshots",
    "upd": "_updates",
}

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class MethodSpec(Generic[P, R]):
    """One JSON-RPC method: params `P`, result `R` (None: a notification, or a request
    answered `null`). `params`/`result` name the classes as `"alias.Name"`."""

    name: str
    direction: Direction
    kind: Kind
    params: str
    result: str | None = None
    result_or_null: bool = False  # the result is `result` or `null` (`workspace/executeCommand`)

    @property
    def extension(self) -> bool:
        return self.name.startswith("_")

    @property
    def params_class(self) -> Later:
        """The params class, imported when the first message needs it."""
        alias, name = self.params.split(".")
        return Later(MODULES[alias], name)


def resolve(ref: str) -> Any:
    """The class (or union, or list alias) that `"alias.Name"` names, imported now."""
    alias, name = ref.split(".")
    return getattr(importlib.import_module(f"{__package__}.{MODULES[alias]}"), name)


def _request(
    name: str,
    params: str,
    result: str | None,
    direction: Direction = "client->agent",
    *,
    or_null: bool = False,
) -> Any:
    return MethodSpec(name, direction, "request", params, result, or_null)


def _notification(name: str, params: str, direction: Direction = "client->agent") -> Any:
    return MethodSpec(name, direction, "notification", params)


_AC: Direction = "agent->client"

# ---- client -> Tether: lifecycle (SPEC §3.1-§3.4)
INITIALIZE: MethodSpec[init.InitializeParams, init.InitializeResult] = _request(
    "initialize", "init.InitializeParams", "init.InitializeResult"
)
INITIALIZED: MethodSpec[ses.EmptyParams, None] = _notification("initialized", "ses.EmptyParams")
SHUTDOWN: MethodSpec[ses.EmptyParams, None] = _request("shutdown", "ses.EmptyParams", None)
EXIT: MethodSpec[ses.EmptyParams, None] = _notification("exit", "ses.EmptyParams")
# ---- client -> Tether: sessions and turns (§3.5-§3.13, §3.30)
SESSION_NEW: MethodSpec[ses.NewSessionParams, ses.NewSessionResult] = _request(
    "session/new", "ses.NewSessionParams", "ses.NewSessionResult"
)
SESSION_LOAD: MethodSpec[ses.LoadSessionParams, ses.LoadSessionResult] = _request(
    "session/load", "ses.LoadSessionParams", "ses.LoadSessionResult"
)
SESSION_RESUME: MethodSpec[ses.ResumeSessionParams, ses.ResumeSessionResult] = _request(
    "session/resume", "ses.ResumeSessionParams", "ses.ResumeSessionResult"
)
SESSION_LIST: MethodSpec[ses.ListSessionsParams, ses.ListSessionsResult] = _request(
    "session/list", "ses.ListSessionsParams", "ses.ListSessionsResult"
)
SESSION_CLOSE: MethodSpec[ses.SessionIdParams, ses.EmptyResult] = _request(
    "session/close", "ses.SessionIdParams", "ses.EmptyResult"
)
SESSION_DELETE: MethodSpec[ses.SessionIdParams, ses.EmptyResult] = _request(
    "session/delete", "ses.SessionIdParams", "ses.EmptyResult"
)
SESSION_SET_MODE: MethodSpec[ses.SetModeParams, ses.EmptyResult] = _request(
    "session/set_mode", "ses.SetModeParams", "ses.EmptyResult"
)
SESSION_FORK: MethodSpec[ses.ForkSessionParams, ses.NewSessionResult] = _request(
    "session/fork", "ses.ForkSessionParams", "ses.NewSessionResult"
)
SESSION_SET_CONFIG_OPTION: MethodSpec[cfg.SetConfigOptionParams, cfg.SetConfigOptionResult] = _request(
    "session/set_config_option", "cfg.SetConfigOptionParams", "cfg.SetConfigOptionResult"
)
SESSION_SET_MODEL: MethodSpec[cfg.SetModelParams, ses.EmptyResult] = _request(
    "session/set_model", "cfg.SetModelParams", "ses.EmptyResult"
)
SESSION_PROMPT: MethodSpec[ses.PromptParams, ses.PromptResult] = _request(
    "session/prompt", "ses.PromptParams", "ses.PromptResult"
)
SESSION_CANCEL: MethodSpec[ses.SessionIdParams, None] = _notification("session/cancel", "ses.SessionIdParams")
# ---- client -> Tether: stopping one running tool call (§12.4; v2's names, and v1's extension)
TOOL_CALL_CANCEL: MethodSpec[ses.ToolCallCancelParams, ses.EmptyResult] = _request(
    "tool_call/cancel", "ses.ToolCallCancelParams", "ses.EmptyResult"
)
TERMINAL_CANCEL: MethodSpec[ses.TerminalCancelParams, ses.EmptyResult] = _request(
    "terminal/cancel", "ses.TerminalCancelParams", "ses.EmptyResult"
)
TETHER_TOOL_CALL_CANCEL: MethodSpec[ses.ToolCallCancelParams, ses.EmptyResult] = _request(
    "_tether/toolCall/cancel", "ses.ToolCallCancelParams", "ses.EmptyResult"
)
# ---- both directions: cancelling a request (§3.14)
CANCEL_REQUEST_ACP: MethodSpec[init.CancelRequestParams, None] = _notification(
    "$/cancel_request", "init.CancelRequestParams", "both"
)
CANCEL_REQUEST_LSP: MethodSpec[init.CancelRequestParams, None] = _notification(
    "$/cancelRequest", "init.CancelRequestParams", "both"
)
# ---- client -> Tether: extensions (§3.16-§3.19, §3.27-§3.32)
REPORT: MethodSpec[ext.ReportParams, ext.ReportResult] = _request(
    "_tether/session/report", "ext.ReportParams", "ext.ReportResult"
)
DAEMON_STATS: MethodSpec[ses.EmptyParams, ext.DaemonStats] = _request(
    "_tether/daemon/stats", "ses.EmptyParams", "ext.DaemonStats"
)
RULES_LIST: MethodSpec[ext.RulesParams, ext.RulesResult] = _request(
    "_tether/rules/list", "ext.RulesParams", "ext.RulesResult"
)
RULES_REMOVE: MethodSpec[ext.RemoveRuleParams, ses.EmptyResult] = _request(
    "_tether/rules/remove", "ext.RemoveRuleParams", "ses.EmptyResult"
)
DUMP: MethodSpec[snap.DumpParams, snap.DumpResult] = _request(
    "_tether/session/dump", "snap.DumpParams", "snap.DumpResult"
)
RESTORE: MethodSpec[snap.RestoreParams, snap.RestoreResult] = _request(
    "_tether/session/restore", "snap.RestoreParams", "snap.RestoreResult"
)
TETHER_FORK: MethodSpec[snap.TetherForkParams, ses.NewSessionResult] = _request(
    "_tether/session/fork", "snap.TetherForkParams", "ses.NewSessionResult"
)
SEARCH: MethodSpec[snap.SearchParams, snap.SearchResult] = _request(
    "_tether/session/search", "snap.SearchParams", "snap.SearchResult"
)
LATEST: MethodSpec[snap.LatestParams, snap.LatestResult] = _request(
    "_tether/session/latest", "snap.LatestParams", "snap.LatestResult"
)
REWIND: MethodSpec[rw.RewindParams, rw.RewindResult] = _request(
    "_tether/session/rewind", "rw.RewindParams", "rw.RewindResult"
)
CHANGES: MethodSpec[rw.ChangesParams, rw.ChangesResult] = _request(
    "_tether/session/changes", "rw.ChangesParams", "rw.ChangesResult"
)
# ---- client -> Tether: the prompt queue and steering (§3.37)
QUEUE: MethodSpec[que.QueueParams, que.QueueResult] = _request(
    "_tether/session/queue", "que.QueueParams", "que.QueueResult"
)
DEQUEUE: MethodSpec[que.DequeueParams, ses.EmptyResult] = _request(
    "_tether/session/dequeue", "que.DequeueParams", "ses.EmptyResult"
)
STEER: MethodSpec[que.SteerParams, ses.PromptResult] = _request(
    "_tether/session/steer", "que.SteerParams", "ses.PromptResult"
)
# ---- client -> Tether: LSP document sync (§3.20)
DID_OPEN: MethodSpec[lsp.DidOpenTextDocumentParams, None] = _notification(
    "textDocument/didOpen", "lsp.DidOpenTextDocumentParams"
)
DID_CHANGE: MethodSpec[lsp.DidChangeTextDocumentParams, None] = _notification(
    "textDocument/didChange", "lsp.DidChangeTextDocumentParams"
)
DID_CLOSE: MethodSpec[lsp.DidCloseTextDocumentParams, None] = _notification(
    "textDocument/didClose", "lsp.DidCloseTextDocumentParams"
)
DID_SAVE: MethodSpec[lsp.DidSaveTextDocumentParams, None] = _notification(
    "textDocument/didSave", "lsp.DidSaveTextDocumentParams"
)
# ---- client -> Tether: the agent front of a stock LSP client (§3.33, §3.34)
EXECUTE_COMMAND: MethodSpec[lsp.ExecuteCommandParams, lsp.CommandResult | None] = _request(
    "workspace/executeCommand", "lsp.ExecuteCommandParams", "lsp.CommandResult", or_null=True
)
CODE_ACTION: MethodSpec[lsp.CodeActionParams, lsp.CodeActionResult] = _request(
    "textDocument/codeAction", "lsp.CodeActionParams", "lsp.CodeActionResult"
)
PROGRESS_CANCEL: MethodSpec[lsp.WorkDoneProgressCancelParams, None] = _notification(
    "window/workDoneProgress/cancel", "lsp.WorkDoneProgressCancelParams"
)
# ---- Tether -> client (§3.2, §3.21-§3.26, §4)
SESSION_UPDATE: MethodSpec[upd.SessionNotification, None] = _notification(
    "session/update", "upd.SessionNotification", _AC
)
SESSION_CLEARED: MethodSpec[cfg.SessionClearedParams, None] = _notification(
    "_tether/session/cleared", "cfg.SessionClearedParams", _AC
)
SHOW_MESSAGE: MethodSpec[lsp.ShowMessageParams, None] = _notification(
    "window/showMessage", "lsp.ShowMessageParams", _AC
)
REQUEST_PERMISSION: MethodSpec[cr.RequestPermissionParams, cr.RequestPermissionResult] = _request(
    "session/request_permission", "cr.RequestPermissionParams", "cr.RequestPermissionResult", _AC
)
SHOW_MESSAGE_REQUEST: MethodSpec[lsp.ShowMessageRequestParams, lsp.ShowMessageRequestResult] = _request(
    "window/showMessageRequest", "lsp.ShowMessageRequestParams", "lsp.ShowMessageRequestResult", _AC
)
LOG_MESSAGE: MethodSpec[lsp.LogMessageParams, None] = _notification("window/logMessage", "lsp.LogMessageParams", _AC)
PROGRESS: MethodSpec[lsp.ProgressParams, None] = _notification("$/progress", "lsp.ProgressParams", _AC)
PROGRESS_CREATE: MethodSpec[lsp.WorkDoneProgressCreateParams, None] = _request(
    "window/workDoneProgress/create", "lsp.WorkDoneProgressCreateParams", None, _AC
)
SHOW_DOCUMENT: MethodSpec[lsp.ShowDocumentParams, lsp.ShowDocumentResult] = _request(
    "window/showDocument", "lsp.ShowDocumentParams", "lsp.ShowDocumentResult", _AC
)
READ_TEXT_FILE: MethodSpec[cr.ReadTextFileParams, cr.ReadTextFileResult] = _request(
    "fs/read_text_file", "cr.ReadTextFileParams", "cr.ReadTextFileResult", _AC
)
WRITE_TEXT_FILE: MethodSpec[cr.WriteTextFileParams, cr.WriteTextFileResult] = _request(
    "fs/write_text_file", "cr.WriteTextFileParams", "cr.WriteTextFileResult", _AC
)
APPLY_EDIT: MethodSpec[lsp.ApplyWorkspaceEditParams, lsp.ApplyWorkspaceEditResult] = _request(
    "workspace/applyEdit", "lsp.ApplyWorkspaceEditParams", "lsp.ApplyWorkspaceEditResult", _AC
)

V1_SPECS: tuple[MethodSpec[Any, Any], ...] = tuple(
    value for value in list(globals().values()) if isinstance(value, MethodSpec)
)
"""Every method of v1, in the order of the table above (the schema's order)."""
