"""The generated JSON Schema: fresh, self-consistent, true to the converter, close to ACP.

`test_committed_schema_is_up_to_date` is the one that fails when a message class changes
and `protocol/schema.json` was not regenerated (`python -m tether_protocol.schema`).
"""

from __future__ import annotations

import copy
import functools
import json
import typing
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest
from jsonschema import Draft202012Validator
from tether_protocol import _errors, _messages
from tether_protocol._converter import structure, unstructure
from tether_protocol._fields import SCHEMA
from tether_protocol._schema import GENERATED_COMMENT, build_schema
from tether_protocol.schema import DEFAULT_PATH, main, render

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE.parents[1] / "protocol" / "schema.json"
ACP_SCHEMA_PATH = HERE / "acp-v1-schema.json"
STALE = "protocol/schema.json is stale; run python -m tether_protocol.schema"


@functools.cache
def _schema() -> dict[str, Any]:
    return build_schema()


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    schema = _schema()
    assert name in schema["$defs"], f"no $defs entry {name!r}"
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    )


def _errors_of(name: str, message: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in _validator(name).iter_errors(message)
    ]


def _refs(node: Any) -> typing.Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _message_classes() -> dict[str, type]:
    return {
        name: value
        for name, value in vars(_messages).items()
        if isinstance(value, type) and attrs.has(value) and value.__name__ == name
    }


# ---- the committed file --------------------------------------------------------------


def test_committed_schema_is_up_to_date() -> None:
    assert SCHEMA_PATH == DEFAULT_PATH
    assert SCHEMA_PATH.is_file(), STALE + " (the file is missing)"
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert json.loads(text) == build_schema(), STALE
    assert text == render(), STALE + " (same content, different formatting)"


def test_check_flag_reports_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "schema.json"
    assert main(["--check", "--output", str(target)]) == 1
    assert "is stale (missing); run python -m tether_protocol.schema" in capsys.readouterr().err

    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render()
    assert main(["--check", "--output", str(target)]) == 0

    target.write_text(render().replace('"title": "ToolCall"', '"title": "Edited"'))
    assert main(["--check", "--output", str(target)]) == 1
    assert "is stale; run python -m tether_protocol.schema" in capsys.readouterr().err


def test_build_schema_is_deterministic_and_fresh() -> None:
    first = build_schema()
    snapshot = copy.deepcopy(first)
    first["$defs"].clear()
    assert build_schema() == snapshot
    assert render() == render()
    assert snapshot["$comment"] == GENERATED_COMMENT
    assert render().isascii()


# ---- self-consistency ------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = _schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_ref_resolves() -> None:
    schema = _schema()
    refs = set(_refs(schema))
    assert refs, "the schema has no $ref at all"
    for ref in sorted(refs):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in schema["$defs"], f"dangling {ref}"


def test_every_def_is_reachable_from_a_method() -> None:
    schema = _schema()
    defs = schema["$defs"]
    seen: set[str] = set()
    todo = [r.removeprefix("#/$defs/") for r in _refs(schema["x-tether-methods"])]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(r.removeprefix("#/$defs/") for r in _refs(defs[name]))
    assert sorted(set(defs) - seen) == [], "defined but used by no method (missing from a method table?)"


def test_every_message_class_has_a_def() -> None:
    defs = _schema()["$defs"]
    for name, cls in _message_classes().items():
        entry = defs[name]
        assert entry["title"] == name
        assert entry["type"] == "object"
        fields = attrs.fields(cls)
        assert len(entry["properties"]) == len(fields), name
        required = [f for f in fields if f.default is attrs.NOTHING]
        assert len(entry.get("required", [])) == len(required), name
    # aliases point at the real class rather than duplicating it
    assert "ResumeSessionParams" not in defs
    assert defs["ToolCallContentBlock"]["description"].startswith("`{")
    assert "_meta" in defs["PromptParams"]["properties"]
    assert "meta" not in defs["PromptParams"]["properties"]


