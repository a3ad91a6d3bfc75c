"""Realistic messages for the schema tests: `VALID` and `INVALID` as (id, $defs name,
message), shaped the way the daemon or a client sends them (most are SPEC examples)."""

from __future__ import annotations

from typing import Any

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
    "tether_snapshot": 1,
    "exported_at": 1748855701.8,
    "session": {
        "id": "sess_1",
        "workspace": "/w",
        "title": "Please edit notes",
        "mode": "ask",
        "created_at": 1748855700.7,
        "updated_at": 1748855700.8,
        "metadata": {},
    },
    "turns": [
        {
            "id": "turn_1",
            "seq": 1,
            "status": "running",
            "stop_reason": None,
            "started_at": 1748855700.79,
            "finished_at": None,
            "error": None,
            "pending": {
                "step": 1,
                "calls": [{"id": "call_edit", "name": "write_file", "arguments": {"path": "notes.txt"}}],
            },
        }
    ],
    "messages": [
        {
            "seq": 0,
            "turn_id": "turn_1",
            "role": "user",
            "status": "complete",
            "created_at": 1748855700.79,
            "body": {"role": "user", "content": [{"text": "Please edit notes", "type": "text"}]},
        }
    ],
    "reports": [],
    "rules": [{"kind": "execute", "pattern": "npm test", "decision": "allow"}],
    "pending": {
        "turn_id": "turn_1",
        "approvals": {
            "step": 1,
            "calls": [{"id": "call_edit", "name": "write_file", "arguments": {"path": "notes.txt"}}],
        },
    },
}
RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}}

