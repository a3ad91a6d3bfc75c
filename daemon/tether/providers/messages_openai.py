"""The OpenAI chat-completions wire format, without I/O: history out, `<think>` text in.

Owns: the typed conversation as `messages`, tool specs as `tools`, context-window defaults, `reasoning_effort`
models; back in, `ThinkSplitter`, finish-reason and usage mapping, in-band errors, missing call ids.
Must not: do HTTP, read the environment, add anything that varies between two calls with the same history
(step N's messages are a prefix of step N+1's), or send thinking back (decision 0005).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from tether_protocol.conversation import (
    AssistantMessage,
    CompactionSummary,
    JsonObject,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    blocks_text,
)

from .base import ProviderError, TextDelta, ThinkingDelta, UsageReport
from .http import in_band_error_text

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Longest prefix wins; matched on the last path segment so "openai/gpt-4o" (OpenRouter)
# finds "gpt-4o". Local servers decide their own window at load time, so these are
# only a starting point; the constructor's `context_window` overrides them.
_CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "llama": 8_192,
}
DEFAULT_CONTEXT_WINDOW = 32_768

# Models that take `reasoning_effort` (OpenAI's reasoning models); others refuse the field.
_REASONING_MODEL = re.compile(r"(o[1-9]|gpt-5)([-.:]|\Z)")
REASONING_EFFORTS: tuple[str, ...] = ("low", "medium", "high")

_ERROR_WORD = re.compile(r"\s*(error|failed|failure|exception|traceback)\b", re.IGNORECASE)


def context_window_for(model: str) -> int:
    name = model.rsplit("/", 1)[-1].lower()
    best = ""
    for prefix in _CONTEXT_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return _CONTEXT_WINDOWS[best] if best else DEFAULT_CONTEXT_WINDOW


def takes_reasoning_effort(model: str, patterns: Sequence[str] = ()) -> bool:
    """Whether ``model`` takes `reasoning_effort`: an OpenAI reasoning model (also behind a
    router prefix, "openai/o3"), or one of the user's `reasoning_models` patterns."""
    name = model.rsplit("/", 1)[-1].lower()
    return bool(_REASONING_MODEL.match(name)) or any(fnmatch.fnmatchcase(model, p) for p in patterns)


def reasoning_fields(reasoning: str) -> JsonObject:
    """The body fields of a session's reasoning choice: `reasoning_effort` for low, medium
    and high; nothing for the provider's default. The daemon offers the choice only for a
    model that takes it (`takes_reasoning_effort`)."""
    return {"reasoning_effort": reasoning} if reasoning in REASONING_EFFORTS else {}


def build_tools(tools: list[JsonObject]) -> list[JsonObject]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def build_messages(system: str, dynamic_context: str, history: Sequence[Message]) -> list[JsonObject]:
    """Chat-completions messages for a system prompt and a conversation, in order."""
    out: list[JsonObject] = []
    system_text = "\n\n".join(part for part in (system, dynamic_context) if part)
    if system_text:
        out.append({"role": "system", "content": system_text})
    for message in history:
        if isinstance(message, (UserMessage, CompactionSummary)):
            # Images and audio need a vision/audio model and another content shape: the
            # text says what was left out rather than dropping it silently.
            out.append({"role": "user", "content": blocks_text(message.content)})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message))
        elif isinstance(message, ToolResultMessage):
            out.append(_tool_result(message))
        # System messages (none are stored today) have no place after the system prompt.
    return out


def _assistant(message: AssistantMessage) -> JsonObject:
    text, calls = message.text, message.tool_calls
    out: JsonObject = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}
            for call in calls
        ]
    return out


def _arguments(call: ToolCall) -> str:
    # What the model wrote when it was not valid JSON: it sees its own mistake, and the
    # tool result explaining it, rather than an empty object it never produced.
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _tool_result(message: ToolResultMessage) -> JsonObject:
    content = message.content
    if message.is_error and not _ERROR_WORD.match(content):
        # Chat completions has no error flag on tool results; the text must say it.
        content = f"Error: {content}"
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}


