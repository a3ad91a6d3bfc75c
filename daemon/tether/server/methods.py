"""The daemon's half of the method table: which handler serves each method.

Owns: `METHODS` (per method: its protocol spec, its handler, whether it answers its own cancel, its
v2 handler) and `routes(ctx)`, a storage fault answered `-32015` (`storage_failed`); `_Later(...)` handlers are
imported on first call, so the ACP start path pays for none of them (docs/decisions/0018).
Must not: name a params or result class (the protocol's table does), implement a method, or touch the wire.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from tether_protocol import StorageFailed
from tether_protocol import _method_table as spec
from tether_protocol._method_table import MethodSpec
from tether_protocol.peer import Later, RawResult

from ..handlers import lifecycle, sessions
from ..store import StorageFault
from ..transport.rpc import Route
from . import documents
from .context import ClientConnection

if TYPE_CHECKING:
    from ..handlers import (
        config_options,
        diagnostics,
        item_cancel,
        loading,
        prompt,
        queue,
        reports,
        resume_v2,
        rewind_rpc,
        rules,
        snapshots,
    )
    from ..handlers.lsp_agent import commands

log = logging.getLogger("tether.server")

Handler = Callable[[ClientConnection, Any], Awaitable[Any]]
P = TypeVar("P")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True, slots=True)
class Method:
    spec: MethodSpec[Any, Any]
    handler: Handler
    on_cancel: Callable[[ClientConnection, Any], None] | None = None
    raw_params: bool = False  # the params as the JSON object (`initialize`: read before the converter)
    # on an ACP v2 connection: this handler instead, given the params as the JSON object
    # (it reads them with the v2 types, `tether_protocol.acp_v2`)
    v2: Handler | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def notification(self) -> bool:
        return self.spec.kind == "notification"

    @property
    def params_cls(self) -> Later | None:
        return None if self.raw_params else self.spec.params_class


def serve(
    method: MethodSpec[P, R],
    handler: Callable[[ClientConnection, P], Awaitable[R | RawResult]],
    on_cancel: Callable[[ClientConnection, Any], None] | None = None,
) -> Method:
    """``handler`` serves ``method``: mypy checks it takes the method's params class and
    answers its result class (or that result already encoded, `RawResult`)."""
    return Method(method, handler, on_cancel)


def serve_wire(method: MethodSpec[P, Any], handler: Callable[[ClientConnection, P], Awaitable[object]]) -> Method:
    """``handler`` serves ``method`` with a result already in its wire form (JSON objects
    built without the result class); its params are still checked."""
    return Method(method, handler)


def later(module: str, name: str) -> Handler:
    """The handler ``name`` of ``tether.<module>``, imported on its first call: the
    start path (`initialize`, `session/new`) does not import the turn, the replay, the
    snapshots or the tools. The context's warm-up imports them once the client is idle."""
    found: list[Handler] = []

    async def handler(ctx: ClientConnection, params: Any) -> Any:
        if not found:
            found.append(getattr(importlib.import_module(f"tether.{module}"), name))
        return await found[0](ctx, params)

    handler.__qualname__ = f"{module}.{name}"  # what tests/server checks resolves
    handler.later = (module, name)  # type: ignore[attr-defined]  # `route` imports it itself
    return handler


