"""Idempotency keys on `session/prompt` (RFD "v2 Idempotency Keys", SPEC §12.5).

Owns: reading a prompt's key (v2's `idempotencyKey`, v1's `_meta.tether.idempotencyKey`) and answering
a retry of the same prompt (by its digest): waiting for the pending first request, its answer again, or
after a restart the store's (`turn_meta`: a prompt answer's turn); refusing the key with another
prompt; a key never inserted is free again. Must not: run a turn (prompt.py, prompt_v2.py do) or write SQL.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import anyio

from tether_protocol import (
    InvalidParams,
    PromptParams,
    PromptResult,
    PromptResultMeta,
    PromptTetherMeta,
    RequestCancelled,
    SteerOutcome,
    StopReason,
    TetherError,
    dumps_text,
    unstructure,
)
from tether_protocol.peer import RawResult

from ..store import prompt_keys
from .queue import queue_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..agent.session import AgentSession
    from .live_session import LiveSession
    from .ports import HostT, SessionHost

MAX_KEY_CHARS = 256
# Answered keys kept in memory per session; an older one's retry is answered from the store.
KEPT_ANSWERS = 256
Answer = PromptResult | RawResult


@dataclass(slots=True, eq=False)
class KeyedPrompt:
    """The first request with a key: done once it is answered (or failed)."""

    digest: str  # its prompt's (`prompt_digest`)
    done: anyio.Event = field(default_factory=anyio.Event)
    began: bool = False  # its turn began (the prompt is inserted with its key)
    answer: Answer | None = None
    error: TetherError | None = None


def idempotency_key(params: PromptParams) -> str | None:
    """The prompt's key, or None; a key that is not a short non-empty string is refused."""
    key: object = params.idempotency_key
    where = "idempotencyKey"
    if key is None:
        tether = (params.meta or {}).get("tether")
        key = tether.get("idempotencyKey") if isinstance(tether, dict) else None
        where = "_meta.tether.idempotencyKey"
    if key is None:
        return None
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
        raise InvalidParams(
            f"invalid params for session/prompt: {where} must be a non-empty string of at most "
            f"{MAX_KEY_CHARS} characters (a UUID, new for each prompt the user sends); got {str(key)[:80]!r}"
        )
    return key


def prompt_digest(params: PromptParams) -> str:
    """SHA-256 of the prompt's canonical JSON: its content blocks as decoded, keys sorted, no
    whitespace, text as sent (no Unicode normalisation). Two prompts are the same when equal."""
    blocks = [unstructure(block) for block in params.prompt]
    canonical = json.dumps(blocks, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _refuse_other_prompt(key: str, digest: str, first_digest: str) -> None:
    """The key was first sent with another prompt: refused (answering the first prompt's id
    would drop this one without a word). A key stored before schema v12 has no digest."""
    if first_digest and digest != first_digest:
        raise InvalidParams(
            f"invalid params for session/prompt: idempotencyKey {key!r} was already used on this session "
            f"for a different prompt; nothing was inserted. Send this prompt with a new key (a new UUID per "
            f"prompt the user sends; reuse a key only to retry the very same prompt)"
        )


async def prompt_once(
    ctx: HostT,
    params: PromptParams,
    key: str,
    first: Callable[[HostT, PromptParams, str], Awaitable[Answer]],
) -> Answer:
    """`first(ctx, params, key)` unless the key was used on this session: then its answer."""
    session = ctx.daemon.registry.get_live(params.session_id)
    keyed_prompts = queue_of(ctx, session).keyed
    seen = keyed_prompts.get(key)
    digest = prompt_digest(params)
    if seen is not None:
        _refuse_other_prompt(key, digest, seen.digest)
        await seen.done.wait()
        if seen.error is not None:
            raise seen.error
        if seen.answer is None:  # its request was dropped (its connection closed) unanswered
            raise RequestCancelled("the first request with this idempotencyKey was dropped before it was answered")
        return seen.answer
    keyed = keyed_prompts[key] = KeyedPrompt(digest)
    try:
        stored = await prompt_keys.find(session.store, session.id, key)
        if stored is not None:  # used before this daemon started
            keyed.digest = stored.prompt_digest
            _refuse_other_prompt(key, digest, stored.prompt_digest)
            keyed.began = True
            keyed.answer = await _stored_answer(ctx, session, key, stored)
        else:
            keyed.answer = await first(ctx, params, key)
        return keyed.answer
    except TetherError as exc:
        keyed.error = exc
        raise
    finally:
        if not keyed.began:
            del keyed_prompts[key]  # nothing was inserted: a retry runs the prompt
        keyed.done.set()
        if len(keyed_prompts) > KEPT_ANSWERS:
            oldest = next((k for k, v in keyed_prompts.items() if v.done.is_set()), None)
            if oldest is not None:
                del keyed_prompts[oldest]


async def _stored_answer(ctx: SessionHost, session: LiveSession, key: str, turn: prompt_keys.KeyedTurn) -> Answer:
    """What the first request was answered: v2's message id, or v1's stop reason."""
    from ..rendering.acp_v2_answers import prompt_message_id

    if getattr(ctx.connection, "protocol_version", 1) == 2:
        return RawResult(dumps_text({"messageId": prompt_message_id(turn.turn_id)}))
    if turn.stop_reason is None:
        why = f"failed ({turn.error})" if turn.status == "error" else f"is {turn.status}"
        raise InvalidParams(
            f"the prompt with idempotencyKey {key!r} was inserted as turn {turn.turn_id}, which {why}; "
            f"send it with a new key to run it again"
        )
    return PromptResult(cast("StopReason", turn.stop_reason), meta=await turn_meta(session, turn.turn_id, None))


async def turn_meta(session: AgentSession, turn_id: str, steer: SteerOutcome | None) -> PromptResultMeta:
    """The turn's id and its seq: rewind and changes take either (one lookup per prompt)."""
    from ..store.checkpoints import seq_of_turn

    seq = await seq_of_turn(session.store, turn_id) if turn_id else None
    return PromptResultMeta(tether=PromptTetherMeta(turn_id=turn_id, steer=steer, turn_seq=seq))