VALID: list[tuple[str, str, dict[str, Any]]] = [
    # (id, $defs name, message) — shaped the way the daemon sends or a client sends them
    ("agent_message_chunk", "SessionNotification", _update({"sessionUpdate": "agent_message_chunk", "content": TEXT})),
    (
        "agent_thought_chunk",
        "SessionNotification",
        _update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}),
    ),
    (
        "user_message_chunk_replay",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"},
            }
        ),
    ),
    (
        "tool_call",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_1",
                "title": "Read src/app.py",
                "kind": "read",
                "status": "pending",
                "content": [],
                "locations": [{"path": "/w/src/app.py", "line": 12}, {"path": "/w/src/b.py"}],
                "rawInput": {"path": "src/app.py", "offset": 0, "limit": None},
            }
        ),
    ),
    (
        "tool_call_in_progress",
        "SessionNotification",
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "in_progress"}),
    ),
    (
        "tool_call_completed",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "1: import os\n2: ..."}}],
                "rawOutput": {"lines": 2, "truncated": False},
            }
        ),
    ),
    (
        "tool_call_failed",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_2",
                "status": "failed",
                "title": "Run pytest",
                "kind": "execute",
                "content": [{"type": "content", "content": {"type": "text", "text": "exit 1"}}],
            }
        ),
    ),
    (
        "plan",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the code", "priority": "high", "status": "completed"},
                    {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
                ],
            }
        ),
    ),
    ("usage_update", "SessionNotification", _update({"sessionUpdate": "usage_update", "used": 5321, "size": 200000})),
    (
        "session_info_update",
        "SessionNotification",
        _update(
            {"sessionUpdate": "session_info_update", "title": "Fix the flaky test", "updatedAt": "2025-01-01T00:00:00Z"}
        ),
    ),
    (
        "current_mode_update",
        "SessionNotification",
        _update({"sessionUpdate": "current_mode_update", "currentModeId": "auto-edit"}),
    ),
    (
        "available_commands_update",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {"name": "review", "description": "Review the uncommitted changes"},
                    {"name": "mode", "description": "Switch the mode", "input": {"hint": "mode id"}},
                ],
            }
        ),
    ),
    (
        "update_with_meta",
        "SessionNotification",
        _update(
            {"sessionUpdate": "agent_message_chunk", "content": TEXT, "_meta": {"tether": {"notice": True}}},
            _meta={"seq": 3},
        ),
    ),
    (
        "prompt",
        "PromptParams",
        {
            "sessionId": "sess_1",
            "prompt": [
                {"type": "text", "text": "fix the failing test"},
                {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py", "mimeType": "text/x-python"},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///w/b.py", "text": "print()", "mimeType": "text/x-python"},
                },
            ],
        },
    ),
    ("prompt_result", "PromptResult", {"stopReason": "end_turn"}),
    ("prompt_result_cancelled", "PromptResult", {"stopReason": "cancelled"}),
    ("new_session", "NewSessionParams", {"cwd": "/w", "mcpServers": []}),
    ("new_session_minimal", "NewSessionParams", {"cwd": "/w"}),
    ("new_session_result", "NewSessionResult", {"sessionId": "sess_1", "modes": MODES}),
    ("load_session", "LoadSessionParams", {"sessionId": "sess_1", "cwd": "/w", "mcpServers": []}),
    ("load_session_result", "LoadSessionResult", {"modes": MODES}),
    ("list_sessions", "ListSessionsParams", {"cwd": "/w"}),
    (
        "list_sessions_result",
        "ListSessionsResult",
        {
            "sessions": [{"sessionId": "sess_1", "cwd": "/w", "title": "Fix it", "updatedAt": "2025-01-01T00:00:00Z"}],
            "nextCursor": "c2",
        },
    ),
    ("set_mode", "SetModeParams", {"sessionId": "sess_1", "modeId": "full-auto"}),
    ("cancel", "SessionIdParams", {"sessionId": "sess_1"}),
    ("empty_result", "EmptyResult", {}),
    (
        "initialize_acp",
        "InitializeParams",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False},
            "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"},
        },
    ),
    (
        "initialize_lsp",
        "InitializeParams",
        {
            "processId": 4242,
            "rootUri": "file:///w",
            "capabilities": {},
            "workspaceFolders": [{"uri": "file:///w", "name": "w"}],
            "initializationOptions": {"mode": "ask"},
        },
    ),
    (
        "initialize_result",
        "InitializeResult",
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            },
            "agentInfo": {"name": "tether", "version": "0.1.0"},
            "authMethods": [],
            "capabilities": LSP_CAPABILITIES,
            "serverInfo": {"name": "tether", "version": "0.1.0"},
        },
    ),
    (
        "initialize_result_acp",
        "InitializeResult",
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            },
            "agentInfo": {"name": "tether", "title": "Tether", "version": "0.1.0"},
            "authMethods": [],
            "_meta": {
                "tether": {
                    "lsp": {"capabilities": LSP_CAPABILITIES, "serverInfo": {"name": "tether", "version": "0.1.0"}},
                    "configRefused": [
                        {
                            "key": "provider",
                            "file": "/w/.tether/config.toml",
                            "reason": "user-only",
                            "message": "provider is ignored",
                        }
                    ],
                }
            },
        },
    ),
    ("report", "ReportParams", {"sessionId": "sess_1", "turnId": "t1"}),
    (
        "report_result",
        "ReportResult",
        {
            "reports": [
                {
                    "turnId": "t1",
                    "sessionId": "sess_1",
                    "provider": "openai",
                    "model": "gpt",
                    "startedAt": 1.0,
                    "completedAt": 2.5,
                    "totalMs": 1500.0,
                    "stopReason": "end_turn",
                    "status": "ok",
                    "stepCount": 1,
                    "toolCallCount": 1,
                    "totalUsage": {"inputTokens": 10, "outputTokens": 5, "cachedTokens": 0},
                    "totalLlmMs": 1200.0,
                    "totalToolMs": 3.5,
                    "steps": [
                        {
                            "index": 0,
                            "llmLatencyMs": 1200.0,
                            "firstTokenMs": None,
                            "usage": {"inputTokens": 10, "outputTokens": 5},
                            "finishReason": "tool_calls",
                            "toolTotalMs": 3.5,
                            "toolCalls": [
                                {
                                    "callId": "c1",
                                    "toolName": "read_file",
                                    "arguments": {"path": "a.py"},
                                    "resultSizeBytes": 120,
                                    "latencyMs": 3.5,
                                }
                            ],
                        }
                    ],
                }
            ]
        },
    ),
    ("cancel_request", "CancelRequestParams", {"id": 7}),
    ("cancel_request_acp", "CancelRequestParams", {"requestId": "tether-1"}),
    # ---- the SPEC's examples of the other methods and of `_meta.tether`
    (
        "notice",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": TEXT,
                "_meta": {"tether": {"notice": True, "compaction": {"replaced": 3}}},
            }
        ),
    ),
    (
        "replayed_status",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": TEXT,
                "_meta": {"tether": {"status": "interrupted", "notice": True}},
            }
        ),
    ),
    (
        "turn_ended",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "session_info_update",
                "_meta": {"tether": {"turnEnded": {"turnId": "turn_1", "stopReason": "error"}}},
            }
        ),
    ),
    (
        "diff_preview",
        "SessionNotification",
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [DIFF]}),
    ),
    (
        "approved_terminal",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "c"}],
                "_meta": {
                    "tether": {"approvedBy": "allowed by mode full-auto"},
                    "terminal_info": {"terminal_id": "c", "cwd": "/w"},
                },
            }
        ),
    ),
    (
        "terminal_output",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "_meta": {"terminal_output": {"terminal_id": "c", "data": "line1\n"}},
            }
        ),
    ),
    (
        "terminal_exit",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "_meta": {"terminal_exit": {"terminal_id": "c", "exit_code": None, "signal": "SIGKILL"}},
            }
        ),
    ),
    (
        "prompt_result_turn_id",
        "PromptResult",
        {"stopReason": "end_turn", "_meta": {"tether": {"turnId": "turn_72dc820ad1ff434a"}}},
    ),
    (
        "request_permission",
        "RequestPermissionParams",
        {
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "call_edit",
                "title": "Edit README.md",
                "kind": "edit",
                "status": "pending",
                "content": [DIFF],
                "rawInput": {"path": "README.md"},
            },
            "options": [
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_once_network", "name": "Allow once, with network", "kind": "allow_once"},
            ],
            "_meta": {
                "tether": {
                    "reason": "mode ask asks before editing README.md",
                    "hunks": [{"path": "/w/README.md", "index": 0, "header": "@@ -1,3 +1,3 @@"}],
                }
            },
        },
    ),
    (
        "permission_selected",
        "RequestPermissionResult",
        {
            "outcome": {"outcome": "selected", "optionId": "allow_once"},
            "_meta": {"tether": {"acceptedHunks": {"/w/README.md": [0]}}},
        },
    ),
    ("permission_cancelled", "RequestPermissionResult", {"outcome": {"outcome": "cancelled"}}),
    ("read_text_file", "ReadTextFileParams", {"sessionId": "s", "path": "/w/README.md"}),
    ("read_text_file_result", "ReadTextFileResult", {"content": "# Sample\n"}),
    ("write_text_file", "WriteTextFileParams", {"sessionId": "s", "path": "/w/README.md", "content": "new\n"}),
    (
        "apply_edit",
        "ApplyWorkspaceEditParams",
        {
            "label": "Tether: edit README.md",
            "edit": {
                "documentChanges": [
                    {"kind": "create", "uri": "file:///w/new.txt", "options": {"ignoreIfExists": True}},
                    {
                        "textDocument": {"uri": "file:///w/new.txt", "version": None},
                        "edits": [{"range": RANGE, "newText": "hello\n"}],
                    },
                ]
            },
        },
    ),
    ("apply_edit_result", "ApplyWorkspaceEditResult", {"applied": False, "failureReason": "no"}),
    (
        "show_message_request",
        "ShowMessageRequestParams",
        {"type": 2, "message": "Tether: Edit README.md", "actions": [{"title": "Allow once"}]},
    ),
    ("show_message", "ShowMessageParams", {"type": 2, "message": "Tether: provider is ignored"}),
    (
        "did_open",
        "DidOpenTextDocumentParams",
        {"textDocument": {"uri": "file:///w/a.md", "languageId": "markdown", "version": 7, "text": "# a\n"}},
    ),
    (
        "did_change",
        "DidChangeTextDocumentParams",
        {
            "textDocument": {"uri": "file:///w/a.md", "version": 8},
            "contentChanges": [{"range": RANGE, "text": "edited"}, {"text": "all of it"}],
        },
    ),
    ("did_close", "DidCloseTextDocumentParams", {"textDocument": {"uri": "file:///w/a.md"}}),
    (
        "stats",
        "DaemonStats",
        {
            "version": "0.1.0",
            "runningRequests": 0,
            "backgroundTasks": 0,
            "outgoingRequests": 0,
            "unknownResponses": 0,
            "liveSessions": 1,
            "framesWritten": 24,
            "writes": 13,
            "framing": "ndjson",
            "maxRssKb": 49192,
        },
    ),
    (
        "rules",
        "RulesResult",
        {
            "rules": [
                {"id": None, "kind": "execute", "pattern": "git push", "decision": "deny", "source": "built-in"},
                {"id": 1, "kind": "execute", "pattern": "echo", "decision": "allow", "source": "user"},
            ]
        },
    ),
    ("remove_rule", "RemoveRuleParams", {"sessionId": "s", "id": 1}),
    ("restore", "RestoreParams", {"snapshot": SNAPSHOT, "importRules": True}),
    ("dump_result", "Snapshot", SNAPSHOT),
    (
        "restore_result",
        "RestoreResult",
        {
            "sessionId": "s",
            "cwd": "/w",
            "mode": "ask",
            "rules": [{"kind": "bogus", "pattern": "x", "decision": "deny", "imported": False}],
        },
    ),
    ("tether_fork", "TetherForkParams", {"sessionId": "s", "messageSeq": 0}),
    ("acp_fork", "ForkSessionParams", {"sessionId": "s", "cwd": "/w", "mcpServers": []}),
    ("search", "SearchParams", {"query": "edit notes", "limit": 5}),
    (
        "search_result",
        "SearchResult",
        {
            "hits": [
                {
                    "sessionId": "s",
                    "sessionTitle": None,
                    "messageSeq": 0,
                    "role": "user",
                    "snippet": "Please [[edit]] [[notes]]",
                    "rank": -1.46,
                }
            ]
        },
    ),
    (
        "latest",
        "LatestResult",
        {"sessionId": "s", "updatedAt": "2025-06-02T09:15:00Z", "cwd": "/w", "title": "Please edit notes"},
    ),
    ("latest_untitled", "LatestResult", {"sessionId": "s", "updatedAt": "2025-06-02T09:15:00Z", "cwd": "/w"}),
    ("latest_none", "LatestResult", {"sessionId": None}),
    ("cancel_request_string_id", "CancelRequestParams", {"id": "req-7"}),
]