class _Later:
    """`tether.<module>` for the table: each handler named on it is `later(...)`.
    To mypy (TYPE_CHECKING) the names are the modules, so each handler is checked."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Handler:
        return later(self._module, name)


if not TYPE_CHECKING:
    config_options, queue = _Later("handlers.config_options"), _Later("handlers.queue")
    diagnostics, loading = _Later("handlers.diagnostics"), _Later("handlers.loading")
    prompt, reports = _Later("handlers.prompt"), _Later("handlers.reports")
    resume_v2, rewind_rpc = _Later("handlers.resume_v2"), _Later("handlers.rewind_rpc")
    rules, snapshots = _Later("handlers.rules"), _Later("handlers.snapshots")
    commands, item_cancel = _Later("handlers.lsp_agent.commands"), _Later("handlers.item_cancel")


def _cancel_prompt(ctx: ClientConnection, params: Any) -> None:
    from ..handlers.prompt import cancel_prompt

    cancel_prompt(ctx, params)


METHODS: tuple[Method, ...] = (
    # lifecycle: `initialize` takes its params raw (the handshake reads them before the
    # converter is imported) and answers JSON
    Method(spec.INITIALIZE, lifecycle.initialize, raw_params=True),
    serve(spec.INITIALIZED, lifecycle.initialized),
    serve(spec.SHUTDOWN, lifecycle.shutdown),
    serve(spec.EXIT, lifecycle.exit_),
    # sessions
    serve(spec.SESSION_NEW, sessions.session_new),
    # v2 (SPEC §12): `session/load` removed, `session/resume` with `replayFrom`
    dataclasses.replace(serve(spec.SESSION_LOAD, loading.session_load), v2=resume_v2.session_load_v2),
    dataclasses.replace(serve(spec.SESSION_RESUME, loading.session_resume), v2=resume_v2.session_resume_v2),
    serve(spec.SESSION_LIST, sessions.session_list),
    serve(spec.SESSION_CLOSE, sessions.session_close),
    serve(spec.SESSION_DELETE, sessions.session_delete),
    serve(spec.SESSION_SET_MODE, sessions.session_set_mode),
    # session config options: the model and mode pickers (SPEC §3.36)
    serve(spec.SESSION_SET_CONFIG_OPTION, config_options.session_set_config_option),
    serve(spec.SESSION_SET_MODEL, config_options.session_set_model),
    # prompt turns
    serve(spec.SESSION_PROMPT, prompt.session_prompt, on_cancel=_cancel_prompt),
    serve(spec.SESSION_CANCEL, prompt.session_cancel),
    # stopping one running tool call (SPEC §12.4)
    serve(spec.TOOL_CALL_CANCEL, item_cancel.tool_call_cancel),
    serve(spec.TERMINAL_CANCEL, item_cancel.terminal_cancel),
    serve(spec.TETHER_TOOL_CALL_CANCEL, item_cancel.tool_call_cancel),
    # the prompt queue and steering (SPEC §3.37)
    serve(spec.QUEUE, queue.session_queue),
    serve(spec.DEQUEUE, queue.session_dequeue),
    serve(spec.STEER, prompt.session_steer),
    # snapshots, forks, search
    serve(spec.DUMP, snapshots.session_dump),
    serve(spec.RESTORE, snapshots.session_restore),
    serve(spec.SESSION_FORK, snapshots.session_fork),
    serve(spec.TETHER_FORK, snapshots.tether_session_fork),
    serve(spec.SEARCH, snapshots.session_search),
    serve(spec.LATEST, snapshots.session_latest),
    # checkpoints: rewind a session, the files its turns changed (SPEC §3.40)
    serve(spec.REWIND, rewind_rpc.session_rewind),
    serve(spec.CHANGES, rewind_rpc.session_changes),
    # reports, rules, diagnostics
    serve_wire(spec.REPORT, reports.session_report),
    serve(spec.RULES_LIST, rules.rules_list),
    serve(spec.RULES_REMOVE, rules.rules_remove),
    serve(spec.DAEMON_STATS, diagnostics.daemon_stats),
    # LSP document sync
    serve(spec.DID_OPEN, documents.did_open),
    serve(spec.DID_CHANGE, documents.did_change),
    serve(spec.DID_CLOSE, documents.did_close),
    serve(spec.DID_SAVE, documents.did_save),
    # LSP agent front: a stock LSP client starts and steers turns (SPEC §3.33-§3.35)
    serve(spec.EXECUTE_COMMAND, commands.execute_command),
    serve_wire(spec.CODE_ACTION, commands.code_action),
    serve(spec.PROGRESS_CANCEL, commands.progress_cancel),
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}


def storage_failed(method: str, exc: Exception) -> StorageFailed | None:
    """A history that cannot be read or written (a full disk, a file that is not a database,
    an unusable TETHER_HOME) answered as `-32015` with the store's message, which says what
    to do: it is not a bug of Tether's, so not `-32603` (the peer asks only on a failure)."""
    if not isinstance(exc, StorageFault):
        return None
    log.warning("%s: %s", method, exc)
    failed = StorageFailed(str(exc), data={"path": exc.path})
    failed.__cause__ = exc
    return failed


def route(ctx: ClientConnection, method: Method) -> Route:
    """``method`` bound to ``ctx``, as the transport's route (a `later` handler: the route
    calls the handler itself once it is imported, with no hop in between)."""
    on_cancel = functools.partial(method.on_cancel, ctx) if method.on_cancel is not None else None
    bound = Route(method.name, functools.partial(method.handler, ctx), method.params_cls,
                  notification=method.notification, on_cancel=on_cancel)
    if method.v2 is not None:
        bound.handler, bound.params_cls = _by_version(ctx, method), None
    elif (named := getattr(method.handler, "later", None)) is not None:
        bound.handler = _imported_on_first_call(ctx, bound, *named)
    return bound


def _imported_on_first_call(ctx: ClientConnection, bound: Route, module: str, name: str) -> Callable[[Any], Awaitable[Any]]:
    """The route's handler until its module is imported: imports it, then puts the handler
    itself in the route (unless something wrapped the route meanwhile)."""

    async def first_call(params: Any) -> Any:
        handler = functools.partial(getattr(importlib.import_module(f"tether.{module}"), name), ctx)
        if bound.handler is first_call:
            bound.handler = handler
        return await handler(params)

    return first_call


def _by_version(ctx: ClientConnection, method: Method) -> Callable[[Any], Awaitable[Any]]:
    """The handler of the version ``ctx``'s connection negotiated: v2's takes the params
    raw; v1's gets them structured as the table says (the same errors as without a v2 one)."""
    v1 = Route(method.name, functools.partial(method.handler, ctx), method.params_cls)
    v2 = functools.partial(method.v2, ctx) if method.v2 is not None else v1.handler

    async def handler(params: Any) -> Any:
        if getattr(ctx.connection, "protocol_version", 1) == 2:
            return await v2(params)
        return await v1.handler(ctx.rpc.structure_params(v1, params))

    return handler


def routes(ctx: ClientConnection) -> dict[str, Route]:
    return {m.name: route(ctx, m) for m in METHODS}
