"""`initialize` and the cancel notifications as the schema names them are ACP's generated class
joined with LSP's declared one: no key of either is declared twice or by hand for ACP."""

from __future__ import annotations

import msgspec
import pytest

from tether_protocol import (
    CancelRequestParams,
    InitializeParams,
    InitializeResult,
    LspCancelParams,
    LspInitializeParams,
    LspInitializeResult,
    read_initialize,
)
from tether_protocol.acp_v1 import initialize, lifecycle


def _keys(cls: type) -> list[str]:
    return [f.encode_name for f in msgspec.structs.fields(cls)]


@pytest.mark.parametrize(
    ("wire", "acp", "lsp"),
    [
        (InitializeParams, initialize.AcpInitializeParams, LspInitializeParams),
        (CancelRequestParams, lifecycle.AcpCancelRequestParams, LspCancelParams),
    ],
)
def test_the_wire_class_is_the_generated_acp_half_and_the_lsp_half(wire: type, acp: type, lsp: type) -> None:
    assert issubclass(wire, acp)  # ACP's keys are the generated class's own
    assert _keys(wire) == _keys(acp) + _keys(lsp)
    assert not set(_keys(acp)) & set(_keys(lsp))
    # LSP's half is optional in the join: an ACP-only client sends none of it
    assert all(not f.required for f in msgspec.structs.fields(wire)[len(_keys(acp)) :])


def test_the_answer_is_acp_s_generated_fields_then_lsp_s_then_meta() -> None:
    """The answer's join copies ACP's fields (as generated: types, defaults, required) with
    `_meta` moved last, where the handshake has always written it (after LSP's keys)."""
    acp, lsp = initialize.AcpInitializeResult, LspInitializeResult
    assert _keys(acp)[-1] == "_meta"
    assert _keys(InitializeResult) == _keys(acp)[:-1] + _keys(lsp) + ["_meta"]
    fields = {f.encode_name: f for f in msgspec.structs.fields(InitializeResult)}
    for field in msgspec.structs.fields(acp):
        assert (fields[field.encode_name].type, fields[field.encode_name].required) == (field.type, field.required)
    assert all(not fields[key].required for key in _keys(lsp))


def test_a_hybrid_client_is_read_into_both_halves() -> None:
    acp, lsp = read_initialize(
        {
            "protocolVersion": 1,
            "clientInfo": {"name": "vscode", "version": "1"},
            "processId": 7,
            "rootUri": "file:///w",
            "capabilities": {"workspace": {"applyEdit": True}},
        }
    )
    assert (acp.protocol_version, acp.client_info and acp.client_info.name) == (1, "vscode")
    assert (lsp.process_id, lsp.root_uri) == (7, "file:///w")
    assert lsp.capabilities is not msgspec.UNSET and lsp.capabilities is not None
    assert lsp.capabilities.workspace is not None and lsp.capabilities.workspace.apply_edit is True


def test_an_acp_only_client_leaves_the_lsp_half_unset() -> None:
    _, lsp = read_initialize({"protocolVersion": 1, "clientCapabilities": {"terminal": True}})
    assert (lsp.capabilities, lsp.process_id, lsp.root_uri) == (msgspec.UNSET,) * 3
