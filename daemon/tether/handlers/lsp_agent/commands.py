"""The handlers of the LSP agent front: `workspace/executeCommand`, `textDocument/codeAction`, progress cancel.

Owns: reading each command's arguments (a wrong one gets `-32602` naming it) and doing it:
`tether.ask`, `tether.cancel`, `tether.newSession`, `tether.setMode`; a progress cancel stops the turn.
Must not: render a turn (`watch.py`) or build prompts (`actions.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol import CommandResult, InvalidParams, JsonObject

from ...config.settings import MODE_CHOICES, MODES
from ...server.handshake import LSP_COMMANDS
from ...services import config_options
from ...services.message_size import refuse_long_text
from ...transport.rpc import ClientRequestFailed
from . import actions
from .front import cancel_by_progress, session_of, start_turn, workspace_root

if TYPE_CHECKING:
    from tether_protocol import CodeActionParams, ExecuteCommandParams, WorkDoneProgressCancelParams

    from ...server.context import ClientConnection

_ASK_USAGE = (
    'send arguments ["<your question>"], ["<your question>", "file:///…", {"start": {"line": 0, '
    '"character": 0}, "end": {"line": 3, "character": 0}}] or [{"prompt", "uri", "range"}]'
)


def _bad(command: str, what: str, fix: str) -> InvalidParams:
    return InvalidParams(f"invalid params for {command}: {what}; {fix}")


def _position(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k), int) and not isinstance(value.get(k), bool) and value[k] >= 0
        for k in ("line", "character")
    )


def read_ask(arguments: list[Any] | None) -> actions.Ask:
    """`tether.ask`'s one argument: a prompt, or `{prompt?, uri?, range?, diagnostics?, kind?}`."""
    if not arguments:
        raise _bad("tether.ask", "no arguments", _ASK_USAGE)
    if len(arguments) > 3 or (len(arguments) > 1 and not isinstance(arguments[0], str)):
        raise _bad(
            "tether.ask", f"{len(arguments)} arguments (it takes one, or a prompt, a uri and a range)", _ASK_USAGE
        )
    if len(arguments) > 1:  # [prompt, uri, range?]: what Sublime's and Kakoune's variables give
        arguments = [dict(zip(("prompt", "uri", "range"), arguments, strict=False))]
    (arg,) = arguments
    if isinstance(arg, str):
        if not arg.strip():
            raise _bad("tether.ask", "the prompt is empty", _ASK_USAGE)
        return actions.Ask(prompt=arg)
    if not isinstance(arg, dict):
        raise _bad("tether.ask", f"the argument is {type(arg).__name__}, not a string or an object", _ASK_USAGE)
    ask = actions.Ask(kind=arg.get("kind", actions.ASK))
    if ask.kind not in (actions.ASK, actions.EXPLAIN, actions.FIX):
        raise _bad("tether.ask", f"kind {ask.kind!r} is unknown", 'use "ask", "explain" or "fix"')
    prompt, uri, range_, diagnostics = (arg.get(k) for k in ("prompt", "uri", "range", "diagnostics"))
    if prompt is not None and not (isinstance(prompt, str) and prompt.strip()):
        raise _bad("tether.ask", "prompt must be a non-empty string", _ASK_USAGE)
    if uri is not None and not isinstance(uri, str):
        raise _bad("tether.ask", "uri must be a string (a file:// URI)", _ASK_USAGE)
    if range_ is not None and not (
        isinstance(range_, dict) and _position(range_.get("start")) and _position(range_.get("end"))
    ):
        raise _bad(
            "tether.ask",
            "range must be {start: {line, character}, end: {line, character}} with integers from 0",
            _ASK_USAGE,
        )
    if diagnostics is not None and not (
        isinstance(diagnostics, list) and all(isinstance(d, dict) for d in diagnostics)
    ):
        raise _bad("tether.ask", "diagnostics must be a list of LSP Diagnostic objects", _ASK_USAGE)
    if prompt is None and uri is None:
        raise _bad("tether.ask", "neither a prompt nor a uri", _ASK_USAGE)
    if range_ is not None and uri is None:
        raise _bad("tether.ask", "a range without a uri", "send the uri of the document the range is in")
    ask.prompt, ask.uri, ask.range, ask.diagnostics = prompt, uri, range_, diagnostics or []
    return ask