INVALID: list[tuple[str, str, dict[str, Any]]] = [
    (
        "missing_session_id",
        "SessionNotification",
        {"update": {"sessionUpdate": "agent_message_chunk", "content": TEXT}},
    ),
    (
        "unknown_session_update",
        "SessionNotification",
        _update({"sessionUpdate": "no_such_update", "availableCommands": []}),
    ),
    ("missing_session_update_tag", "SessionNotification", _update({"content": TEXT})),
    (
        "agent_chunk_not_text",
        "SessionNotification",
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "resource_link", "uri": "file:///a", "name": "a"},
            }
        ),
    ),
    ("tool_call_without_title", "SessionNotification", _update({"sessionUpdate": "tool_call", "toolCallId": "call_1"})),
    (
        "tool_call_bad_status",
        "SessionNotification",
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "done"}),
    ),
    (
        "tool_call_bad_kind",
        "SessionNotification",
        _update({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "shell"}),
    ),
    (
        "tool_call_location_line_str",
        "SessionNotification",
        _update(
            {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "locations": [{"path": "/a", "line": "3"}]}
        ),
    ),
    (
        "usage_used_as_string",
        "SessionNotification",
        _update({"sessionUpdate": "usage_update", "used": "12", "size": 100}),
    ),
    ("usage_missing_size", "SessionNotification", _update({"sessionUpdate": "usage_update", "used": 12})),
    ("wrong_stop_reason", "PromptResult", {"stopReason": "done"}),
    ("stop_reason_missing", "PromptResult", {}),
    ("prompt_missing_session_id", "PromptParams", {"prompt": [TEXT]}),
    ("prompt_not_a_list", "PromptParams", {"sessionId": "s", "prompt": "hi"}),
    (
        "prompt_image_block",
        "PromptParams",
        {"sessionId": "s", "prompt": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]},
    ),
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
    (
        "diff_without_new_text",
        "SessionNotification",
        _update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [{"type": "diff", "path": "/w/a"}]}
        ),
    ),
]
