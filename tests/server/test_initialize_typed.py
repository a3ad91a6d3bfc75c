"""`initialize`'s answer is built on the start path without the converter (cattrs is not
imported before the first session): these check that what it builds is exactly the typed
`InitializeResult` of the schema, for every kind of client, refusals included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tether_protocol import InitializeResult, structure, unstructure

from tether.config.settings import RefusedSetting
from tether.server.handshake import handshake

from server_harness import settings_for

ACP = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
LSP = {"processId": None, "rootUri": None, "capabilities": {"textDocument": {}}}
BOTH = {**ACP, **LSP}


@pytest.mark.parametrize("params", [ACP, LSP, BOTH, {}], ids=["acp", "lsp", "both", "empty"])
def test_the_answer_is_the_typed_result_exactly(tmp_path: Path, params: dict[str, Any]) -> None:
    result, _profile, _settings = handshake(params, settings_for(tmp_path), tmp_path)
    typed = structure(result, InitializeResult, method="initialize")
    assert unstructure(typed) == result  # nothing the class does not name, nothing lost


def test_refused_workspace_settings_are_part_of_the_typed_answer(tmp_path: Path) -> None:
    refused = RefusedSetting("record", str(tmp_path / ".tether.toml"), "moves data out")
    settings = settings_for(tmp_path, refused=(refused,))
    result, _profile, _settings = handshake(ACP, settings, tmp_path)
    typed = structure(result, InitializeResult, method="initialize")
    assert typed.meta is not None and typed.meta.tether is not None
    assert [r.key for r in typed.meta.tether.config_refused or []] == ["record"]
    assert unstructure(typed) == result