def test_tagged_unions_are_one_of_refs_with_the_tag_required() -> None:
    defs = _schema()["$defs"]
    for name, tag, members in [
        ("ContentBlock", "type", _messages.ContentBlock),
        ("SessionUpdate", "sessionUpdate", _messages.SessionUpdate),
    ]:
        variants = defs[name]["oneOf"]
        assert [v["$ref"] for v in variants] == [
            f"#/$defs/{m.__name__}" for m in typing.get_args(members)
        ]
        assert all(v["required"] == [tag] for v in variants)
        assert defs[name]["discriminator"] == {"propertyName": tag}


def test_method_table() -> None:
    methods = _schema()["x-tether-methods"]
    expected = (
        set(_messages.CLIENT_REQUESTS)
        | set(_messages.CLIENT_NOTIFICATIONS)
        | set(_messages.AGENT_REQUESTS)
        | set(_messages.AGENT_NOTIFICATIONS)
    )
    assert set(methods) == expected == set(_messages.METHODS)
    assert methods["session/prompt"] == {
        "direction": "client->agent",
        "kind": "request",
        "extension": False,
        "params": {"$ref": "#/$defs/PromptParams"},
        "result": {"$ref": "#/$defs/PromptResult"},
    }
    assert methods["session/update"] == {
        "direction": "agent->client",
        "kind": "notification",
        "extension": False,
        "params": {"$ref": "#/$defs/SessionNotification"},
        "result": None,
    }
    assert methods["session/request_permission"] == {
        "direction": "agent->client",
        "kind": "request",
        "extension": False,
        "params": {"$ref": "#/$defs/RequestPermissionParams"},
        "result": {"$ref": "#/$defs/RequestPermissionResult"},
    }
    assert methods["shutdown"]["params"] == {"$ref": "#/$defs/EmptyParams"}
    assert methods["shutdown"]["result"] == {"type": "null"}
    assert methods["session/resume"]["params"] == {"$ref": "#/$defs/LoadSessionParams"}
    assert methods["$/cancel_request"]["direction"] == "both"
    assert methods["_tether/session/report"]["extension"] is True
    assert sorted(m for m, e in methods.items() if e["extension"]) == [
        "_tether/daemon/stats", "_tether/rules/list", "_tether/rules/remove",
        "_tether/session/dump", "_tether/session/fork", "_tether/session/latest",
        "_tether/session/report", "_tether/session/restore", "_tether/session/search",
    ]
    assert sorted(m for m, e in methods.items() if e["direction"] == "agent->client") == [
        "fs/read_text_file", "fs/write_text_file", "session/request_permission",
        "session/update", "window/showMessage", "window/showMessageRequest",
        "workspace/applyEdit",
    ]
    for entry in methods.values():
        assert entry["params"] is not None
        if entry["kind"] == "notification":
            assert entry["result"] is None
        else:
            assert entry["result"] is not None


def test_error_table() -> None:
    table = _schema()["x-tether-errors"]
    assert table == {
        str(cls.code): {"name": cls.__name__, "message": cls.default_message}
        for cls in _errors.ERROR_CLASSES
    }
    assert len(table) == len(_errors.ERROR_CLASSES), "two error classes share a code"
    assert table["-32602"]["name"] == "InvalidParams"


# ---- realistic messages ----------------------------------------------------------------

TEXT = {"type": "text", "text": "hi"}


def _update(update: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"sessionId": "sess_1", "update": update, **extra}


MODES = {
    "currentModeId": "ask",
    "availableModes": [
        {"id": "read-only", "name": "Read only", "description": "Never edits or runs."},
        {"id": "ask", "name": "Ask", "description": "Asks before edits and commands."},
        {"id": "auto-edit", "name": "Auto edit"},
        {"id": "full-auto", "name": "Full auto"},
    ],
}

