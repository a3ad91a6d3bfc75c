"""The JSON Schemas the model is given are generated from each tool's args class; they
must mean exactly what the hand-written ones said (captured in fixtures/tool_schemas.json
before those were deleted): same properties, types, bounds, enums, defaults, descriptions
and required lists, every object closed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.run_command import RunCommandTool
from tether.tools.update_plan import UpdatePlanTool

if TYPE_CHECKING:
    from tether.tools.base import Tool

PINNED: dict[str, Any] = json.loads((Path(__file__).parent / "fixtures" / "tool_schemas.json").read_text())


def _tools() -> dict[str, Tool[Any]]:
    tools = [*default_read_only_tools(), UpdatePlanTool(), *default_mutating_tools(), RunCommandTool()]
    found: dict[str, Tool[Any]] = {tool.name: tool for tool in tools}
    found["run_command(max_timeout=5)"] = RunCommandTool(max_timeout=5)
    return found


@pytest.mark.parametrize("name", sorted(PINNED))
def test_generated_schema_is_the_hand_written_one(name: str) -> None:
    schema = _tools()[name].input_schema
    assert schema == PINNED[name]
    # order matters to a reader of `required` and of the "expected one of" message
    assert list(schema["properties"]) == list(PINNED[name]["properties"])
    assert schema["required"] == PINNED[name]["required"]


def test_every_tool_the_daemon_offers_is_pinned() -> None:
    assert set(_tools()) == set(PINNED)


def test_the_registry_sends_the_generated_schemas() -> None:
    registry = ToolRegistry([*default_read_only_tools(), *default_mutating_tools(), RunCommandTool(max_timeout=5)])
    specs = {spec["name"]: spec["input_schema"] for spec in registry.specs()}
    assert specs["edit_file"] == PINNED["edit_file"]
    assert specs["run_command"] == PINNED["run_command(max_timeout=5)"]
    # the schema goes to the model as JSON: every value in it must encode
    assert json.loads(json.dumps(specs)) == specs


def test_listing_the_schemas_and_checking_a_call_never_import_cattrs() -> None:
    # the arguments are msgspec Structs: cattrs (~12 ms to import) is not on a tool's path
    code = (
        "import sys\n"
        "from tether.tools.mutating import default_mutating_tools\n"
        "from tether.tools.registry import ToolRegistry, default_read_only_tools\n"
        "from tether.tools.run_command import RunCommandTool\n"
        "registry = ToolRegistry([*default_read_only_tools(), *default_mutating_tools(), RunCommandTool()])\n"
        "registry.specs()\n"
        "from tether.tools.base import validate_args\n"
        "validate_args(registry.get('read_file'), {'path': 'a', 'limit': 3})\n"
        "assert 'cattrs' not in sys.modules, 'cattrs imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