_OPEN, _CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Splits streamed content into thinking (inside `<think>...</think>`) and text.

    Only a `<think>` at the very start of the content (after whitespace) opens a block:
    local reasoning models put it there, and a model merely *mentioning* the tag later
    in its answer must not have the rest of the answer hidden. Tags may arrive split
    across chunks, so a possible partial tag at the end of a chunk is held back.
    """

    def __init__(self) -> None:
        # start: nothing visible yet; think_lead/text_lead: drop whitespace after a tag
        self._mode = "start"
        self._held = ""

    def feed(self, text: str) -> list[TextDelta | ThinkingDelta]:
        out: list[TextDelta | ThinkingDelta] = []
        buf, self._held = self._held + text, ""
        while buf:
            mode = self._mode
            if mode == "start":
                stripped = buf.lstrip()
                if stripped.startswith(_OPEN):
                    buf, self._mode = stripped[len(_OPEN) :], "think_lead"
                elif not stripped or _OPEN.startswith(stripped):
                    self._held = buf  # whitespace or a partial "<thi": wait for more
                    return out
                else:
                    self._mode = "text"
            elif mode in ("think_lead", "text_lead"):
                buf = buf.lstrip()
                if buf:
                    self._mode = mode[:-5]
            elif mode == "think":
                at = buf.find(_CLOSE)
                if at >= 0:
                    _append(out, ThinkingDelta, buf[:at])
                    buf, self._mode = buf[at + len(_CLOSE) :], "text_lead"
                    continue
                keep = _partial_suffix(buf, _CLOSE)
                _append(out, ThinkingDelta, buf[: len(buf) - keep])
                self._held = buf[len(buf) - keep :]
                return out
            else:
                _append(out, TextDelta, buf)
                return out
        return out

    def flush(self) -> list[TextDelta | ThinkingDelta]:
        """What is still held back, at the end of the content."""
        held, self._held = self._held, ""
        out: list[TextDelta | ThinkingDelta] = []
        _append(out, ThinkingDelta if self._mode == "think" else TextDelta, held)
        return out


def _append(out: list[TextDelta | ThinkingDelta], kind: type, text: str) -> None:
    if text:
        out.append(kind(text))


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


# ---- reading the stream -----------------------------------------------------------

FINISH_REASONS = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "refusal",
}
_OVERLOAD_MARKERS = ("overload", "rate limit", "rate_limit", "503", "529")


def in_band_error(where: str, chunk: JsonObject) -> ProviderError:
    message, code = in_band_error_text(chunk)
    lowered = json.dumps(chunk.get("error")).lower()
    if "context_length" in lowered or "context length" in lowered or "maximum context" in lowered:
        return ProviderError(f"{where}: the conversation is too long for the model: {message}", kind="context_length")
    overloaded = any(marker in lowered for marker in _OVERLOAD_MARKERS)
    return ProviderError(
        f"{where} reported an error mid-stream: {message}" + (f" ({code})" if code else ""),
        kind="overloaded" if overloaded else "server",
        retryable=overloaded,
    )


def usage_report(usage: JsonObject) -> UsageReport:
    def number(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    details = usage.get("prompt_tokens_details")
    cached = number(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return UsageReport(
        input_tokens=number(usage.get("prompt_tokens")),
        output_tokens=number(usage.get("completion_tokens")),
        # DeepSeek reports cache hits under its own name.
        cached_tokens=cached or number(usage.get("prompt_cache_hit_tokens")),
    )


def generated_id_prefix(messages: list[JsonObject]) -> Callable[[], str]:
    """Ids for calls the server sent without one: deterministic (so replays and prompt
    caches match) yet distinct between steps and turns (the editor keys tool calls by
    id for the whole session), hence derived from the history, computed only if needed."""
    cache: list[str] = []

    def prefix() -> str:
        if not cache:
            raw = json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
            cache.append("call_" + hashlib.sha256(raw.encode()).hexdigest()[:8])
        return cache[0]

    return prefix
