"""The method table: every method the daemon serves, its handler, params and result class.

Owns: `METHODS` — one row per JSON-RPC method: the handler (a top-level function taking
the `ServerContext` and the params), the params class the params are structured into
(None only for `initialize`, whose handshake reads the raw dict before the converter is
imported), the result class (None: a union, null, or raw JSON), and whether it is a
notification or answers its own cancellation — and `routes(ctx)`, which binds the table
to a context for `TetherRPC`, answering a storage fault in any handler as `-32015`.
A class named `Later("_module", "Name")` (the peer's) is imported from `tether_protocol`
on the method's first call, like the handlers named by `later(...)`: the ACP start path
does not pay for the snapshot, LSP and extension message modules.
Must not: implement a method (the handler modules do) or touch the wire.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from tether_protocol._errors import StorageFailed
from tether_protocol._sessions import (
    EmptyResult,
    ForkSessionParams,
    ListSessionsParams,
    ListSessionsResult,
    LoadSessionParams,
    LoadSessionResult,
    NewSessionParams,
    NewSessionResult,
    SessionIdParams,
    SetModeParams,
)
from tether_protocol.peer import Later

from ..store import StorageFault
from ..transport.rpc import Route
from . import documents, lifecycle, sessions
from .context import ServerContext

log = logging.getLogger("tether.server")

Handler = Callable[[ServerContext, Any], Awaitable[Any]]

# `{}` or `{_meta}`: the shape of `tether_protocol._methods.EmptyParams`, which cannot be
# imported here (that module imports every message module; the start path stays light).
EmptyParams = EmptyResult


@dataclasses.dataclass(frozen=True, slots=True)
class Method:
    name: str
    handler: Handler
    params_cls: type | Later | None
    result_cls: type | Later | None
    notification: bool = False
    on_cancel: Callable[[ServerContext, Any], None] | None = None


def later(module: str, name: str) -> Handler:
    """The handler ``name`` of ``tether.server.<module>``, imported on its first call: the
    start path (`initialize`, `session/new`) does not import the turn, the replay, the
    snapshots or the tools. The context's warm-up imports them once the client is idle."""
    found: list[Handler] = []

    async def handler(ctx: ServerContext, params: Any) -> Any:
        if not found:
            found.append(getattr(importlib.import_module(f"tether.server.{module}"), name))
        return await found[0](ctx, params)

    handler.__qualname__ = f"{module}.{name}"  # what tests/server checks resolves
    return handler


def _cancel_prompt(ctx: ServerContext, params: Any) -> None:
    from .prompt import cancel_prompt

    cancel_prompt(ctx, params)


