"""A session's config options (ACP's `configOptions`): the model, reasoning and mode pickers (SPEC §3.36).

Owns: the options the session answers carry, setting model, reasoning and mode, their updates,
and the model list's cache (`fetch_models`; docs/decisions/0018; handlers: handlers/config_options.py).
Must not: touch SQL (the store does), do HTTP (`models_list.py` does), run turns, or import
anything of the turn (it is on the start path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from tether_protocol import JsonObject, SessionConfigOption, SessionConfigSelectOption

from ..config.settings import MODE_CHOICES

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from .ports import ClientPort

# The "model" value that means "whatever the provider picks" (no `model` setting).
DEFAULT_MODEL = "default"
# The "reasoning" value that means "send nothing: the provider's (or model's) own choice".
DEFAULT_REASONING = "default"
_EFFORTS = (
    ("low", "Low", "Less reasoning: faster and cheaper"),
    ("medium", "Medium", None),
    ("high", "High", "More reasoning for hard problems: slower"),
)


def stored_model(metadata: JsonObject) -> str | None:
    """The model a stored session chose (its metadata's "model"), if any."""
    model = metadata.get("model")
    return model if isinstance(model, str) and model else None


def stored_reasoning(metadata: JsonObject) -> str | None:
    """The reasoning choice a stored session made (its metadata's "reasoning"), if any."""
    reasoning = metadata.get("reasoning")
    return reasoning if isinstance(reasoning, str) and reasoning else None


def _model_choices(ctx: ClientPort) -> dict[str, str]:
    """The models a session may pick (id -> name): the `models` setting (the `model`
    setting first when it is not in it), then what the provider lists (`fetch_models`)."""
    current = ctx.settings.model or DEFAULT_MODEL
    configured = list(ctx.settings.models)
    listed = ctx.daemon.model_catalog.listed if ctx.daemon.model_catalog is not None else ()
    names = {m.id: m.name for m in listed}
    names[DEFAULT_MODEL] = "Provider default"
    ids = [*(configured if current in configured else [current, *configured]), *names]
    return {m: names.get(m, m) for m in ids if m != DEFAULT_MODEL or m == current}


def model_ids(ctx: ClientPort) -> list[str]:
    return list(_model_choices(ctx))


def _reasoning_values(ctx: ClientPort, model: str) -> list[SessionConfigSelectOption]:
    """The reasoning choices for ``model``: OpenAI's `reasoning_effort` for the models that
    take it, Anthropic's thinking budget for the models that think; [] = no such option
    (another provider or model, or the provider not known yet: it is built after the first
    session is answered, and the option comes with a `config_option_update` then)."""
    catalog = ctx.daemon.model_catalog
    kind = catalog.kind if catalog is not None else ""
    if kind == "openai":
        from ..providers.messages_openai import takes_reasoning_effort

        if takes_reasoning_effort(model, ctx.settings.reasoning_models):
            first = SessionConfigSelectOption(DEFAULT_REASONING, "Model default", "Send no reasoning_effort")
            return [first, *(SessionConfigSelectOption(v, n, d) for v, n, d in _EFFORTS)]
    elif kind == "anthropic":
        from ..providers.messages_anthropic import THINKING_BUDGETS, takes_thinking

        if takes_thinking(model):
            off = SessionConfigSelectOption("off", "Off", "No extended thinking")
            return [
                off,
                *(
                    SessionConfigSelectOption(v, n, f"Thinking budget: {THINKING_BUDGETS[v]} tokens")
                    for v, n, _d in _EFFORTS
                ),
            ]
    return []


def _current_model(ctx: ClientPort, session: AgentSession) -> str:
    return session.model or ctx.settings.model or DEFAULT_MODEL


def config_options(ctx: ClientPort, session: AgentSession) -> list[SessionConfigOption]:
    """The session's options, model first, with their current values."""
    choices = _model_choices(ctx)
    current = _current_model(ctx, session)
    if current not in choices:  # chosen from a list since changed: still shown, still chosen
        choices[current] = current
    model = SessionConfigOption(
        "model",
        "Model",
        current,
        [SessionConfigSelectOption(m, name) for m, name in choices.items()],
        category="model",
        description="The model that answers, from the next request on",
    )
    options = [model]
    values = _reasoning_values(ctx, current)
    if values:
        chosen = session.reasoning or values[0].value
        if chosen not in [v.value for v in values]:
            chosen = values[0].value
        name = "Thinking" if values[0].value == "off" else "Reasoning effort"
        options.append(
            SessionConfigOption(
                "reasoning",
                name,
                chosen,
                values,
                category="thought_level",
                description="How much the model reasons before it answers, from the next turn on",
            )
        )
    mode = SessionConfigOption(
        "mode",
        "Mode",
        session.mode,
        [SessionConfigSelectOption(mode_id, name, text) for mode_id, name, text in MODE_CHOICES],
        category="mode",
        description="What the agent may do without asking",
    )
    return [*options, mode]


async def _store(session: AgentSession, key: str, value: str) -> None:
    record = await session.store.get_session(session.id)
    metadata = dict(record.metadata) if record is not None else {}
    metadata[key] = value
    await session.store.update_session(session.id, metadata=metadata)


async def set_model(ctx: ClientPort, session: AgentSession, model: str) -> None:
    """Choose ``model`` (one of ``model_ids``, checked) for the session's next requests; a
    reasoning choice the new model cannot take goes back to the default."""
    session.model = None if model == DEFAULT_MODEL else model
    await _store(session, "model", session.model or "")
    if session.reasoning is not None and session.reasoning not in [
        v.value for v in _reasoning_values(ctx, _current_model(ctx, session))
    ]:
        await set_reasoning(session, DEFAULT_REASONING)


async def set_reasoning(session: AgentSession, value: str) -> None:
    """The session's reasoning choice (checked by the caller), stored; from its next turn."""
    session.reasoning = None if value == DEFAULT_REASONING else value
    await _store(session, "reasoning", session.reasoning or "")


async def fetch_models(ctx: ClientPort) -> None:
    """Once per daemon, after the warm-up built the provider: its model list (and which
    provider it is, for the reasoning option). A failure keeps the configured models (a
    log line). The live sessions whose options changed get a `config_option_update`."""
    from ..providers.models_list import ModelCatalog, kind_of, list_models

    try:
        provider = await ctx.provider()
    except Exception:
        return
    async with anyio.create_task_group() as group:

        async def stop_early() -> None:  # a stopping daemon does not wait for a slow server
            await ctx.stopped.wait()
            group.cancel_scope.cancel()

        group.start_soon(stop_early)
        listed = await list_models(provider)
        group.cancel_scope.cancel()
    live = [s for s in ctx.daemon.registry.live.values() if not s.closed]
    before = [config_options(ctx, s) for s in live]  # what each was last told (no await since)
    ctx.daemon.model_catalog = ModelCatalog(kind_of(provider), tuple(listed or ()))
    for session, old in zip(live, before, strict=True):
        now = config_options(ctx, session)
        if now != old:
            from tether_protocol import ConfigOptionUpdate  # not on the start path (22 classes)

            send_update(ctx, session, ConfigOptionUpdate(now))


async def set_mode(session: AgentSession, mode: str) -> None:
    """The session's mode (checked by the caller), stored: every way of setting it comes here."""
    session.mode = mode
    await session.store.update_session(session.id, mode=mode)


def send_update(ctx: ClientPort, session: AgentSession, update: Any) -> None:
    from tether_protocol import unstructure  # not on the start path

    from ..rendering.emitter import SessionUpdates

    SessionUpdates(session.id, ctx.connection).update(unstructure(update))
