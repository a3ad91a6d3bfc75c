"""The generated ACP v1 types (protocol/tools/gen_acp.py + acp_v1_table.py): the checked-in
modules are what the vendored schema and the table give, a stale one is caught, and Tether's
v1 classes are those modules' (no hand twin beside them)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "protocol" / "tether_protocol" / "acp_v1"
AREAS = sorted(p.stem for p in GENERATED.glob("*.py") if p.stem != "__init__")


def _check(v1_out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "protocol/tools/gen_acp.py", "--check", "--v1-out", str(v1_out)],
        cwd=ROOT, capture_output=True, text=True,
    )


def test_the_checked_in_v1_modules_are_what_the_schema_and_the_table_generate() -> None:
    done = _check(GENERATED)
    assert done.returncode == 0, done.stderr
    assert {"sessions", "updates", "content", "client_requests", "initialize"} <= set(AREAS)


@pytest.mark.parametrize("area", ["sessions", "updates"])
def test_a_hand_edit_of_a_generated_module_is_reported_as_stale(tmp_path: Path, area: str) -> None:
    copy = tmp_path / "acp_v1"
    shutil.copytree(GENERATED, copy)
    edited = copy / f"{area}.py"
    edited.write_text(edited.read_text().replace("session_id: str", "session_id: int", 1))
    done = _check(copy)
    assert done.returncode == 1
    assert f"{edited} is stale" in done.stderr
    assert "is stale" not in done.stderr.replace(f"{edited} is stale", "")  # only the edited one


def test_the_generator_refuses_a_field_upstream_does_not_have_unless_its_type_is_given(tmp_path: Path) -> None:
    table = (ROOT / "protocol" / "tools" / "acp_v1_table.py").read_text()
    tools = tmp_path / "tools"
    shutil.copytree(ROOT / "protocol" / "tools", tools)
    entry = '"ListSessionsRequest", ["cwd", "cursor", META]'
    assert entry in table
    (tools / "acp_v1_table.py").write_text(table.replace(entry, '"ListSessionsRequest", ["cwd", "no_such_field", META]'))
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import acp_v1; from pathlib import Path;"
         " acp_v1.generate_v1(Path(sys.argv[2]), 'x')", str(tools), str(ROOT / "protocol" / "upstream" / "acp-v1" / "schema.json")],
        capture_output=True, text=True,
    )
    assert done.returncode != 0
    assert "ListSessionsParams.no_such_field: not in upstream ListSessionsRequest" in done.stderr


@pytest.mark.parametrize(("facade", "names"), [
    ("_sessions", ["NewSessionParams", "NewSessionResult", "SessionInfo", "SetModeParams", "EmptyResult"]),
    ("_updates", ["SessionNotification", "ToolCall", "ToolCallUpdate", "AgentMessageChunk", "Plan"]),
    ("_client_requests", ["RequestPermissionParams", "RequestPermissionResult", "ReadTextFileParams"]),
    ("_common", ["TextContent", "DiffContent", "ToolCallLocation", "Implementation"]),
    ("_initialize", ["ClientCapabilities", "AgentCapabilities"]),
])
def test_tethers_v1_classes_are_the_generated_ones(facade: str, names: list[str]) -> None:
    module = importlib.import_module(f"tether_protocol.{facade}")
    for name in names:
        cls = getattr(module, name)
        assert cls.__module__.startswith("tether_protocol.acp_v1."), f"{facade}.{name} is declared by hand"


def test_a_generated_class_reads_and_writes_the_v1_wire_as_before() -> None:
    from tether_protocol import SessionNotification, ToolCall, UpdateMeta, UpdateTetherMeta

    note = SessionNotification(session_id="s1", update=ToolCall(
        tool_call_id="c1", title="ls", meta=UpdateMeta(tether=UpdateTetherMeta(approved_by="rule")),
    ))
    line = msgspec.json.encode(note)
    # the tag first, `kind` and `status` written with their defaults, unset fields left out
    assert line == (b'{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"ls",'
                    b'"kind":"other","status":"pending","_meta":{"tether":{"approvedBy":"rule"}}}}')
    assert msgspec.json.decode(line, type=SessionNotification) == note