LSP_CAPABILITIES = {
    "textDocumentSync": {"openClose": True, "change": 2, "save": False},
    "experimental": {"tether": {"protocolVersion": 1}},
}
DIFF = {"type": "diff", "path": "/w/README.md", "newText": "new\n", "oldText": "old\n"}
SNAPSHOT = {
    "tether_snapshot": 1, "exported_at": 1748855701.8,
    "session": {"id": "sess_1", "workspace": "/w", "title": "Please edit notes", "mode": "ask",
                "created_at": 1748855700.7, "updated_at": 1748855700.8, "metadata": {}},
    "turns": [{"id": "turn_1", "seq": 1, "status": "running", "stop_reason": None,
               "started_at": 1748855700.79, "finished_at": None, "error": None,
               "pending": {"step": 1, "calls": [{"id": "call_edit", "name": "write_file",
                                                 "arguments": {"path": "notes.txt"}}]}}],
    "messages": [{"seq": 0, "turn_id": "turn_1", "role": "user", "status": "complete",
                  "created_at": 1748855700.79,
                  "body": {"role": "user", "content": [{"text": "Please edit notes", "type": "text"}]}}],
    "reports": [], "rules": [{"kind": "execute", "pattern": "npm test", "decision": "allow"}],
    "pending": {"turn_id": "turn_1", "approvals": {"step": 1, "calls": [
        {"id": "call_edit", "name": "write_file", "arguments": {"path": "notes.txt"}}]}},
}
RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}}

