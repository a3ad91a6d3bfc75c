"""`session/set_config_option` and `session/set_model`: a client picks a model, reasoning or mode (SPEC §3.36).

Owns: checking the picked value against the session's options (-32602 lists the allowed ones),
setting it through `tether.services.config_options`, and the update that tells the client.
Must not: touch SQL, do HTTP, or import anything of the turn (it is on the start path).
"""

from __future__ import annotations

from tether_protocol import EmptyResult, InvalidParams, SetConfigOptionParams, SetConfigOptionResult, SetModelParams

from ..server.context import ClientConnection
from ..services.config_options import config_options, send_update, set_mode, set_model, set_reasoning


def _check(config_id: str, value: str, allowed: list[str]) -> None:
    if value not in allowed:
        raise InvalidParams(
            f"invalid params for session/set_config_option: value {value!r} is not a value of "
            f"config option {config_id!r}; allowed: {', '.join(allowed)}"
        )


async def session_set_config_option(ctx: ClientConnection, params: SetConfigOptionParams) -> SetConfigOptionResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    offered = {o.id: [v.value for v in o.options] for o in config_options(ctx, session)}
    if params.config_id not in offered:
        raise InvalidParams(
            f"invalid params for session/set_config_option: unknown configId {params.config_id!r}; "
            f"this session's config options are: {', '.join(offered)}"
        )
    _check(params.config_id, params.value, offered[params.config_id])
    if params.config_id == "model":
        await set_model(ctx, session, params.value)
    elif params.config_id == "reasoning":
        await set_reasoning(session, params.value)
    else:
        changed = params.value != session.mode
        await set_mode(session, params.value)
        if changed:  # the client asked for an option, and may know only modes
            from tether_protocol import CurrentModeUpdate  # not on the start path (22 classes)

            send_update(ctx, session, CurrentModeUpdate(params.value))  # type: ignore[arg-type]
    return SetConfigOptionResult(config_options(ctx, session))


async def session_set_model(ctx: ClientConnection, params: SetModelParams) -> EmptyResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    allowed = [o.value for o in config_options(ctx, session)[0].options]
    if params.model_id not in allowed:
        raise InvalidParams(
            f"invalid params for session/set_model: modelId {params.model_id!r} is not one of "
            f"this session's models: {', '.join(allowed)}"
        )
    await set_model(ctx, session, params.model_id)
    from tether_protocol import ConfigOptionUpdate  # not on the start path (22 classes)

    send_update(ctx, session, ConfigOptionUpdate(config_options(ctx, session)))
    return EmptyResult()
