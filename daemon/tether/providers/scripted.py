"""The scripted provider: deterministic model replies read from a JSON script (format: SPEC §7).

Owns: reading and checking a script, and answering each model call with the first reply whose `when`
matches (user regex, step, purpose), streamed as its keys say; stateless across daemon restarts.
Must not: answer a request of another purpose with a step's reply, or the reverse.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol.conversation import (
    CompactionSummary,
    JsonObject,
    Message,
    TextBlock,
    UserMessage,
    for_model,
    message_to_json,
)

from .base import (
    Finish,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

# Without delays, hand control back to the event loop every this many chunks: the way
# a network stream delivers many deltas per read, and what lets cancel land promptly.
_BURST = 64
_WORDS = re.compile(r"\S+\s*|\s+")
_REPLY_KEYS = {
    "when",
    "text",
    "chunks",
    "repeat",
    "chunk_size",
    "thinking",
    "tool_calls",
    "delay_ms",
    "finish",
    "usage",
    "error",
}
_FINISH = {"stop", "length", "refusal", "tool_calls"}


class ScriptError(ValueError):
    """The script file is missing or malformed; the message names the file and the spot."""


class ScriptedProvider(Provider):
    name = "scripted"

    def __init__(self, script: JsonObject, *, source: str = "<script>") -> None:
        self.source = source
        self.model = str(script.get("model", "scripted"))
        self.context_window = int(script.get("context_window", 128_000))
        self.replies: list[JsonObject] = list(script["replies"])
        self._patterns = [re.compile(r["when"]["user"]) if "user" in r.get("when", {}) else None for r in self.replies]

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ScriptError(f"scripted provider: script file {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ScriptError(f"scripted provider: cannot read {path}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ScriptError(f"scripted provider: {path} is not valid JSON: {exc}") from None
        validate_script(data, str(path))
        return cls(data, source=str(path))

    def pick(self, request: ModelRequest) -> JsonObject:
        user_text = last_user_text(request.messages)
        purpose = request.metadata.get("purpose") or None
        for reply, pattern in zip(self.replies, self._patterns, strict=True):
            when = reply.get("when", {})
            if when.get("purpose") != purpose:
                continue
            if "step" in when and when["step"] != request.step:
                continue
            if pattern is not None and not pattern.search(user_text):
                continue
            return reply
        preview = user_text[:60].replace("\n", " ")
        if purpose is not None:
            raise ProviderError(
                f"scripted provider: no reply in {self.source} answers a {purpose!r} request; "
                f'add a reply with "when": {{"purpose": "{purpose}"}}'
            )
        raise ProviderError(
            f"scripted provider: no reply in {self.source} matches step {request.step} "
            f'of this turn (user message: {preview!r}); add a reply whose "when" matches'
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        reply = self.pick(request)
        delay = float(reply.get("delay_ms", 0)) / 1000.0
        error: JsonObject = reply.get("error") or {}
        fail_after = int(error.get("after_chunks", 0)) if error else -1
        emitted = 0
        if reply.get("thinking"):
            for chunk in _WORDS.findall(reply["thinking"]):
                if delay:
                    await asyncio.sleep(delay)
                yield ThinkingDelta(chunk)
        out_chars = 0
        for chunk in _text_chunks(reply):
            if emitted == fail_after:
                raise ProviderError(
                    str(error.get("message", "scripted failure")), kind=str(error.get("kind", "scripted"))
                )
            if delay:
                await asyncio.sleep(delay)
            elif emitted % _BURST == _BURST - 1:
                await asyncio.sleep(0)
            yield TextDelta(chunk)
            emitted += 1
            out_chars += len(chunk)
        if emitted == fail_after or (error and fail_after > emitted):
            raise ProviderError(str(error.get("message", "scripted failure")), kind=str(error.get("kind", "scripted")))
        calls = reply.get("tool_calls") or []
        for index, call in enumerate(calls):
            call_id = str(call.get("id") or f"call_{request.step}_{index + 1}")
            yield ToolCallStart(call_id, str(call["name"]))
            raw = call.get("arguments", {})
            args = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
            half = len(args) // 2  # two argument deltas, as real streams split them
            for piece in (args[:half], args[half:]):
                if piece:
                    yield ToolCallArgsDelta(call_id, piece)
            yield ToolCallEnd(call_id)
        usage = reply.get("usage") or {}
        yield UsageReport(
            input_tokens=int(usage.get("input_tokens", estimate_tokens(request))),
            output_tokens=int(usage.get("output_tokens", max(1, out_chars // 4))),
        )
        yield Finish(reply.get("finish") or ("tool_calls" if calls else "stop"))


def _text_chunks(reply: JsonObject) -> list[str] | Any:
    if "repeat" in reply:
        rep = reply["repeat"]
        return [str(rep["chunk"])] * int(rep["count"])
    if "chunks" in reply:
        return [str(c) for c in reply["chunks"]]
    text = str(reply.get("text", ""))
    size = int(reply.get("chunk_size", 0))
    if size > 0:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return _WORDS.findall(text)


def last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if isinstance(message, (UserMessage, CompactionSummary)):
            return "".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


def estimate_tokens(request: ModelRequest) -> int:
    # 4 characters a token, the usual rough rule; real providers report real numbers.
    chars = len(request.system) + len(request.dynamic_context)
    for message in request.messages:
        chars += len(json.dumps(message_to_json(for_model(message)), ensure_ascii=False))
    return max(1, chars // 4)


def validate_script(data: Any, source: str) -> None:
    def fail(where: str, problem: str) -> None:
        raise ScriptError(f"scripted provider: {source}: {where}: {problem}")

    if not isinstance(data, dict) or not isinstance(data.get("replies"), list) or not data["replies"]:
        fail("top level", 'expected an object with a non-empty "replies" list')
    for i, reply in enumerate(data["replies"]):
        where = f"replies[{i}]"
        if not isinstance(reply, dict):
            fail(where, "expected an object")
        unknown = set(reply) - _REPLY_KEYS
        if unknown:
            fail(where, f"unknown key(s) {sorted(unknown)}; known: {sorted(_REPLY_KEYS)}")
        when = reply.get("when", {})
        if not isinstance(when, dict) or set(when) - {"user", "step", "purpose"}:
            fail(where, '"when" takes {"user": regex, "step": n, "purpose": name}')
        if "purpose" in when and not (isinstance(when["purpose"], str) and when["purpose"]):
            fail(where, '"when.purpose" must be a non-empty string such as "compaction"')
        if "user" in when:
            try:
                re.compile(when["user"])
            except re.error as exc:
                fail(where, f'"when.user" is not a valid regex: {exc}')
        if reply.get("finish") is not None and reply["finish"] not in _FINISH:
            fail(where, f'"finish" must be one of {sorted(_FINISH)}')
        for j, call in enumerate(reply.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                fail(f"{where}.tool_calls[{j}]", 'expected {"name": ..., "arguments": {...}}')