VALID: list[tuple[str, str, dict[str, Any]]] = [
    # (id, $defs name, message) — shaped the way the daemon sends or a client sends them
    ("agent_message_chunk", "SessionNotification",
     _update({"sessionUpdate": "agent_message_chunk", "content": TEXT})),
    ("agent_thought_chunk", "SessionNotification",
     _update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})),
    ("user_message_chunk_replay", "SessionNotification",
     _update({"sessionUpdate": "user_message_chunk",
              "content": {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"}})),
    ("tool_call", "SessionNotification",
     _update({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Read src/app.py",
              "kind": "read", "status": "pending", "content": [],
              "locations": [{"path": "/w/src/app.py", "line": 12}, {"path": "/w/src/b.py"}],
              "rawInput": {"path": "src/app.py", "offset": 0, "limit": None}})),
    ("tool_call_in_progress", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
              "status": "in_progress"})),
    ("tool_call_completed", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed",
              "content": [{"type": "content",
                           "content": {"type": "text", "text": "1: import os\n2: ..."}}],
              "rawOutput": {"lines": 2, "truncated": False}})),
    ("tool_call_failed", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "call_2", "status": "failed",
              "title": "Run pytest", "kind": "execute",
              "content": [{"type": "content", "content": {"type": "text", "text": "exit 1"}}]})),
    ("plan", "SessionNotification",
     _update({"sessionUpdate": "plan", "entries": [
         {"content": "Read the code", "priority": "high", "status": "completed"},
         {"content": "Fix the bug", "priority": "medium", "status": "in_progress"}]})),
    ("usage_update", "SessionNotification",
     _update({"sessionUpdate": "usage_update", "used": 5321, "size": 200000})),
    ("session_info_update", "SessionNotification",
     _update({"sessionUpdate": "session_info_update", "title": "Fix the flaky test",
              "updatedAt": "2025-01-01T00:00:00Z"})),
    ("current_mode_update", "SessionNotification",
     _update({"sessionUpdate": "current_mode_update", "currentModeId": "auto-edit"})),
    ("update_with_meta", "SessionNotification",
     _update({"sessionUpdate": "agent_message_chunk", "content": TEXT,
              "_meta": {"tether": {"notice": True}}}, _meta={"seq": 3})),
    ("prompt", "PromptParams",
     {"sessionId": "sess_1", "prompt": [
         {"type": "text", "text": "fix the failing test"},
         {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py",
          "mimeType": "text/x-python"},
         {"type": "resource", "resource": {"uri": "file:///w/b.py", "text": "print()",
                                           "mimeType": "text/x-python"}}]}),
    ("prompt_result", "PromptResult", {"stopReason": "end_turn"}),
    ("prompt_result_cancelled", "PromptResult", {"stopReason": "cancelled"}),
    ("new_session", "NewSessionParams", {"cwd": "/w", "mcpServers": []}),
    ("new_session_minimal", "NewSessionParams", {"cwd": "/w"}),
    ("new_session_result", "NewSessionResult", {"sessionId": "sess_1", "modes": MODES}),
    ("load_session", "LoadSessionParams", {"sessionId": "sess_1", "cwd": "/w", "mcpServers": []}),
    ("load_session_result", "LoadSessionResult", {"modes": MODES}),
    ("list_sessions", "ListSessionsParams", {"cwd": "/w"}),
    ("list_sessions_result", "ListSessionsResult",
     {"sessions": [{"sessionId": "sess_1", "cwd": "/w", "title": "Fix it",
                    "updatedAt": "2025-01-01T00:00:00Z"}], "nextCursor": "c2"}),
    ("set_mode", "SetModeParams", {"sessionId": "sess_1", "modeId": "full-auto"}),
    ("cancel", "SessionIdParams", {"sessionId": "sess_1"}),
    ("empty_result", "EmptyResult", {}),
    ("initialize_acp", "InitializeParams",
     {"protocolVersion": 1,
      "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                             "terminal": False},
      "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"}}),
    ("initialize_lsp", "InitializeParams",
     {"processId": 4242, "rootUri": "file:///w", "capabilities": {},
      "workspaceFolders": [{"uri": "file:///w", "name": "w"}],
      "initializationOptions": {"mode": "ask"}}),
    ("initialize_result", "InitializeResult",
     {"protocolVersion": 1,
      "agentCapabilities": {"loadSession": True,
                            "promptCapabilities": {"image": False, "audio": False,
                                                   "embeddedContext": True},
                            "mcpCapabilities": {"http": False, "sse": False},
                            "sessionCapabilities": {"list": {}, "resume": {}, "close": {},
                                                    "delete": {}}},
      "agentInfo": {"name": "tether", "version": "0.1.0"},
      "authMethods": [],
      "capabilities": LSP_CAPABILITIES,
      "serverInfo": {"name": "tether", "version": "0.1.0"}}),
    ("initialize_result_acp", "InitializeResult",
     {"protocolVersion": 1,
      "agentCapabilities": {"loadSession": True,
                            "promptCapabilities": {"image": False, "audio": False,
                                                   "embeddedContext": True},
                            "mcpCapabilities": {"http": False, "sse": False},
                            "sessionCapabilities": {"list": {}, "resume": {}, "close": {},
                                                    "delete": {}}},
      "agentInfo": {"name": "tether", "title": "Tether", "version": "0.1.0"},
      "authMethods": [],
      "_meta": {"tether": {
          "lsp": {"capabilities": LSP_CAPABILITIES,
                  "serverInfo": {"name": "tether", "version": "0.1.0"}},
          "configRefused": [{"key": "provider", "file": "/w/.tether/config.toml",
                             "reason": "user-only", "message": "provider is ignored"}]}}}),
    ("report", "ReportParams", {"sessionId": "sess_1", "turnId": "t1"}),
    ("report_result", "ReportResult", {"reports": [{
        "turnId": "t1", "sessionId": "sess_1", "provider": "openai", "model": "gpt",
        "startedAt": 1.0, "completedAt": 2.5, "totalMs": 1500.0, "stopReason": "end_turn",
        "status": "ok", "stepCount": 1, "toolCallCount": 1,
        "totalUsage": {"inputTokens": 10, "outputTokens": 5, "cachedTokens": 0},
        "totalLlmMs": 1200.0, "totalToolMs": 3.5,
        "steps": [{"index": 0, "llmLatencyMs": 1200.0, "firstTokenMs": None,
                   "usage": {"inputTokens": 10, "outputTokens": 5},
                   "finishReason": "tool_calls", "toolTotalMs": 3.5,
                   "toolCalls": [{"callId": "c1", "toolName": "read_file",
                                  "arguments": {"path": "a.py"}, "resultSizeBytes": 120,
                                  "latencyMs": 3.5}]}]}]}),
    ("cancel_request", "CancelRequestParams", {"id": 7}),
    ("cancel_request_acp", "CancelRequestParams", {"requestId": "tether-1"}),
    # ---- the SPEC's examples of the other methods and of `_meta.tether`
    ("notice", "SessionNotification",
     _update({"sessionUpdate": "agent_message_chunk", "content": TEXT,
              "_meta": {"tether": {"notice": True, "compaction": {"replaced": 3}}}})),
    ("replayed_status", "SessionNotification",
     _update({"sessionUpdate": "agent_message_chunk", "content": TEXT,
              "_meta": {"tether": {"status": "interrupted", "notice": True}}})),
    ("turn_ended", "SessionNotification",
     _update({"sessionUpdate": "session_info_update",
              "_meta": {"tether": {"turnEnded": {"turnId": "turn_1", "stopReason": "error"}}}})),
    ("diff_preview", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [DIFF]})),
    ("approved_terminal", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress",
              "content": [{"type": "terminal", "terminalId": "c"}],
              "_meta": {"tether": {"approvedBy": "allowed by mode full-auto"},
                        "terminal_info": {"terminal_id": "c", "cwd": "/w"}}})),
    ("terminal_output", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c",
              "_meta": {"terminal_output": {"terminal_id": "c", "data": "line1\n"}}})),
    ("terminal_exit", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c",
              "_meta": {"terminal_exit": {"terminal_id": "c", "exit_code": None,
                                          "signal": "SIGKILL"}}})),
    ("prompt_result_turn_id", "PromptResult",
     {"stopReason": "end_turn", "_meta": {"tether": {"turnId": "turn_72dc820ad1ff434a"}}}),
    ("request_permission", "RequestPermissionParams",
     {"sessionId": "s", "toolCall": {"toolCallId": "call_edit", "title": "Edit README.md",
                                     "kind": "edit", "status": "pending", "content": [DIFF],
                                     "rawInput": {"path": "README.md"}},
      "options": [{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                  {"optionId": "allow_once_network", "name": "Allow once, with network",
                   "kind": "allow_once"}],
      "_meta": {"tether": {"reason": "mode ask asks before editing README.md",
                           "hunks": [{"path": "/w/README.md", "index": 0,
                                      "header": "@@ -1,3 +1,3 @@"}]}}}),
    ("permission_selected", "RequestPermissionResult",
     {"outcome": {"outcome": "selected", "optionId": "allow_once"},
      "_meta": {"tether": {"acceptedHunks": {"/w/README.md": [0]}}}}),
    ("permission_cancelled", "RequestPermissionResult", {"outcome": {"outcome": "cancelled"}}),
    ("read_text_file", "ReadTextFileParams", {"sessionId": "s", "path": "/w/README.md"}),
    ("read_text_file_result", "ReadTextFileResult", {"content": "# Sample\n"}),
    ("write_text_file", "WriteTextFileParams",
     {"sessionId": "s", "path": "/w/README.md", "content": "new\n"}),
    ("apply_edit", "ApplyWorkspaceEditParams",
     {"label": "Tether: edit README.md", "edit": {"documentChanges": [
         {"kind": "create", "uri": "file:///w/new.txt", "options": {"ignoreIfExists": True}},
         {"textDocument": {"uri": "file:///w/new.txt", "version": None},
          "edits": [{"range": RANGE, "newText": "hello\n"}]}]}}),
    ("apply_edit_result", "ApplyWorkspaceEditResult", {"applied": False, "failureReason": "no"}),
    ("show_message_request", "ShowMessageRequestParams",
     {"type": 2, "message": "Tether: Edit README.md", "actions": [{"title": "Allow once"}]}),
    ("show_message", "ShowMessageParams", {"type": 2, "message": "Tether: provider is ignored"}),
    ("did_open", "DidOpenTextDocumentParams",
     {"textDocument": {"uri": "file:///w/a.md", "languageId": "markdown", "version": 7,
                       "text": "# a\n"}}),
    ("did_change", "DidChangeTextDocumentParams",
     {"textDocument": {"uri": "file:///w/a.md", "version": 8},
      "contentChanges": [{"range": RANGE, "text": "edited"}, {"text": "all of it"}]}),
    ("did_close", "DidCloseTextDocumentParams", {"textDocument": {"uri": "file:///w/a.md"}}),
    ("stats", "DaemonStats",
     {"version": "0.1.0", "runningRequests": 0, "backgroundTasks": 0, "outgoingRequests": 0,
      "unknownResponses": 0, "liveSessions": 1, "framesWritten": 24, "writes": 13,
      "framing": "ndjson", "maxRssKb": 49192}),
    ("rules", "RulesResult",
     {"rules": [{"id": None, "kind": "execute", "pattern": "git push", "decision": "deny",
                 "source": "built-in"},
                {"id": 1, "kind": "execute", "pattern": "echo", "decision": "allow",
                 "source": "user"}]}),
    ("remove_rule", "RemoveRuleParams", {"sessionId": "s", "id": 1}),
    ("restore", "RestoreParams", {"snapshot": SNAPSHOT, "importRules": True}),
    ("dump_result", "Snapshot", SNAPSHOT),
    ("restore_result", "RestoreResult",
     {"sessionId": "s", "cwd": "/w", "mode": "ask",
      "rules": [{"kind": "bogus", "pattern": "x", "decision": "deny", "imported": False}]}),
    ("tether_fork", "TetherForkParams", {"sessionId": "s", "messageSeq": 0}),
    ("acp_fork", "ForkSessionParams", {"sessionId": "s", "cwd": "/w", "mcpServers": []}),
    ("search", "SearchParams", {"query": "edit notes", "limit": 5}),
    ("search_result", "SearchResult",
     {"hits": [{"sessionId": "s", "sessionTitle": None, "messageSeq": 0, "role": "user",
                "snippet": "Please [[edit]] [[notes]]", "rank": -1.46}]}),
    ("latest", "LatestResult",
     {"sessionId": "s", "title": None, "updatedAt": "2025-06-02T09:15:00Z", "cwd": "/w"}),
    ("latest_none", "LatestResult", {"sessionId": None}),
    ("cancel_request_string_id", "CancelRequestParams", {"id": "req-7"}),
]


