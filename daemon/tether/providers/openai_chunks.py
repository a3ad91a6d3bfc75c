"""Reading OpenAI chat-completion chunks into provider events, for one attempt.

Owns: the chunk walk of `openai.py`'s stream: deltas of text, thinking (`reasoning_content`,
`reasoning`, `<think>` tags) and tool calls assembled across the servers' quirks (an id and
name repeated in every delta, whole calls without `index`), the finish reason and usage.
Must not: make requests, retry, or read the environment (`openai.py` does the HTTP side).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from tether_protocol import JsonObject

from .base import (
    Finish,
    ProviderError,
    ProviderEvent,
    ToolCallEnd,
    ToolCallStart,
)
from .batch import Batch
from .lenient_json import lenient_json
from .messages_openai import (
    FINISH_REASONS,
    ThinkSplitter,
    in_band_error,
    usage_report,
)
from .sse import SSEEvent
from .text_shape import TextShape


@dataclass(slots=True)
class _Call:
    call_id: str
    server_id: str | None
    name: str = ""
    held_args: list[str] = field(default_factory=list)  # arguments seen before the name
    started: bool = False
    ended: bool = False


class ChunkParser:
    """Chat-completion chunks (JSON bytes) in, provider events out (in `out`), for one attempt."""

    def __init__(self, where: str, id_prefix: Callable[[], str]) -> None:
        self.where = where
        self.finish_reason = ""
        self.done = False  # [DONE] came: nothing after it counts
        self.usage: JsonObject | None = None
        self._id_prefix = id_prefix
        self._think = ThinkSplitter()
        self.out = Batch(self._think.feed)  # runs of content go through the <think> splitter
        self._shape = TextShape(b'"content":')
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._by_server_id: dict[str, _Call] = {}
        self._used_ids: set[str] = set()

    def feed_all(self, events: list[SSEEvent]) -> None:
        """The events of one read; stops at `[DONE]`.

        The hot path is a chunk whose only choice carries only content, no finish reason,
        usage or error: one orjson call, a few lookups and an append to the text run, or
        no parse at all when its bytes have the previous such chunk's shape (text_shape.py).
        Anything else takes `feed`, which checks every field.
        """
        shape = self._shape
        merged = shape.match_all(tuple(raw for _name, raw in events)) if shape.learnt else None
        if merged is not None:  # a read of deltas of the learnt shape only: no parse at all
            if merged:
                self.out.text(merged)
            return
        loads, run = orjson.loads, []  # run: content given to `out` in one piece
        for _name, raw in events:
            content = shape.match(raw)
            if content is None:
                try:
                    chunk = loads(raw)
                except orjson.JSONDecodeError:
                    chunk = None
                content = _plain_content(chunk)
                if content is not None:
                    shape.learn(raw, content)
            if content is not None:
                if content:
                    run.append(content)
                continue
            if run:
                self.out.text("".join(run))
                run.clear()
            if chunk is None:
                data = raw.strip()
                if data == b"[DONE]":
                    self.done = True
                    return
                if not data:
                    continue
            self.feed(raw, chunk)
        if run:
            self.out.text("".join(run))

    def feed(self, data: bytes, chunk: Any = None) -> None:
        """One chunk (`chunk`: its JSON, when orjson read it), every field checked."""
        if chunk is None:
            chunk = lenient_json(data, None)
        if type(chunk) is not dict:
            text = data.decode("utf-8", "replace").strip()
            raise ProviderError(f"{self.where}: the server sent a chunk that is not a JSON object: {text[:200]!r}")
        if chunk.get("error"):
            raise in_band_error(self.where, chunk)
        usage = chunk.get("usage")
        if usage is not None and isinstance(usage, dict):
            self.usage = usage
        for choice in chunk.get("choices") or ():
            # With n > 1 the other choices are alternatives nobody asked for.
            if isinstance(choice, dict) and (choice.get("index") or 0) == 0:
                self._choice(choice)

    def end(self) -> list[ProviderEvent]:
        self._close()
        reason = self.finish_reason or "stop"
        # Ollama and Gemini say "stop" even when the reply is tool calls.
        if reason == "stop" and self._calls:
            reason = "tool_calls"
        if self.usage is not None:
            self.out.add(usage_report(self.usage))
        self.out.add(Finish(reason))
        return self.out.take()

    def _choice(self, choice: JsonObject) -> None:
        delta = choice.get("delta")
        if delta and isinstance(delta, dict):
            out = self.out
            # Some servers send both spellings with the same text; take one.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                out.thinking(reasoning)
            content = delta.get("content")
            if content and isinstance(content, str):
                out.text(content)
            refusal = delta.get("refusal")
            if refusal and isinstance(refusal, str):
                out.text(refusal)
            calls = delta.get("tool_calls")
            if calls and isinstance(calls, list):
                for position, item in enumerate(calls):
                    if isinstance(item, dict):
                        self._tool_delta(item, position)
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = FINISH_REASONS.get(str(reason), "stop")
            self._close()

    def _tool_delta(self, item: JsonObject, position: int) -> None:
        raw_function = item.get("function")
        function: JsonObject = raw_function if isinstance(raw_function, dict) else {}
        server_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        args = function.get("arguments")
        if isinstance(args, dict):  # a few servers send the object itself
            args = json.dumps(args, ensure_ascii=False)
        call = self._locate(item.get("index"), server_id, bool(name), position)
        if name and not call.name:
            call.name = name  # set once: llama.cpp repeats the name in every delta
        out = self.out
        if call.name and not call.started:
            call.started = True
            out.add(ToolCallStart(call.call_id, call.name))
            if call.held_args:
                out.args(call.call_id, "".join(call.held_args))
                call.held_args.clear()
        if isinstance(args, str) and args:
            if call.started:
                out.args(call.call_id, args)
            else:
                call.held_args.append(args)

    def _locate(self, index: Any, server_id: str | None, named: bool, position: int) -> _Call:
        if isinstance(index, int) and not isinstance(index, bool):
            call = self._by_index.get(index)
            # Some servers number every parallel call 0: a different id *with a name*
            # starts a new call (a new id alone may be a server minting one per delta).
            if call is None or (named and server_id and call.server_id and server_id != call.server_id):
                call = self._new(server_id, index)
            return call
        if server_id:
            return self._by_server_id.get(server_id) or self._new(server_id, len(self._calls))
        return self._by_index.get(position) or self._new(None, position)

    def _new(self, server_id: str | None, key: int) -> _Call:
        # The server's id unless it reused one (then ours, so ids stay unique).
        call_id = server_id if server_id and server_id not in self._used_ids else None
        number = len(self._calls)
        while call_id is None or call_id in self._used_ids:
            number += 1
            call_id = f"{self._id_prefix()}_{number}"
        call = _Call(call_id, server_id)
        self._used_ids.add(call_id)
        self._calls.append(call)
        self._by_index[key] = call
        if server_id:
            self._by_server_id.setdefault(server_id, call)
        return call

    def _close(self) -> None:
        """The choice is over: release held-back text and end every call."""
        out = self.out
        out.close_run()  # the run of content goes through the splitter before its flush
        out.extend(self._think.flush())
        for call in self._calls:
            if call.ended:
                continue
            if not call.started:
                # Arguments without a name: surface it (the loop reports an unknown
                # tool to the model) rather than dropping what the model asked for.
                call.started = True
                out.add(ToolCallStart(call.call_id, call.name))
                if call.held_args:
                    out.args(call.call_id, "".join(call.held_args))
            call.ended = True
            out.add(ToolCallEnd(call.call_id))


def _plain_content(chunk: Any) -> str | None:
    """The content of a chunk whose only choice (index 0) carries only content, no finish
    reason, usage or error; None for any other chunk."""
    if type(chunk) is not dict:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or chunk.get("usage") is not None or chunk.get("error"):
        return None
    choice = choices[0]
    delta = choice.get("delta") if type(choice) is dict else None
    if type(delta) is not dict or len(delta) != 1 or choice.get("finish_reason") or choice.get("index"):
        return None
    content = delta.get("content")
    return content if type(content) is str else None
