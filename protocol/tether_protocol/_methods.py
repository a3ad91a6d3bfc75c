"""The method table of protocol v1: every JSON-RPC method Tether serves or sends, with
its params and result classes.

Owns: which class is each method's params and result, each method's direction and
kind. The daemon's routes, `protocol/schema.json` (`x-tether-methods`) and the tests
that compare the two all read `V1`. Must not: hold shapes (the message modules do).

ACP v2 would be a second table (`V2`) beside this one, reusing the classes that did not
change and naming new ones for those that did (`session/update`'s upserts,
`session/prompt`'s acknowledgement); a connection picks its table from the version
negotiated in `initialize`. v1 stays the only wire version for now.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, Union

import attrs

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
from ._fields import Meta

Direction = Literal["client->agent", "agent->client", "both"]
Kind = Literal["request", "notification"]

NULL_RESULT: Any = type(None)
"""The result of a request answered with `null` (`shutdown`)."""


@attrs.define
class EmptyParams:
    """No params (or `{}`): `initialized`, `shutdown`, `exit`, `_tether/daemon/stats`."""

    meta: Meta = None


# What a method's params or result is structured as: an attrs class, a list of one, a
# union of them, or None. Any: typing has no type for such a type form (cattrs takes Any).
_Shape: TypeAlias = Any


@attrs.frozen
class Method:
    """One JSON-RPC method. `result` is None for a notification (it has none)."""

    name: str
    direction: Direction
    kind: Kind
    params: _Shape
    result: _Shape = None

    @property
    def extension(self) -> bool:
        return self.name.startswith("_")


def _request(name: str, params: _Shape, result: _Shape, direction: Direction = "client->agent") -> Method:
    return Method(name, direction, "request", params, result)


def _notification(name: str, params: _Shape, direction: Direction = "client->agent") -> Method:
    return Method(name, direction, "notification", params)


V1: tuple[Method, ...] = (
    # ---- client -> Tether: lifecycle (SPEC §3.1-§3.4)
    _request("initialize", init.InitializeParams, init.InitializeResult),
    _notification("initialized", EmptyParams),
    _request("shutdown", EmptyParams, NULL_RESULT),
    _notification("exit", EmptyParams),
    # ---- client -> Tether: sessions and turns (§3.5-§3.13, §3.30)
    _request("session/new", ses.NewSessionParams, ses.NewSessionResult),
    _request("session/load", ses.LoadSessionParams, ses.LoadSessionResult),
    _request("session/resume", ses.ResumeSessionParams, ses.ResumeSessionResult),
    _request("session/list", ses.ListSessionsParams, ses.ListSessionsResult),
    _request("session/close", ses.SessionIdParams, ses.EmptyResult),
    _request("session/delete", ses.SessionIdParams, ses.EmptyResult),
    _request("session/set_mode", ses.SetModeParams, ses.EmptyResult),
    _request("session/fork", ses.ForkSessionParams, ses.NewSessionResult),
    _request("session/set_config_option", cfg.SetConfigOptionParams, cfg.SetConfigOptionResult),
    _request("session/set_model", cfg.SetModelParams, ses.EmptyResult),
    _request("session/prompt", ses.PromptParams, ses.PromptResult),
    _notification("session/cancel", ses.SessionIdParams),
    # ---- both directions: cancelling a request (§3.14)
    _notification("$/cancel_request", init.CancelRequestParams, "both"),
    _notification("$/cancelRequest", init.CancelRequestParams, "both"),
    # ---- client -> Tether: extensions (§3.16-§3.19, §3.27-§3.32)
    _request("_tether/session/report", ext.ReportParams, ext.ReportResult),
    _request("_tether/daemon/stats", EmptyParams, ext.DaemonStats),
    _request("_tether/rules/list", ext.RulesParams, ext.RulesResult),
    _request("_tether/rules/remove", ext.RemoveRuleParams, ses.EmptyResult),
    _request("_tether/session/dump", snap.DumpParams, snap.DumpResult),
    _request("_tether/session/restore", snap.RestoreParams, snap.RestoreResult),
    _request("_tether/session/fork", snap.TetherForkParams, ses.NewSessionResult),
    _request("_tether/session/search", snap.SearchParams, snap.SearchResult),
    _request("_tether/session/latest", snap.LatestParams, snap.LatestResult),
    _request("_tether/session/rewind", rw.RewindParams, rw.RewindResult),
    _request("_tether/session/changes", rw.ChangesParams, rw.ChangesResult),
    # ---- client -> Tether: the prompt queue and steering (§3.37)
    _request("_tether/session/queue", que.QueueParams, que.QueueResult),
    _request("_tether/session/dequeue", que.DequeueParams, ses.EmptyResult),
    _request("_tether/session/steer", que.SteerParams, ses.PromptResult),
    # ---- client -> Tether: LSP document sync (§3.20)
    _notification("textDocument/didOpen", lsp.DidOpenTextDocumentParams),
    _notification("textDocument/didChange", lsp.DidChangeTextDocumentParams),
    _notification("textDocument/didClose", lsp.DidCloseTextDocumentParams),
    _notification("textDocument/didSave", lsp.DidSaveTextDocumentParams),
    # ---- client -> Tether: the agent front of a stock LSP client (§3.33, §3.34)
    _request("workspace/executeCommand", lsp.ExecuteCommandParams, Union[lsp.CommandResult, None]),
    _request("textDocument/codeAction", lsp.CodeActionParams, lsp.CodeActionResult),
    _notification("window/workDoneProgress/cancel", lsp.WorkDoneProgressCancelParams),
    # ---- Tether -> client (§3.2, §3.21-§3.26, §4)
    _notification("session/update", upd.SessionNotification, "agent->client"),
    _notification("_tether/session/cleared", cfg.SessionClearedParams, "agent->client"),
    _notification("window/showMessage", lsp.ShowMessageParams, "agent->client"),
    _request(
        "session/request_permission", cr.RequestPermissionParams, cr.RequestPermissionResult,
        "agent->client",
    ),
    _request(
        "window/showMessageRequest", lsp.ShowMessageRequestParams, lsp.ShowMessageRequestResult,
        "agent->client",
    ),
    _notification("window/logMessage", lsp.LogMessageParams, "agent->client"),
    _notification("$/progress", lsp.ProgressParams, "agent->client"),
    _request("window/workDoneProgress/create", lsp.WorkDoneProgressCreateParams, NULL_RESULT, "agent->client"),
    _request("window/showDocument", lsp.ShowDocumentParams, lsp.ShowDocumentResult, "agent->client"),
    _request("fs/read_text_file", cr.ReadTextFileParams, cr.ReadTextFileResult, "agent->client"),
    _request("fs/write_text_file", cr.WriteTextFileParams, cr.WriteTextFileResult, "agent->client"),
    _request(
        "workspace/applyEdit", lsp.ApplyWorkspaceEditParams, lsp.ApplyWorkspaceEditResult,
        "agent->client",
    ),
)

METHODS: dict[str, Method] = {m.name: m for m in V1}
"""`V1` by method name."""

# The tables by direction and kind (older names; derived from V1).
CLIENT_REQUESTS: dict[str, tuple[_Shape, _Shape]] = {
    m.name: (m.params, m.result)
    for m in V1
    if m.direction == "client->agent" and m.kind == "request"
}
CLIENT_NOTIFICATIONS: dict[str, _Shape] = {
    m.name: m.params for m in V1 if m.direction != "agent->client" and m.kind == "notification"
}
AGENT_REQUESTS: dict[str, tuple[_Shape, _Shape]] = {
    m.name: (m.params, m.result)
    for m in V1
    if m.direction == "agent->client" and m.kind == "request"
}
AGENT_NOTIFICATIONS: dict[str, _Shape] = {
    m.name: m.params for m in V1 if m.direction != "client->agent" and m.kind == "notification"
}
