"""`initialize`'s answer is built from the protocol's classes on the start path (ACP's generated
ones, LSP's half and Tether's `_meta.tether` declared): these pin its bytes, key order
included, for every kind of client, refusals included, and check that the typed
`InitializeResult` of the schema reads it back whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from server_harness import settings_for

from tether import __version__
from tether.config.settings import RefusedSetting
from tether.server.handshake import handshake
from tether_protocol import InitializeResult, dumps, structure

if TYPE_CHECKING:
    from pathlib import Path

ACP = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
LSP = {"processId": None, "rootUri": None, "capabilities": {"textDocument": {}}}
BOTH = {**ACP, **LSP}
V2 = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "z", "version": "1"}}

_ACP_HALF = (
    '"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false,"audio":false,'
    '"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"list":{},'
    '"resume":{},"close":{},"delete":{}}},"agentInfo":{"name":"tether","title":"Tether","version":"VERSION"},'
    '"authMethods":[]'
)
_LSP_HALF = (
    '"capabilities":{"textDocumentSync":{"openClose":true,"change":2,"save":false},"experimental":{"tether":'
    '{"protocolVersion":1}},"executeCommandProvider":{"commands":["tether.ask","tether.cancel",'
    '"tether.newSession","tether.setMode"]},"codeActionProvider":{"codeActionKinds":["quickfix.tether",'
    '"refactor.tether"]}},"serverInfo":{"name":"tether","version":"VERSION"}'
)
_REFUSED = (
    '"configRefused":[{"key":"record","file":"/w/.tether.toml","reason":"moves data out",'
    '"message":"ignored \'record\' in workspace config /w/.tether.toml: moves data out"}]'
)
# main's answers before they were built from the classes (bench/RESULTS.md "shapes43")
ANSWERS = {
    ("acp", False): '{"protocolVersion":1,ACP,"_meta":{"tether":{"lsp":{LSP},"protocolVersions":[1,2]}}}',
    ("acp", True): '{"protocolVersion":1,ACP,"_meta":{"tether":{"lsp":{LSP},"protocolVersions":[1,2],REFUSED}}}',
    ("lsp", False): '{"protocolVersion":1,ACP,LSP}',
    ("lsp", True): '{"protocolVersion":1,ACP,LSP,"_meta":{"tether":{REFUSED}}}',
    ("both", False): '{"protocolVersion":1,ACP,LSP,"_meta":{"tether":{"protocolVersions":[1,2]}}}',
    ("both", True): '{"protocolVersion":1,ACP,LSP,"_meta":{"tether":{"protocolVersions":[1,2],REFUSED}}}',
    ("v2", True): (
        '{"protocolVersion":2,"info":{"name":"tether","title":"Tether","version":"VERSION"},"capabilities":'
        '{"session":{"prompt":{"embeddedContext":{}},"mcp":{"stdio":{},"http":{}},"delete":{}}},"authMethods":[],'
        '"_meta":{"tether":{"lsp":{LSP},"protocolVersions":[1,2],REFUSED}}}'
    ),
}
CLIENTS = {"acp": ACP, "lsp": LSP, "both": BOTH, "v2": V2}


def _expected(template: str) -> bytes:
    text = template.replace("ACP", _ACP_HALF).replace("LSP", _LSP_HALF).replace("REFUSED", _REFUSED)
    return text.replace("VERSION", __version__).encode()


@pytest.mark.parametrize(("client", "refuses"), list(ANSWERS), ids=[f"{c}-{r}" for c, r in ANSWERS])
def test_the_answer_is_byte_for_byte_main_s(tmp_path: Path, client: str, refuses: bool) -> None:
    refused = (RefusedSetting("record", "/w/.tether.toml", "moves data out"),) if refuses else ()
    result, _profile, _settings = handshake(CLIENTS[client], settings_for(tmp_path, refused=refused), tmp_path)
    assert dumps(result) == _expected(ANSWERS[client, refuses])


@pytest.mark.parametrize("params", [ACP, LSP, BOTH, {}], ids=["acp", "lsp", "both", "empty"])
def test_the_answer_is_the_typed_result_exactly(tmp_path: Path, params: dict[str, Any]) -> None:
    refused = RefusedSetting("record", str(tmp_path / ".tether.toml"), "moves data out")
    result, _profile, _settings = handshake(params, settings_for(tmp_path, refused=(refused,)), tmp_path)
    sent = msgspec.json.decode(dumps(result))
    typed = structure(sent, InitializeResult, method="initialize")
    assert typed.meta is not None and typed.meta.tether is not None
    assert [r.key for r in typed.meta.tether.config_refused or []] == ["record"]
    assert msgspec.json.decode(dumps(typed)) == sent  # nothing the class does not name, nothing lost