_M = Method
METHODS: tuple[Method, ...] = (
    # lifecycle
    _M("initialize", lifecycle.initialize, None, None),
    _M("initialized", lifecycle.initialized, EmptyParams, None, notification=True),
    _M("shutdown", lifecycle.shutdown, EmptyParams, None),
    _M("exit", lifecycle.exit_, EmptyParams, None, notification=True),
    # sessions
    _M("session/new", sessions.session_new, NewSessionParams, NewSessionResult),
    _M("session/load", later("loading", "session_load"), LoadSessionParams, LoadSessionResult),
    _M("session/resume", later("loading", "session_resume"), LoadSessionParams, LoadSessionResult),
    _M("session/list", sessions.session_list, ListSessionsParams, ListSessionsResult),
    _M("session/close", sessions.session_close, SessionIdParams, EmptyResult),
    _M("session/delete", sessions.session_delete, SessionIdParams, EmptyResult),
    _M("session/set_mode", sessions.session_set_mode, SetModeParams, EmptyResult),
    # session config options: the model and mode pickers (SPEC §3.36)
    _M("session/set_config_option", later("config_options", "session_set_config_option"),
       Later("_config_options", "SetConfigOptionParams"), Later("_config_options", "SetConfigOptionResult")),
    _M("session/set_model", later("config_options", "session_set_model"),
       Later("_config_options", "SetModelParams"), EmptyResult),
    # prompt turns
    _M("session/prompt", later("prompt", "session_prompt"), Later("_prompt", "PromptParams"),
       Later("_prompt", "PromptResult"), on_cancel=_cancel_prompt),
    _M("session/cancel", later("prompt", "session_cancel"), SessionIdParams, None, notification=True),
    # the prompt queue and steering (SPEC §3.37)
    _M("_tether/session/queue", later("queue", "session_queue"), Later("_queue", "QueueParams"),
       Later("_queue", "QueueResult")),
    _M("_tether/session/dequeue", later("queue", "session_dequeue"), Later("_queue", "DequeueParams"), EmptyResult),
    _M("_tether/session/steer", later("prompt", "session_steer"), Later("_queue", "SteerParams"),
       Later("_prompt", "PromptResult")),
    # snapshots, forks, search
    _M("_tether/session/dump", later("snapshots", "session_dump"), Later("_snapshots", "DumpParams"), None),
    _M("_tether/session/restore", later("snapshots", "session_restore"), Later("_snapshots", "RestoreParams"),
       Later("_snapshots", "RestoreResult")),
    _M("session/fork", later("snapshots", "session_fork"), ForkSessionParams, NewSessionResult),
    _M("_tether/session/fork", later("snapshots", "tether_session_fork"), Later("_snapshots", "TetherForkParams"),
       NewSessionResult),
    _M("_tether/session/search", later("snapshots", "session_search"), Later("_snapshots", "SearchParams"),
       Later("_snapshots", "SearchResult")),
    _M("_tether/session/latest", later("snapshots", "session_latest"), Later("_snapshots", "LatestParams"), None),
    # checkpoints: rewind a session, the files its turns changed (SPEC §3.40)
    _M("_tether/session/rewind", later("rewind_rpc", "session_rewind"), Later("_rewind", "RewindParams"),
       Later("_rewind", "RewindResult")),
    _M("_tether/session/changes", later("rewind_rpc", "session_changes"), Later("_rewind", "ChangesParams"),
       Later("_rewind", "ChangesResult")),
    # reports, rules, diagnostics
    _M("_tether/session/report", later("reports", "session_report"), Later("_extensions", "ReportParams"), None),
    _M("_tether/rules/list", later("rules", "rules_list"), Later("_extensions", "RulesParams"),
       Later("_extensions", "RulesResult")),
    _M("_tether/rules/remove", later("rules", "rules_remove"), Later("_extensions", "RemoveRuleParams"), EmptyResult),
    _M("_tether/daemon/stats", later("diagnostics", "daemon_stats"), EmptyParams, Later("_extensions", "DaemonStats")),
    # LSP document sync
    _M("textDocument/didOpen", documents.did_open, Later("_lsp", "DidOpenTextDocumentParams"), None,
       notification=True),
    _M("textDocument/didChange", documents.did_change, Later("_lsp", "DidChangeTextDocumentParams"), None,
       notification=True),
    _M("textDocument/didClose", documents.did_close, Later("_lsp", "DidCloseTextDocumentParams"), None,
       notification=True),
    _M("textDocument/didSave", documents.did_save, Later("_lsp", "DidSaveTextDocumentParams"), None,
       notification=True),
    # LSP agent front: a stock LSP client starts and steers turns (SPEC §3.33-§3.35)
    _M("workspace/executeCommand", later("lsp_agent.commands", "execute_command"),
       Later("_lsp", "ExecuteCommandParams"), None),
    _M("textDocument/codeAction", later("lsp_agent.commands", "code_action"), Later("_lsp", "CodeActionParams"), None),
    _M("window/workDoneProgress/cancel", later("lsp_agent.commands", "progress_cancel"),
       Later("_lsp", "WorkDoneProgressCancelParams"), None, notification=True),
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}


def storage_faults_answered(method: str, handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """``handler`` with a history that cannot be read or written (a full disk, a file that
    is not a database, an unusable TETHER_HOME) answered as `-32015` with the store's
    message, which says what to do: it is not a bug of Tether's, so not `-32603`."""

    async def answered(params: Any) -> Any:
        try:
            return await handler(params)
        except StorageFault as exc:
            log.warning("%s: %s", method, exc)
            raise StorageFailed(str(exc), data={"path": exc.path}) from exc

    return answered


def route(ctx: ServerContext, method: Method) -> Route:
    """``method`` bound to ``ctx``, as the transport's route."""
    on_cancel = functools.partial(method.on_cancel, ctx) if method.on_cancel is not None else None
    return Route(
        method.name,
        storage_faults_answered(method.name, functools.partial(method.handler, ctx)),
        method.params_cls,
        notification=method.notification,
        on_cancel=on_cancel,
    )


def routes(ctx: ServerContext) -> dict[str, Route]:
    return {m.name: route(ctx, m) for m in METHODS}
