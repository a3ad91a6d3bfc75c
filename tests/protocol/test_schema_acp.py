"""The generated schema against ACP's own v1 schema: property names, required fields,
tags and enumeration values (`acp-v1-schema.json`, see README.md here)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from tether_protocol import build_schema

ACP_SCHEMA_PATH = Path(__file__).resolve().parent / "acp-v1-schema.json"


@functools.cache
def _schema() -> dict[str, Any]:
    return build_schema()


# ---- against ACP v1 ----------------------------------------------------------------------

# (ours, ACP's, direction, property names ACP keeps elsewhere or that are not ACP's).
# "in": a client sends it (we must not require more than ACP does);
# "out": the daemon sends it (we must send everything ACP requires).
ACP_COUNTERPARTS: list[tuple[str, str, str, frozenset[str]]] = [
    ("ToolCall", "ToolCall", "out", frozenset({"sessionUpdate"})),
    ("ToolCallUpdate", "ToolCallUpdate", "out", frozenset({"sessionUpdate"})),
    ("UsageUpdate", "UsageUpdate", "out", frozenset({"sessionUpdate"})),
    ("SessionInfoUpdate", "SessionInfoUpdate", "out", frozenset({"sessionUpdate"})),
    ("CurrentModeUpdate", "CurrentModeUpdate", "out", frozenset({"sessionUpdate"})),
    ("Plan", "Plan", "out", frozenset({"sessionUpdate"})),
    ("AgentMessageChunk", "ContentChunk", "out", frozenset({"sessionUpdate"})),
    ("AgentThoughtChunk", "ContentChunk", "out", frozenset({"sessionUpdate"})),
    ("UserMessageChunk", "ContentChunk", "out", frozenset({"sessionUpdate"})),
    ("SessionNotification", "SessionNotification", "out", frozenset()),
    ("PlanEntry", "PlanEntry", "out", frozenset()),
    ("ToolCallLocation", "ToolCallLocation", "out", frozenset()),
    ("ToolCallContentBlock", "Content", "out", frozenset({"type"})),
    ("TextContent", "TextContent", "out", frozenset({"type"})),
    ("ResourceLink", "ResourceLink", "in", frozenset({"type"})),
    ("EmbeddedResource", "EmbeddedResource", "in", frozenset({"type"})),
    ("TextResource", "TextResourceContents", "in", frozenset()),
    ("PromptParams", "PromptRequest", "in", frozenset({"idempotencyKey"})),  # v2 (RFD), read on v1 too (SPEC §12.5)
    ("PromptResult", "PromptResponse", "out", frozenset()),
    ("NewSessionParams", "NewSessionRequest", "in", frozenset()),
    ("NewSessionResult", "NewSessionResponse", "out", frozenset()),
    ("LoadSessionParams", "LoadSessionRequest", "in", frozenset()),
    ("LoadSessionParams", "ResumeSessionRequest", "in", frozenset()),
    ("LoadSessionResult", "LoadSessionResponse", "out", frozenset()),
    ("ListSessionsParams", "ListSessionsRequest", "in", frozenset()),
    ("ListSessionsResult", "ListSessionsResponse", "out", frozenset()),
    ("SessionInfo", "SessionInfo", "out", frozenset()),
    ("SetModeParams", "SetSessionModeRequest", "in", frozenset()),
    ("SessionIdParams", "CancelNotification", "in", frozenset()),
    ("SessionIdParams", "CloseSessionRequest", "in", frozenset()),
    ("SessionMode", "SessionMode", "out", frozenset()),
    ("SessionModeState", "SessionModeState", "out", frozenset()),
    ("Implementation", "Implementation", "out", frozenset()),
    ("ClientCapabilities", "ClientCapabilities", "in", frozenset()),
    ("FileSystemCapabilities", "FileSystemCapabilities", "in", frozenset()),
    ("AgentCapabilities", "AgentCapabilities", "out", frozenset()),
    ("PromptCapabilities", "PromptCapabilities", "out", frozenset()),
    ("McpCapabilities", "McpCapabilities", "out", frozenset()),
    ("SessionCapabilities", "SessionCapabilities", "out", frozenset()),
    # initialize serves ACP and LSP clients at once: the LSP keys are not ACP's
    ("InitializeResult", "InitializeResponse", "out", frozenset({"capabilities", "serverInfo"})),
    ("RequestPermissionParams", "RequestPermissionRequest", "out", frozenset()),
    ("PermissionToolCall", "ToolCallUpdate", "out", frozenset()),
    ("PermissionOption", "PermissionOption", "out", frozenset()),
    ("RequestPermissionResult", "RequestPermissionResponse", "in", frozenset()),
    ("SelectedOutcome", "SelectedPermissionOutcome", "in", frozenset({"outcome"})),
    ("ReadTextFileParams", "ReadTextFileRequest", "out", frozenset()),
    ("ReadTextFileResult", "ReadTextFileResponse", "in", frozenset()),
    ("WriteTextFileParams", "WriteTextFileRequest", "out", frozenset()),
    ("DiffContent", "Diff", "out", frozenset({"type"})),
    ("TerminalContent", "Terminal", "out", frozenset({"type"})),
    ("CancelRequestParams", "CancelRequestNotification", "in", frozenset({"id"})),
    ("InitializeParams", "InitializeRequest", "in", frozenset(
        {"processId", "rootUri", "rootPath", "workspaceFolders", "capabilities",
         "initializationOptions", "info"})),  # `info`: ACP v2's clientInfo
]


@functools.cache
def _acp_defs() -> dict[str, Any]:
    assert ACP_SCHEMA_PATH.is_file(), f"{ACP_SCHEMA_PATH} is missing (see README.md there)"
    defs: dict[str, Any] = json.loads(ACP_SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    return defs


def _acp_consts(definition: dict[str, Any], prop: str | None = None) -> set[Any]:
    variants = definition["oneOf"]
    if prop is None:
        return {v["const"] for v in variants}
    return {v["properties"][prop]["const"] for v in variants}


@pytest.mark.parametrize(
    ("ours", "acp", "direction", "not_acp"),
    [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in ACP_COUNTERPARTS],
)
def test_properties_are_acp_properties(
    ours: str, acp: str, direction: str, not_acp: frozenset[str]
) -> None:
    mine = _schema()["$defs"][ours]
    theirs = _acp_defs()[acp]
    names = set(mine["properties"])
    assert not_acp <= names, f"stale exemption: {sorted(not_acp - names)}"
    assert sorted(names - not_acp - set(theirs["properties"])) == []
    assert not (not_acp & set(theirs["properties"])), "exempted a name ACP does have"

    # a tag (one value; ACP requires it in its union, msgspec in the member too) is always sent
    tags = {k for k, v in mine["properties"].items() if len(v.get("enum", ())) == 1}
    our_required = set(mine.get("required", [])) - tags
    acp_required = set(theirs.get("required", []))
    if direction == "in":
        assert sorted(our_required - acp_required) == [], "we require what ACP makes optional"
    else:
        always_sent = our_required | {
            k for k, v in mine["properties"].items() if "default" in v
        }
        assert sorted(acp_required - always_sent) == [], "ACP requires what we may omit"


def test_initialize_result_has_the_acp_keys() -> None:
    mine = set(_schema()["$defs"]["InitializeResult"]["properties"])
    acp_keys = {"protocolVersion", "agentCapabilities", "agentInfo", "authMethods"}
    assert acp_keys <= mine
    assert acp_keys <= set(_acp_defs()["InitializeResponse"]["properties"])


def test_tags_and_enums_are_acp_values() -> None:
    defs, acp = _schema()["$defs"], _acp_defs()
    for ours, theirs, tag in [
        ("SessionUpdate", "SessionUpdate", "sessionUpdate"),
        ("ContentBlock", "ContentBlock", "type"),
    ]:
        our_tags = {
            defs[v["$ref"].removeprefix("#/$defs/")]["properties"][tag]["enum"][0]
            for v in defs[ours]["anyOf"]
        }
        assert our_tags <= _acp_consts(acp[theirs], tag), ours
    tool_content = {
        defs[v["$ref"].removeprefix("#/$defs/")]["properties"]["type"]["enum"][0]
        for v in defs["ToolCallContent"]["anyOf"]
    }
    assert tool_content == {"content", "diff", "terminal"}
    assert tool_content <= _acp_consts(acp["ToolCallContent"], "type")
    for ours, theirs in [
        ("StopReason", "StopReason"),
        ("ToolKind", "ToolKind"),
        ("ToolCallStatus", "ToolCallStatus"),
    ]:
        assert set(defs[ours]["enum"]) <= _acp_consts(acp[theirs]), ours
    assert set(defs["PlanEntryPriority"]["enum"]) <= _acp_consts(acp["PlanEntryPriority"])
    assert set(defs["PlanEntryStatus"]["enum"]) <= _acp_consts(acp["PlanEntryStatus"])
    assert set(defs["PermissionOptionKind"]["enum"]) <= _acp_consts(acp["PermissionOptionKind"])