async def ask(ctx: ClientConnection, arguments: list[Any] | None) -> CommandResult | None:
    request = read_ask(arguments)
    if request.prompt is not None:  # before a session is made or anything stored
        refuse_long_text(request.prompt, ctx.settings.max_message_mib, "tether.ask", "prompt")
    found = actions.snippet(ctx, workspace_root(ctx), request)
    question = request.prompt
    if question is None and request.kind == actions.ASK:
        assert found is not None  # a uri was given
        question = await actions.choose_question(ctx, found.where)
        if question is None:
            return None  # the user dismissed the question: nothing to do
    # what the model is sent holds the selected lines and a fix's diagnostics too: the cap is on it
    prompt = actions.prompt_text(request, question or "", found)
    refuse_long_text(prompt, ctx.settings.max_message_mib, "tether.ask", "prompt")
    session = await session_of(ctx)
    turn_id = start_turn(ctx, session, prompt)
    return CommandResult(session.id, turn_id=turn_id)


async def cancel(ctx: ClientConnection, arguments: list[Any] | None) -> CommandResult:
    session = await session_of(ctx)
    running = session.turn is not None
    if session.turn is not None:
        session.turn.cancel()
    return CommandResult(session.id, cancelled=running)


async def new_session(ctx: ClientConnection, arguments: list[Any] | None) -> CommandResult:
    current = await session_of(ctx)
    if current.turn is not None:
        current.turn.cancel()
    session = await session_of(ctx, fresh=True)
    return CommandResult(session.id, mode_id=session.mode)


async def set_mode(ctx: ClientConnection, arguments: list[Any] | None) -> CommandResult | None:
    if (arguments and len(arguments) > 1) or (arguments and not isinstance(arguments[0], str)):
        raise _bad("tether.setMode", "the argument must be one mode id", f"send one of {list(MODES)}")
    session = await session_of(ctx)
    mode = arguments[0] if arguments else await _choose_mode(ctx, session.mode)
    if mode is None:
        return None  # dismissed
    if mode not in MODES:
        raise _bad("tether.setMode", f"unknown mode {mode!r}", f"send one of {list(MODES)}")
    await config_options.set_mode(session, mode)
    return CommandResult(session.id, mode_id=mode)


async def _choose_mode(ctx: ClientConnection, current: str) -> str | None:
    names = {name: mode_id for mode_id, name, _about in MODE_CHOICES}
    about = "; ".join(f"{name}: {text}" for _mode_id, name, text in MODE_CHOICES)
    try:
        title = await actions.choose(ctx, f"Tether: the mode is {current}. Choose the mode ({about})", list(names))
    except ClientRequestFailed as exc:
        raise _bad(
            "tether.setMode",
            f"no mode given and the editor cannot show a choice ({exc.error_message})",
            f"send one of {list(MODES)} as the argument",
        ) from None
    return names.get(title) if title is not None else None


_COMMANDS = {"tether.ask": ask, "tether.cancel": cancel, "tether.newSession": new_session, "tether.setMode": set_mode}
assert set(_COMMANDS) == set(LSP_COMMANDS)


async def execute_command(ctx: ClientConnection, params: ExecuteCommandParams) -> CommandResult | None:
    run = _COMMANDS.get(params.command)
    if run is None:
        raise _bad(
            "workspace/executeCommand",
            f"unknown command {params.command!r}",
            f"Tether's commands are {list(LSP_COMMANDS)}",
        )
    return await run(ctx, params.arguments)


async def code_action(ctx: ClientConnection, params: CodeActionParams) -> list[JsonObject]:
    return actions.code_actions(params)


async def progress_cancel(ctx: ClientConnection, params: WorkDoneProgressCancelParams) -> None:
    cancel_by_progress(ctx, params.token)
