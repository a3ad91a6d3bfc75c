"""An MCP server's tool as a Tether tool: `mcp__<server>__<tool>`.

Owns: the model-facing name, the server's input schema (checked) and argument validation against it, the
approval's title and text, `readOnlyHint` as a read, the call with its timeout, and its result (capped
text for the model, content blocks for the client).
Must not: decide approvals, or keep connections (`connection.py`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import mcp_types as types

from tether_protocol import JsonObject
from tether_protocol.conversation import (
    AudioBlock,
    ContentBlock,
    EmbeddedResource,
    ImageBlock,
    ResourceContents,
    ResourceLink,
    block_to_json,
)

from ..tools.args import ArgError, JsonSchema
from ..tools.base import Tool, ToolContext, ToolError, ToolLocation, ToolResult
from ..tools.command_output import HeadTail

if TYPE_CHECKING:
    from ..tools.sandbox import WorkspaceSandbox
    from .connection import McpConnection

PREFIX = "mcp__"
OUTPUT_HEAD = OUTPUT_TAIL = 8 * 1024  # bytes of text the model gets from each end (as run_command)
MAX_SHOWN_DATA = 2 * 1024 * 1024  # base64 characters of images/blobs shown to the client per call
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` with what providers refuse in a name replaced, at most 64."""
    return f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"[:64]


def schema_problem(schema: object) -> str:
    """Why ``schema`` cannot be given to the model ("" when it can)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its input schema is not a JSON Schema of type "object"'
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not valid JSON Schema ({exc.message})"
    return ""


class McpTool(Tool[JsonObject]):
    """One server tool; `make_tool` builds a subclass per tool (its name is a ClassVar)."""

    args_type: type[JsonObject] = dict
    kind: ClassVar[str] = "other"
    cancellable: ClassVar[bool] = True  # cancelled, the request is cancelled at the server

    def __init__(self, connection: McpConnection, tool: types.Tool) -> None:
        self.connection, self.tool = connection, tool

    @property
    def server(self) -> str:
        return self.connection.config.name

    @property
    def input_schema(self) -> JsonSchema:
        return dict(self.tool.input_schema)

    def parse(self, raw: object) -> JsonObject:
        if not isinstance(raw, Mapping):
            raise ArgError(f"arguments must be a JSON object, got {type(raw).__name__}")
        from jsonschema import Draft202012Validator

        errors = sorted(Draft202012Validator(self.input_schema).iter_errors(dict(raw)), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path)
            raise ArgError(f"{where + ': ' if where else ''}{errors[0].message} (the tool's input schema)")
        return dict(raw)

    def salvage(self, raw: object) -> JsonObject | None:
        return dict(raw) if isinstance(raw, Mapping) else None

    def title(self, args: JsonObject) -> str:
        return f"{self.server}: {self.tool.title or self.tool.name}"

    def locations(self, args: JsonObject, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        return []

    def dump(self, args: JsonObject) -> JsonObject:
        return dict(args)

    def approval_text(self, args: JsonObject) -> str:
        shown = json.dumps(args, indent=2, ensure_ascii=False)
        return f"MCP server: {self.server}\ntool: {self.tool.name}\narguments: {shown}"

    async def run(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        timeout = self.connection.config.tool_timeout_s
        result = await self.connection.call(self.tool.name, args, timeout, ctx.elicit)
        return convert_result(result)


def make_tool(connection: McpConnection, tool: types.Tool) -> McpTool:
    annotations = tool.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    name = tool_name(connection.config.name, tool.name)
    description = tool.description or tool.title or tool.name
    cls = type(
        f"McpTool_{name}",
        (McpTool,),
        {"name": name, "description": f"[MCP server {connection.config.name}] {description}", "read_only": read_only},
    )
    made: McpTool = cls(connection, tool)
    return made


def convert_result(result: types.CallToolResult) -> ToolResult:
    """What the model reads (capped) and what the client is shown of a call's result."""
    texts: list[str] = []
    blocks: list[ContentBlock] = []
    budget = MAX_SHOWN_DATA
    for item in result.content:
        text, block = _item(item)
        texts.append(text)
        size = len(json.dumps(block_to_json(block))) if block is not None else 0
        if block is not None and size <= budget:
            blocks.append(block)
            budget -= size
        elif block is not None:
            texts.append("[not shown to the user: over the size shown per call]")
    if result.structured_content is not None and not any(isinstance(i, types.TextContent) for i in result.content):
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    capped = HeadTail(OUTPUT_HEAD, OUTPUT_TAIL)
    capped.feed("\n".join(texts).encode("utf-8", "replace"))
    return ToolResult(capped.render() or "(no output)", is_error=bool(result.is_error), blocks=tuple(blocks))


def _item(item: object) -> tuple[str, ContentBlock | None]:
    """The model's text of one MCP content item and the block the client is shown (None:
    text only). The blocks keep the fields ACP clients have always been sent: `data` and
    `mimeType` of images and audio; `uri`, `name`, `mimeType` and `description` of links;
    `uri`, `mimeType` and `text` or `blob` of embedded resources."""
    if isinstance(item, types.TextContent):
        return item.text, None
    if isinstance(item, types.ImageContent):
        return _media("image", item.data, item.mime_type), ImageBlock(item.data, item.mime_type)
    if isinstance(item, types.AudioContent):
        return _media("audio", item.data, item.mime_type), AudioBlock(item.data, item.mime_type)
    if isinstance(item, types.ResourceLink):
        extra: JsonObject = {"description": item.description} if item.description else {}
        link = ResourceLink(item.uri, item.name, item.mime_type or None, extra)
        return f"[resource link: {item.name} <{item.uri}>]", link
    if isinstance(item, types.EmbeddedResource):
        return _resource(item.resource)
    return f"[{getattr(item, 'type', 'unknown')} content]", None


def _media(what: str, data: str, mime_type: str) -> str:
    return f"[{what} {mime_type}, {len(data) * 3 // 4} bytes: shown to the user]"


def _resource(resource: types.TextResourceContents | types.BlobResourceContents) -> tuple[str, EmbeddedResource]:
    uri, mime_type = str(resource.uri), resource.mime_type or None
    if isinstance(resource, types.TextResourceContents):
        shown = ResourceContents(uri, text=resource.text, mime_type=mime_type)
        return f"[resource {uri}]\n{resource.text}", EmbeddedResource(shown)
    blob = resource.blob
    shown = ResourceContents(uri, blob=blob, mime_type=mime_type)
    return f"[resource {uri}: {resource.mime_type or 'binary'}, {len(blob) * 3 // 4} bytes]", EmbeddedResource(shown)


def is_mcp_tool(name: str) -> bool:
    return name.startswith(PREFIX)


__all__ = ["McpTool", "ToolError", "convert_result", "is_mcp_tool", "make_tool", "schema_problem", "tool_name"]
