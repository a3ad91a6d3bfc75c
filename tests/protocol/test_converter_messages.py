"""The converter's error messages are the ones clients see today.

For the methods whose params were checked by hand (`_tether/session/*`, `session/fork`,
`_tether/rules/*`, document sync), the classes carry the hand-written messages, so the
daemon can structure those params with the converter without changing a byte on the
wire. The texts here are the ones the e2e tests and SPEC §3.18-§3.32 pin.
"""

from __future__ import annotations

from typing import Any

import pytest
import tether_protocol as m
from tether_protocol import InvalidParams, structure

RESTORE, FORK, SEARCH = "_tether/session/restore", "_tether/session/fork", "_tether/session/search"

CASES: list[tuple[str, type, str, dict[str, Any], str]] = [
    ("set_mode", m.SetModeParams, "session/set_mode", {"sessionId": "s", "modeId": "yolo"},
     "invalid params for session/set_mode: params.modeId: must be one of: read-only, ask, auto-edit, full-auto"),
    ("set_mode_missing", m.SetModeParams, "session/set_mode", {"sessionId": "s"},
     "invalid params for session/set_mode: params.modeId: required field missing; "
     "send one of: read-only, ask, auto-edit, full-auto"),
    ("prompt_image", m.PromptParams, "session/prompt", {"sessionId": "s", "prompt": [{"type": "image"}]},
     "invalid params for session/prompt: params.prompt: item 0: unsupported type 'image'; "
     "accepted: resource, resource_link, text"),
    ("new_cwd", m.NewSessionParams, "session/new", {"cwd": 3},
     "invalid params for session/new: params.cwd: expected a string, got an integer"),
    ("restore_path", m.RestoreParams, RESTORE, {"path": 5},
     "invalid params for _tether/session/restore: path must be a string"),
    ("restore_keep_id", m.RestoreParams, RESTORE, {"snapshot": {}, "keepId": "yes"},
     "invalid params for _tether/session/restore: keepId must be a boolean"),
    ("restore_import_rules", m.RestoreParams, RESTORE, {"snapshot": {}, "importRules": None},
     "invalid params for _tether/session/restore: importRules must be a boolean"),
    ("fork_negative", m.TetherForkParams, FORK, {"sessionId": "s", "messageSeq": -1},
     "invalid params for _tether/session/fork: messageSeq must be an integer at least 0"),
    ("fork_bool", m.TetherForkParams, FORK, {"sessionId": "s", "messageSeq": True},
     "invalid params for _tether/session/fork: messageSeq must be an integer at least 0"),
    ("fork_no_id", m.TetherForkParams, FORK, {"messageSeq": 1},
     "invalid params for _tether/session/fork: sessionId (a non-empty string) is required"),
    ("acp_fork_empty_id", m.ForkSessionParams, "session/fork", {"sessionId": ""},
     "invalid params for session/fork: sessionId (a non-empty string) is required"),
    ("dump_cwd", m.DumpParams, "_tether/session/dump", {"sessionId": "s", "cwd": 5},
     "invalid params for _tether/session/dump: cwd must be a string"),
    ("search_missing", m.SearchParams, SEARCH, {},
     "invalid params for _tether/session/search: query (a non-empty string) is required"),
    ("search_limit", m.SearchParams, SEARCH, {"query": "x", "limit": 0},
     "invalid params for _tether/session/search: limit must be an integer between 1 and 200"),
    ("search_cwd", m.SearchParams, SEARCH, {"query": "x", "cwd": 5},
     "invalid params for _tether/session/search: cwd must be a string"),
    ("latest_cwd", m.LatestParams, "_tether/session/latest", {"cwd": []},
     "invalid params for _tether/session/latest: cwd must be a string"),
    ("rules_session", m.RulesParams, "_tether/rules/list", {"sessionId": 5},
     "invalid params for _tether/rules/list: sessionId (a string from session/new) is required"),
    ("remove_rule_id", m.RemoveRuleParams, "_tether/rules/remove", {"sessionId": "s", "id": True},
     "invalid params for _tether/rules/remove: id (an integer from _tether/rules/list) is required"),
    ("did_open_uri", m.DidOpenTextDocumentParams, "textDocument/didOpen", {"textDocument": {"uri": 1}},
     "invalid params for textDocument/didOpen: textDocument.uri (a file:// URI string) is required"),
    ("did_close_missing", m.DidCloseTextDocumentParams, "textDocument/didClose", {},
     "invalid params for textDocument/didClose: textDocument.uri (a file:// URI string) is required"),
]


@pytest.mark.parametrize(("cls", "method", "params", "message"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error_message(cls: type, method: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        structure(params, cls, method=method)
    assert caught.value.message == message
    assert caught.value.code == -32602


def test_valid_params_keep_their_values_and_defaults() -> None:
    search = structure({"query": "x", "limit": 200, "cwd": None}, m.SearchParams, method=SEARCH)
    assert (search.query, search.limit, search.cwd) == ("x", 200, None)
    restore = structure({"snapshot": {"tether_snapshot": 1}}, m.RestoreParams, method=RESTORE)
    assert restore.snapshot == {"tether_snapshot": 1} and restore.keep_id is False
    fork = structure({"sessionId": "s", "messageSeq": None}, m.TetherForkParams, method=FORK)
    assert fork.message_seq is None
    opened = structure({"textDocument": {"uri": "file:///a"}}, m.DidOpenTextDocumentParams)
    assert (opened.text_document.text, opened.text_document.language_id) == ("", "")