INVALID: list[tuple[str, str, dict[str, Any]]] = [
    ("missing_session_id", "SessionNotification",
     {"update": {"sessionUpdate": "agent_message_chunk", "content": TEXT}}),
    ("unknown_session_update", "SessionNotification",
     _update({"sessionUpdate": "available_commands_update", "availableCommands": []})),
    ("missing_session_update_tag", "SessionNotification", _update({"content": TEXT})),
    ("agent_chunk_not_text", "SessionNotification",
     _update({"sessionUpdate": "agent_message_chunk",
              "content": {"type": "resource_link", "uri": "file:///a", "name": "a"}})),
    ("tool_call_without_title", "SessionNotification",
     _update({"sessionUpdate": "tool_call", "toolCallId": "call_1"})),
    ("tool_call_bad_status", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "done"})),
    ("tool_call_bad_kind", "SessionNotification",
     _update({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "shell"})),
    ("tool_call_location_line_str", "SessionNotification",
     _update({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t",
              "locations": [{"path": "/a", "line": "3"}]})),
    ("usage_used_as_string", "SessionNotification",
     _update({"sessionUpdate": "usage_update", "used": "12", "size": 100})),
    ("usage_missing_size", "SessionNotification",
     _update({"sessionUpdate": "usage_update", "used": 12})),
    ("wrong_stop_reason", "PromptResult", {"stopReason": "done"}),
    ("stop_reason_missing", "PromptResult", {}),
    ("prompt_missing_session_id", "PromptParams", {"prompt": [TEXT]}),
    ("prompt_not_a_list", "PromptParams", {"sessionId": "s", "prompt": "hi"}),
    ("prompt_image_block", "PromptParams",
     {"sessionId": "s", "prompt": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
    ("prompt_block_without_type", "PromptParams", {"sessionId": "s", "prompt": [{"text": "hi"}]}),
    ("new_session_cwd_null", "NewSessionParams", {"cwd": None}),
    ("meta_not_an_object", "NewSessionParams", {"cwd": "/w", "_meta": [1]}),
    ("unknown_mode", "SetModeParams", {"sessionId": "s", "modeId": "yolo"}),
    ("new_session_result_without_modes", "NewSessionResult", {"sessionId": "s"}),
    ("protocol_version_string", "InitializeParams", {"protocolVersion": "1"}),
    ("permission_unknown_outcome", "RequestPermissionResult", {"outcome": {"outcome": "maybe"}}),
    ("search_limit_too_big", "SearchParams", {"query": "x", "limit": 201}),
    ("search_empty_query", "SearchParams", {"query": ""}),
    ("fork_negative_seq", "TetherForkParams", {"sessionId": "s", "messageSeq": -1}),
    ("rule_id_string", "RemoveRuleParams", {"sessionId": "s", "id": "1"}),
    ("did_open_without_uri", "DidOpenTextDocumentParams", {"textDocument": {"text": "x"}}),
    ("diff_without_new_text", "SessionNotification",
     _update({"sessionUpdate": "tool_call_update", "toolCallId": "c",
              "content": [{"type": "diff", "path": "/w/a"}]})),
]


@pytest.mark.parametrize(("name", "message"), [pytest.param(d, m, id=i) for i, d, m in VALID])
def test_realistic_messages_validate(name: str, message: dict[str, Any]) -> None:
    assert _errors_of(name, message) == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param(d, m, id=i)
        for i, d, m in VALID
    ],
)
def test_realistic_messages_structure_and_round_trip(name: str, message: dict[str, Any]) -> None:
    """The converter accepts what the schema accepts, and what it emits fits the schema."""
    obj = structure(message, getattr(_messages, name))
    assert _errors_of(name, unstructure(obj)) == []
    assert _kept(message, unstructure(obj)), "the converter dropped or changed what it read"


