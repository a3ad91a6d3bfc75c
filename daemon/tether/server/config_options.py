"""A session's config options (ACP's `configOptions`): the model and the mode pickers.

`session/set_config_option` and `session/set_model` (SPEC §3.36), and the options the
`session/new|load|resume` answers carry. The chosen model is stored in the session's
metadata (`"model"`), so it survives a restart (session/load) and a snapshot round trip;
it applies from the next turn (a running turn keeps the model it started with).
Owns: which options a session has, their checks and their updates (`config_option_update`,
and `current_mode_update` when the mode changes by the "mode" option). Must not: touch
SQL (the store does) or run turns. On the start path: imports nothing of the turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol._config_options import (
    SessionConfigOption,
    SessionConfigSelectOption,
    SetConfigOptionParams,
    SetConfigOptionResult,
    SetModelParams,
)
from tether_protocol._errors import InvalidParams
from tether_protocol._sessions import EmptyResult

from .handshake import MODES

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from .context import ServerContext

# The "model" value that means "whatever the provider picks" (no `model` setting).
DEFAULT_MODEL = "default"
CONFIG_IDS = ("model", "mode")


def stored_model(metadata: dict[str, Any]) -> str | None:
    """The model a stored session chose (its metadata's "model"), if any."""
    model = metadata.get("model")
    return model if isinstance(model, str) and model else None


def model_ids(ctx: ServerContext) -> list[str]:
    """The models a session may pick: the `models` setting, with the configured model."""
    current = ctx.settings.model or DEFAULT_MODEL
    listed = list(ctx.settings.models)
    return listed if current in listed else [current, *listed]


def config_options(ctx: ServerContext, session: AgentSession) -> list[SessionConfigOption]:
    """The session's options, model first, with their current values."""
    ids = model_ids(ctx)
    current = session.model or ctx.settings.model or DEFAULT_MODEL
    if current not in ids:  # chosen from a list since changed: still shown, still chosen
        ids.append(current)
    model = SessionConfigOption(
        "model", "Model", current,
        [SessionConfigSelectOption(m, "Provider default" if m == DEFAULT_MODEL else m) for m in ids],
        category="model", description="The model that answers, from the next request on",
    )
    mode = SessionConfigOption(
        "mode", "Mode", session.mode,
        [SessionConfigSelectOption(mode_id, name, text) for mode_id, name, text in MODES],
        category="mode", description="What the agent may do without asking",
    )
    return [model, mode]


def _check(config_id: str, value: str, allowed: list[str]) -> None:
    if value not in allowed:
        raise InvalidParams(
            f"invalid params for session/set_config_option: value {value!r} is not a value of "
            f"config option {config_id!r}; allowed: {', '.join(allowed)}"
        )


async def set_model(ctx: ServerContext, session: AgentSession, model: str) -> None:
    """Choose ``model`` (one of ``model_ids``, checked) for the session's next requests."""
    session.model = None if model == DEFAULT_MODEL else model
    record = await session.store.get_session(session.id)
    metadata = dict(record.metadata) if record is not None else {}
    metadata["model"] = session.model or ""
    await session.store.update_session(session.id, metadata=metadata)


async def set_mode(session: AgentSession, mode: str) -> None:
    """The session's mode (checked by the caller), stored: every way of setting it comes here."""
    session.mode = mode
    await session.store.update_session(session.id, mode=mode)


def send_update(ctx: ServerContext, session: AgentSession, update: Any) -> None:
    from tether_protocol._converter import unstructure  # not on the start path

    from .updates.emitter import SessionUpdates

    SessionUpdates(session.id, ctx.connection).update(unstructure(update))


async def session_set_config_option(ctx: ServerContext, params: SetConfigOptionParams) -> SetConfigOptionResult:
    session = ctx.registry.get_live(params.session_id)
    if params.config_id == "model":
        _check("model", params.value, [o.value for o in config_options(ctx, session)[0].options])
        await set_model(ctx, session, params.value)
    elif params.config_id == "mode":
        _check("mode", params.value, [mode_id for mode_id, _name, _text in MODES])
        changed = params.value != session.mode
        await set_mode(session, params.value)
        if changed:  # the client asked for an option, and may know only modes
            from tether_protocol._updates import CurrentModeUpdate  # not on the start path (22 classes)

            send_update(ctx, session, CurrentModeUpdate(params.value))  # type: ignore[arg-type]
    else:
        raise InvalidParams(
            f"invalid params for session/set_config_option: unknown configId {params.config_id!r}; "
            f"this session's config options are: {', '.join(CONFIG_IDS)}"
        )
    return SetConfigOptionResult(config_options(ctx, session))


async def session_set_model(ctx: ServerContext, params: SetModelParams) -> EmptyResult:
    session = ctx.registry.get_live(params.session_id)
    allowed = [o.value for o in config_options(ctx, session)[0].options]
    if params.model_id not in allowed:
        raise InvalidParams(
            f"invalid params for session/set_model: modelId {params.model_id!r} is not one of "
            f"this session's models: {', '.join(allowed)}"
        )
    await set_model(ctx, session, params.model_id)
    from tether_protocol._updates import ConfigOptionUpdate  # not on the start path (22 classes)

    send_update(ctx, session, ConfigOptionUpdate(config_options(ctx, session)))
    return EmptyResult()
