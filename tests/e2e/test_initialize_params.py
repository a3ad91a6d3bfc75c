"""`initialize`'s params are read through the protocol's Structs (ACP's half generated, LSP's
declared: `read_initialize`): a real daemon answers each mistake with main's words (checked
against the branch point), reads LSP's and ACP's capabilities as before, and names a capability
of the wrong type instead of taking it as absent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from daemon_harness import initialize_fresh

if TYPE_CHECKING:
    from pathlib import Path

_WHY = "invalid params for initialize: "


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"protocolVersion": "1"}, "protocolVersion must be an integer"),
        ({"protocolVersion": True}, "protocolVersion must be an integer"),
        ({"protocolVersion": 1, "clientCapabilities": []}, "clientCapabilities must be an object"),
        ({"protocolVersion": 2, "capabilities": 5}, "capabilities must be an object"),
        ({"protocolVersion": 1, "clientInfo": "zed"}, "clientInfo must be an object"),
        ({"processId": 1, "workspaceFolders": [3]}, "workspaceFolders must be a list of {uri, name}"),
        ({"processId": 1, "rootUri": 5}, "rootUri must be a string"),
        ({"processId": 1, "rootUri": "http://x/y"}, "rootUri 'http://x/y' is not a file:// URI"),
        ({"protocolVersion": 1, "initializationOptions": []}, "initializationOptions must be an object"),
        # ACP's half and LSP's are read through their own classes: a mistake in each is still named
        # in one message, ACP's keys first, as main's one class did
        ({"protocolVersion": 1, "clientInfo": "zed", "rootUri": 5}, "clientInfo must be an object"),
        (
            {"clientCapabilities": {"fs": {"readTextFile": "yes"}}, "capabilities": {"workspace": {"applyEdit": "no"}}},
            "params.clientCapabilities.fs.readTextFile: expected a boolean, got a string; "
            "params.capabilities.workspace.applyEdit: expected a boolean, got a string",
        ),
        (
            {"processId": "x", "clientInfo": {"name": 3}},
            "params.clientInfo.name: expected a string, got an integer; params.clientInfo.version: "
            "required field missing; params.processId: expected an integer, got a string",
        ),
    ],
)
def test_a_bad_initialize_is_refused_in_mains_words(
    params: dict[str, Any], message: str, daemon_env: dict[str, str], workspace: Path
) -> None:
    answer = initialize_fresh(params, daemon_env, workspace)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == _WHY + message


def test_lsp_and_acp_clients_are_told_apart_as_before(daemon_env: dict[str, str], workspace: Path) -> None:
    # LSP: `processId: null` is still "present" (UNSET is not None): the LSP half at the root
    lsp = initialize_fresh(
        {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}, daemon_env, workspace
    )
    assert "capabilities" in lsp["result"] and "_meta" not in lsp["result"]
    acp = initialize_fresh({"protocolVersion": 1, "clientCapabilities": {"terminal": True}}, daemon_env, workspace)
    assert "capabilities" not in acp["result"] and "lsp" in acp["result"]["_meta"]["tether"]


def test_a_capability_of_the_wrong_type_is_named_not_taken_as_absent(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    params = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "yes"}}}
    answer = initialize_fresh(params, daemon_env, workspace)
    assert answer["error"]["code"] == -32602
    assert (
        answer["error"]["message"]
        == _WHY + "params.clientCapabilities.fs.readTextFile: expected a boolean, got a string"
    )