def _kept(sent: Any, back: Any) -> bool:
    """Everything in `sent` is in `back` (which may add defaults)."""
    if isinstance(sent, dict):
        return isinstance(back, dict) and all(k in back and _kept(v, back[k]) for k, v in sent.items())
    if isinstance(sent, list):
        return isinstance(back, list) and len(sent) == len(back) and all(map(_kept, sent, back))
    return bool(sent == back)


@pytest.mark.parametrize(("name", "message"), [pytest.param(d, m, id=i) for i, d, m in INVALID])
def test_invalid_messages_are_rejected(name: str, message: dict[str, Any]) -> None:
    assert _errors_of(name, message) != [], "the schema accepted it"
    with pytest.raises(_errors.InvalidParams):
        structure(message, getattr(_messages, name))


# ---- every class, every field ------------------------------------------------------------


def _sample(tp: Any, *, nulls: bool) -> Any:
    """A value of annotation `tp`; `nulls` picks None wherever the annotation allows it."""
    if tp is Any:
        return "any"
    if tp is type(None):
        return None
    if tp in (str, int, float, bool):
        return {str: "s", int: 3, float: 1.5, bool: True}[tp]
    if attrs.has(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: _field_sample(f, hints[f.name], nulls=nulls) for f in attrs.fields(tp)})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return args[-1]
    if origin is list:
        return [_sample(args[0], nulls=nulls)]
    if origin is dict:
        return {"key": _sample(args[1], nulls=nulls)}
    if origin is typing.Union:
        if nulls and type(None) in args:
            return None
        return _sample(next(a for a in args if a is not type(None)), nulls=nulls)
    raise TypeError(f"no sample for {tp!r}")


