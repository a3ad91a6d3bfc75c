"""validate_args error messages, and the ToolRegistry the agent loop reads specs from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.tools.base import Tool, ToolContext, ToolError, validate_args
from tether.tools.glob_tool import GlobTool
from tether.tools.grep import GrepTool
from tether.tools.list_dir import ListDirArgs, ListDirTool
from tether.tools.read_file import ReadFileArgs, ReadFileTool
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.sandbox import WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path


def test_wrong_integer_names_the_field_and_the_expectation() -> None:
    with pytest.raises(ToolError) as caught:
        validate_args(ReadFileTool(), {"path": "a.py", "limit": "ten"})
    assert str(caught.value) == "read_file: 'limit' must be an integer >= 1, got \"ten\""


def test_integer_below_minimum_or_above_maximum_is_refused() -> None:
    with pytest.raises(ToolError, match=r"'offset' must be an integer >= 1, got 0"):
        validate_args(ReadFileTool(), {"path": "a.py", "offset": 0})
    with pytest.raises(ToolError, match=r"list_dir: 'depth' must be an integer between 1 and 5, got 9"):
        validate_args(ListDirTool(), {"depth": 9})


def test_booleans_are_not_integers_and_integers_are_not_booleans() -> None:
    with pytest.raises(ToolError, match="'limit' must be an integer"):
        validate_args(ReadFileTool(), {"path": "a.py", "limit": True})
    with pytest.raises(ToolError, match="grep: 'ignore_case' must be a boolean, got 1"):
        validate_args(GrepTool(), {"pattern": "x", "ignore_case": 1})


def test_missing_required_argument_is_named() -> None:
    with pytest.raises(ToolError, match=r"read_file: missing required argument 'path' \(a string\)"):
        validate_args(ReadFileTool(), {})


def test_unknown_argument_is_refused_with_the_allowed_names() -> None:
    with pytest.raises(ToolError) as caught:
        validate_args(ReadFileTool(), {"path": "a.py", "lines": 3})
    assert "unknown argument 'lines'" in str(caught.value)
    assert "path, offset, limit" in str(caught.value)


def test_wrong_string_type_and_non_object_arguments_are_refused() -> None:
    with pytest.raises(ToolError, match="glob: 'pattern' must be a string, got 3"):
        validate_args(GlobTool(), {"pattern": 3})
    with pytest.raises(ToolError, match="arguments must be a JSON object"):
        validate_args(GlobTool(), ["**/*.py"])


def test_defaults_are_filled_and_null_optionals_count_as_absent() -> None:
    assert validate_args(ListDirTool(), {"path": None}) == ListDirArgs(".", 1)
    assert validate_args(ReadFileTool(), {"path": "a", "limit": 5.0}) == ReadFileArgs("a", None, 5)
    # what approvals and the client are shown: defaults filled in, absent optionals left out
    assert ReadFileTool().dump(validate_args(ReadFileTool(), {"path": "a", "offset": None})) == {"path": "a"}
    assert GrepTool().dump(validate_args(GrepTool(), {"pattern": "x"})) == {
        "pattern": "x",
        "path": ".",
        "ignore_case": False,
        "max_results": 200,
    }


async def test_tools_validate_their_own_arguments_when_run(tmp_path: Path) -> None:
    ctx = ToolContext(WorkspaceSandbox(tmp_path))
    with pytest.raises(ToolError, match="'depth'"):
        await ListDirTool().call({"depth": "deep"}, ctx)


def test_every_schema_is_a_closed_object_with_described_required_fields() -> None:
    for tool in default_read_only_tools():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert tool.read_only
        assert tool.kind in ("read", "search")


def test_registry_keeps_registration_order_and_looks_tools_up_by_name() -> None:
    registry = ToolRegistry(default_read_only_tools())
    assert registry.names() == ["read_file", "list_dir", "glob", "grep"]
    assert [spec["name"] for spec in registry.specs()] == registry.names()
    assert set(registry.specs()[0]) == {"name", "description", "input_schema"}
    assert isinstance(registry.get("grep"), GrepTool)
    assert registry.get("write_file") is None
    assert "glob" in registry and len(registry) == 4


def test_registry_refuses_two_tools_with_one_name() -> None:
    with pytest.raises(ValueError, match="read_file"):
        ToolRegistry([ReadFileTool(), ReadFileTool()])


def test_titles_describe_the_call_for_a_person() -> None:
    tools: dict[str, Tool] = {tool.name: tool for tool in default_read_only_tools()}
    read_title = tools["read_file"].title_for({"path": "src/app.py", "offset": 10, "limit": 31})
    assert read_title == "Read src/app.py (lines 10-40)"
    assert tools["read_file"].title_for({"path": "src/app.py"}) == "Read src/app.py"
    assert tools["read_file"].title_for({"path": "src/app.py", "offset": 0}) == "Read src/app.py"
    assert tools["read_file"].title_for({"path": 7}) == "Read file"
    assert tools["grep"].title_for({"pattern": "foo", "path": "src"}) == "Search 'foo' in src"
    assert tools["glob"].title_for({"pattern": "**/*.py"}) == "Find '**/*.py'"
    assert tools["list_dir"].title_for({"path": "src", "depth": 2}) == "List src (depth 2)"
    assert tools["list_dir"].title_for({"depth": "bogus"}) == "List the workspace root"
    assert tools["list_dir"].title(ListDirArgs("src", 3)) == "List src (depth 3)"


def test_the_first_wrong_argument_in_schema_order_is_the_one_named() -> None:
    # a bound broken early wins over a wrong type later, as the model reads the schema
    with pytest.raises(ToolError, match=r"read_file: 'offset' must be an integer >= 1, got 0$"):
        validate_args(ReadFileTool(), {"path": "a.py", "offset": 0, "limit": True})
    with pytest.raises(ToolError, match=r"read_file: 'offset' must be an integer >= 1, got \[\]$"):
        validate_args(ReadFileTool(), {"path": "a.py", "offset": [], "limit": 0})
    # unknown keys are named before anything else in their object
    with pytest.raises(ToolError, match=r"unknown argument 'zz'"):
        validate_args(ReadFileTool(), {"path": 3, "zz": 1})
    # an integral float out of bounds is shown as the integer it stands for
    with pytest.raises(ToolError, match=r"list_dir: 'depth' must be an integer between 1 and 5, got 7$"):
        validate_args(ListDirTool(), {"depth": 7.0})


def test_the_schema_order_wins_over_the_order_the_keys_came_in() -> None:
    # msgspec stops at the first problem in the order the keys arrive; the model is told
    # the first in the order its schema lists them
    with pytest.raises(ToolError, match=r"read_file: 'offset' must be an integer >= 1, got 0$"):
        validate_args(ReadFileTool(), {"limit": "x", "offset": 0, "path": "a.py"})
    with pytest.raises(ToolError, match=r"read_file: missing required argument 'path' \(a string\)$"):
        validate_args(ReadFileTool(), {"limit": "ten"})
    with pytest.raises(ToolError, match=r"read_file: 'path' must be a string, got 5.0$"):
        validate_args(ReadFileTool(), {"limit": 2.5, "path": 5.0})


def test_a_configured_cap_is_the_class_the_call_is_checked_against() -> None:
    from tether.tools.run_command import RunCommandArgs, RunCommandTool

    capped = RunCommandTool(max_timeout=5)
    args = validate_args(capped, {"command": "ls"})
    assert isinstance(args, RunCommandArgs) and args.timeout == 5
    assert capped.dump(args) == {"command": "ls", "timeout": 5, "cwd": "."}
    with pytest.raises(ToolError, match=r"^run_command: timeout 6 s is over the 5 s cap; use at most 5"):
        validate_args(capped, {"command": "ls", "timeout": 6})
    # the default tool keeps its own cap: the capped class did not change it
    assert validate_args(RunCommandTool(), {"command": "ls", "timeout": 600}).timeout == 600
    assert RunCommandTool(max_timeout=5).args_type is capped.args_type
