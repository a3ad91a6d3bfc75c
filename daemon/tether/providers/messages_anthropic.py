"""Tether history -> the JSON body of Anthropic's `POST /v1/messages`.

Owns: converting a `ModelRequest` into a Messages API body: the typed conversation as turns, tool specs,
prompt-caching breakpoints, the per-model `max_tokens` default, and extended thinking (budget or reasoning).
Must not: do I/O, read the clock, or reorder anything: for the same history prefix the body is byte-identical
but for the one moving cache breakpoint (`strip_moving_breakpoint`; decision 0005).
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING

from tether_protocol.conversation import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    JsonObject,
    Message,
    RedactedThinking,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    block_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .base import ModelRequest

DEFAULT_MAX_TOKENS = 8192
# Output limits by model family, first match wins. Values are at or below each family's
# documented maximum so no model rejects them; unknown models (proxies, new names) get
# DEFAULT_MAX_TOKENS, which every Claude model since 3.5 accepts.
_MAX_TOKENS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"claude-(opus|sonnet|haiku)-4"), 32_000),
    (re.compile(r"claude-3-7-sonnet"), 32_000),
    (re.compile(r"claude-3-5-"), 8192),
    (re.compile(r"claude-3-"), 4096),
)
# budget_tokens must be below max_tokens; when a configured budget does not fit, room
# for this many answer tokens is added on top of it rather than failing the request.
_ANSWER_ROOM = 4096


# Models with extended thinking: Claude 3.7 Sonnet and the Claude 4 families on.
_THINKING_MODEL = re.compile(r"claude-(3-7-|(opus|sonnet|haiku)-[4-9]|[4-9])")
# The session's thinking choice → budget_tokens (1024 is the API's minimum; "high" leaves
# room for the answer under the 32k output limit of the Claude 4 models).
THINKING_BUDGETS: dict[str, int] = {"off": 0, "low": 4_000, "medium": 10_000, "high": 24_000}


def takes_thinking(model: str) -> bool:
    return bool(_THINKING_MODEL.search(model))


def default_max_tokens(model: str) -> int:
    for pattern, limit in _MAX_TOKENS:
        if pattern.search(model):
            return limit
    return DEFAULT_MAX_TOKENS


def _ephemeral() -> dict[str, str]:
    # A fresh dict each time, so no caller can mutate a shared marker.
    return {"type": "ephemeral"}


def build_body(
    request: ModelRequest, *, model: str, max_output_tokens: int = 0, thinking_budget: int = 0
) -> JsonObject:
    if request.reasoning in THINKING_BUDGETS:  # the session chose: it wins over the provider's budget
        thinking_budget = THINKING_BUDGETS[request.reasoning]
    max_tokens = max_output_tokens or default_max_tokens(model)
    if thinking_budget > 0 and max_tokens <= thinking_budget:
        max_tokens = thinking_budget + _ANSWER_ROOM
    system = system_blocks(request.system, request.dynamic_context)
    tools = tool_specs(request.tools)
    # The stable-prefix breakpoint. The cache prefix is rendered tools → system →
    # messages, so a breakpoint on the stable system block covers the tools too; only
    # without a stable system text does it go on the last tool.
    if request.system:
        system[0]["cache_control"] = _ephemeral()
    elif tools:
        tools[-1]["cache_control"] = _ephemeral()
    messages = convert_messages(request.messages)
    mark_latest(messages)
    body: JsonObject = {"model": model, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    body["messages"] = messages
    if tools:
        body["tools"] = tools
    if thinking_budget > 0:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    body["stream"] = True
    return body


def system_blocks(system: str, dynamic_context: str) -> list[JsonObject]:
    # Two blocks, stable first, so the changing part sits after the cached prefix.
    # Empty text blocks are rejected by the API, so empty parts are left out.
    return [{"type": "text", "text": t} for t in (system, dynamic_context) if t]


def tool_specs(tools: list[JsonObject]) -> list[JsonObject]:
    out = []
    for tool in tools:
        schema = tool.get("input_schema") or tool.get("parameters") or {"type": "object"}
        out.append({"name": tool["name"], "description": tool.get("description", ""), "input_schema": schema})
    return out


def convert_messages(messages: Sequence[Message]) -> list[JsonObject]:
    """The conversation → Anthropic messages, merging same-role neighbours.

    The API requires user/assistant alternation, and every tool result of a step must
    come back in the one user message after the assistant's tool_use blocks, before any
    text; merging consecutive same-role messages gives both (tool results, then the
    next prompt's blocks). Assistant messages with no sendable content are dropped
    (empty content is rejected) and their neighbours merge.
    """
    out: list[JsonObject] = []
    for message in messages:
        role = "user"
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", assistant_blocks(message)
            if not blocks:
                continue
        elif isinstance(message, ToolResultMessage):
            blocks = [tool_result_block(message)]
        elif isinstance(message, SystemMessage):
            blocks = user_blocks((TextBlock(message.content),))
        else:
            blocks = user_blocks(message.content)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def user_blocks(content: Sequence[ContentBlock]) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for block in content:
        if isinstance(block, ImageBlock) and block.data:
            source = {"type": "base64", "media_type": block.mime_type or "image/png", "data": block.data}
            blocks.append({"type": "image", "source": source})
        elif not isinstance(block, TextBlock) or block.text:  # empty text blocks are refused
            blocks.append({"type": "text", "text": block_text(block)})
    # An empty user message is rejected by the API; say so rather than drop the turn.
    return blocks or [{"type": "text", "text": "(empty message)"}]


def assistant_blocks(message: AssistantMessage) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    # The API verifies the signature and rejects unsigned thinking, so thinking without
    # one (a cancelled step, another provider's reasoning) is left out. Steps recorded
    # with their blocks send every block back in order, redacted ones included.
    if message.thinking_blocks:
        for block in message.thinking_blocks:
            if isinstance(block, RedactedThinking):
                blocks.append({"type": "redacted_thinking", "data": block.data})
            elif block.signature:
                blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
    elif message.thinking_signature:
        blocks.append({"type": "thinking", "thinking": message.thinking or "", "signature": message.thinking_signature})
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def tool_result_block(message: ToolResultMessage) -> JsonObject:
    block: JsonObject = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.content:  # content is optional; an empty string is left out rather than risked
        block["content"] = message.content
    if message.is_error:
        block["is_error"] = True
    return block


def mark_latest(messages: list[JsonObject]) -> None:
    """Put the moving cache breakpoint on the latest message's last cacheable block."""
    if not messages:
        return
    blocks = messages[-1]["content"]
    for i in range(len(blocks) - 1, -1, -1):
        # Thinking blocks cannot carry cache_control.
        if blocks[i].get("type") not in ("thinking", "redacted_thinking"):
            blocks[i] = {**blocks[i], "cache_control": _ephemeral()}
            return


def strip_moving_breakpoint(body: JsonObject) -> JsonObject:
    """A copy of `body` without the latest message's breakpoint (for stability checks)."""
    body = copy.deepcopy(body)
    if body.get("messages"):
        for block in body["messages"][-1]["content"]:
            block.pop("cache_control", None)
    return body