def _field_sample(field: Any, hint: Any, *, nulls: bool) -> Any:
    described = field.metadata.get(SCHEMA)  # raw JSON described by a class (the snapshot)
    if described is not None:
        return unstructure(_sample(described, nulls=nulls))
    return _sample(hint, nulls=nulls)


@pytest.mark.parametrize("nulls", [False, True], ids=["all-set", "nulls"])
@pytest.mark.parametrize("name", sorted(_message_classes()))
def test_every_class_unstructures_to_its_schema(name: str, nulls: bool) -> None:
    obj = _sample(_message_classes()[name], nulls=nulls)
    wire = unstructure(obj)
    assert _errors_of(name, wire) == []
    assert structure(wire, type(obj)) == obj


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
    ("PromptParams", "PromptRequest", "in", frozenset()),
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
         "initializationOptions"})),
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

    our_required = set(mine.get("required", []))
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
            defs[v["$ref"].removeprefix("#/$defs/")]["properties"][tag]["const"]
            for v in defs[ours]["oneOf"]
        }
        assert our_tags <= _acp_consts(acp[theirs], tag), ours
    tool_content = {
        defs[v["$ref"].removeprefix("#/$defs/")]["properties"]["type"]["const"]
        for v in defs["ToolCallContent"]["oneOf"]
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
