"""What all four mutating tools share: sandbox and .git/ refusals, kept hunks, arguments."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pytest

from tether.tools.args import ToolArgs
from tether.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_args
from tether.tools.disk_io import DiskFileIO
from tether.tools.edit_file import Edit, EditFileTool
from tether.tools.ledger import ContentLedger
from tether.tools.mutating import default_mutating_tools, describe_hunks
from tether.tools.read_file import ReadFileTool
from tether.tools.sandbox import SandboxError, WorkspaceSandbox
from tether.tools.write_file import WriteFileTool

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {tool.name: tool for tool in default_mutating_tools()}


@pytest.fixture
def mctx(sandbox: WorkspaceSandbox) -> ToolContext:
    return ToolContext(sandbox, call_id="t", files=DiskFileIO(sandbox), reads=ContentLedger(sandbox))


@pytest.fixture
def escapes(write, root: Path, outside: Path) -> list[tuple[str, dict[str, Any]]]:
    write({"in.txt": "inside\n"})
    (root / "out").symlink_to(outside)  # a directory link leading out of the workspace
    (root / "secret-link").symlink_to(outside / "secret.txt")
    secret = str(outside / "secret.txt")
    return [
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("write_file", {"path": "out/new.txt", "content": "x"}),
        ("write_file", {"path": "secret-link", "content": "x"}),
        ("edit_file", {"path": secret, "edits": [{"old_text": "hunter2", "new_text": "x"}]}),
        ("edit_file", {"path": "out/secret.txt", "edits": [{"old_text": "hunter2", "new_text": "x"}]}),
        ("delete_path", {"path": secret}),
        ("delete_path", {"path": "out/secret.txt"}),
        ("delete_path", {"path": "../outside", "recursive": True}),
        ("move_path", {"source": secret, "destination": "stolen.txt"}),
        ("move_path", {"source": "out/secret.txt", "destination": "stolen.txt"}),
        ("move_path", {"source": "in.txt", "destination": "../outside/in.txt"}),
        ("move_path", {"source": "in.txt", "destination": "out/in.txt"}),
        ("move_path", {"source": "in.txt", "destination": str(outside / "deep" / "in.txt")}),
    ]


async def test_nothing_outside_the_workspace_is_ever_touched(
    mctx: ToolContext, escapes, root: Path, outside: Path
) -> None:
    for name, args in escapes:
        with pytest.raises(SandboxError, match="outside the workspace"):
            await TOOLS[name].call(args, mctx)
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "password = hunter2\n"
    assert (root / "in.txt").read_text() == "inside\n"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "evil"}),
        ("edit_file", {"path": ".git/HEAD", "edits": [{"old_text": "main", "new_text": "x"}]}),
        ("delete_path", {"path": ".git", "recursive": True}),
        ("delete_path", {"path": "sub/.git/config"}),
        ("move_path", {"source": "a.txt", "destination": ".git/a.txt"}),
        ("move_path", {"source": ".git/HEAD", "destination": "HEAD"}),
    ],
)
async def test_git_directory_is_refused(mctx: ToolContext, write, name: str, args: dict[str, Any]) -> None:
    write({".git/HEAD": "ref: refs/heads/main\n", "sub/.git/config": "", "a.txt": ""})
    with pytest.raises(ToolError) as caught:
        await TOOLS[name].call(args, mctx)
    message = str(caught.value)
    assert message.startswith("Tether does not change files under .git/ ('")
    assert "use git commands" in message


async def test_a_symlink_into_git_is_refused_too(mctx: ToolContext, write, root: Path) -> None:
    write({".git/config": "[core]\n"})
    (root / "cfg").symlink_to(".git/config")
    with pytest.raises(ToolError, match=r"Tether does not change files under \.git/ \('\.git/config'\)"):
        await TOOLS["write_file"].call({"path": "cfg", "content": "x"}, mctx)


BIG = "".join(f"line {n}\n" for n in range(1, 31))


async def test_only_the_accepted_hunks_are_applied(mctx: ToolContext, write, root: Path) -> None:
    write({"src/big.txt": BIG})
    await ReadFileTool().call({"path": "src/big.txt"}, mctx)
    tool = EditFileTool()
    args = {
        "path": "src/big.txt",
        "edits": [
            {"old_text": "line 2\n", "new_text": "LINE 2\n"},
            {"old_text": "line 15\n", "new_text": "LINE 15\n"},
            {"old_text": "line 28\n", "new_text": "LINE 28\n"},
        ],
    }
    previews = await tool.preview(validate_args(tool, args), mctx)
    path = str(root / "src/big.txt")
    result = await tool.apply(validate_args(tool, args), mctx, previews, accepted_hunks={path: [0, 2]})
    assert (root / "src/big.txt").read_text() == BIG.replace("line 2\n", "LINE 2\n").replace("line 28\n", "LINE 28\n")
    assert "The user kept hunks 1 and 3 of 3 in src/big.txt; hunk 2 was rejected and not applied." in result.text
    assert "+LINE 28" in result.text and "LINE 15" not in result.text
    # The ledger holds what was really written, so the model can continue without re-reading.
    await tool.call({"path": "src/big.txt", "edits": [{"old_text": "line 15\n", "new_text": "L15\n"}]}, mctx)


async def test_rejecting_every_hunk_writes_nothing(mctx: ToolContext, write, root: Path) -> None:
    write({"f.txt": "a\n"})
    await ReadFileTool().call({"path": "f.txt"}, mctx)
    tool = WriteFileTool()
    args = {"path": "f.txt", "content": "b\n"}
    previews = await tool.preview(validate_args(tool, args), mctx)
    result = await tool.apply(
        validate_args(tool, args), mctx, previews, accepted_hunks={"f.txt": []}
    )  # relative keys work too
    assert result.text.startswith("The user rejected the change to f.txt (all 1 hunk); nothing was written.")
    assert (root / "f.txt").read_text() == "a\n"


def test_hunk_descriptions() -> None:
    assert describe_hunks("src/app.py", [0, 2], 4) == (
        "The user kept hunks 1 and 3 of 4 in src/app.py; hunks 2 and 4 were rejected and not applied."
    )
    assert (
        describe_hunks("a", [1, 2, 3], 5)
        == "The user kept hunks 2, 3 and 4 of 5 in a; hunks 1 and 5 were rejected and not applied."
    )


def test_edits_array_items_are_validated_by_name() -> None:
    tool = EditFileTool()
    good = {"old_text": "a", "new_text": "b"}
    with pytest.raises(ToolError) as caught:
        validate_args(tool, {"path": "x", "edits": [good, {"old_text": 5, "new_text": "b"}]})
    assert str(caught.value) == "edit_file: 'edits[1].old_text' must be a string, got 5"
    cases = [
        ({"path": "x", "edits": []}, "'edits' must be an array of objects with at least 1 item, got []"),
        ({"path": "x", "edits": "a->b"}, "'edits' must be an array of objects with at least 1 item"),
        ({"path": "x", "edits": ["a"]}, "'edits[0]' must be an object, got \"a\""),
        ({"path": "x", "edits": [{"old_text": "a"}]}, "missing required argument 'edits[0].new_text' (a string)"),
        ({"path": "x", "edits": [{**good, "all": True}]}, "unknown argument 'edits[0].all'; expected one of: old_text"),
        ({"path": "x", "edits": [{**good, "replace_all": "yes"}]}, "'edits[0].replace_all' must be a boolean"),
    ]
    for args, message in cases:
        with pytest.raises(ToolError) as caught:
            validate_args(tool, args)
        assert message in str(caught.value)
    clean = validate_args(tool, {"path": "x", "edits": [good, {**good, "replace_all": None}]})
    assert clean.edits == (Edit("a", "b"), Edit("a", "b", replace_all=False))
    assert tool.dump(clean)["edits"] == [{**good, "replace_all": False}, {**good, "replace_all": False}]


class _Pick(ToolArgs, frozen=True):
    mode: Literal["fast", "safe"] = "safe"


class _EnumTool(Tool[_Pick]):
    name: ClassVar[str] = "pick"
    description: ClassVar[str] = "test"
    args_type = _Pick
    kind: ClassVar[str] = "other"

    async def run(self, args: _Pick, ctx: ToolContext) -> ToolResult:
        return ToolResult("")


def test_string_enums_are_checked() -> None:
    assert _EnumTool().input_schema["properties"] == {
        "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"}
    }
    assert validate_args(_EnumTool(), {}) == _Pick("safe")
    assert validate_args(_EnumTool(), {"mode": "fast"}) == _Pick("fast")
    with pytest.raises(ToolError, match=r"pick: 'mode' must be one of \"fast\", \"safe\", got \"quick\""):
        validate_args(_EnumTool(), {"mode": "quick"})


def test_default_mutating_tools_have_closed_schemas_kinds_and_titles() -> None:
    tools = default_mutating_tools()
    assert [t.name for t in tools] == ["write_file", "edit_file", "delete_path", "move_path"]
    assert [t.kind for t in tools] == ["edit", "edit", "delete", "move"]
    for tool in tools:
        assert not tool.read_only
        assert tool.input_schema["additionalProperties"] is False
        assert set(tool.input_schema["required"]) <= set(tool.input_schema["properties"])
        assert isinstance(tool.title_for({}), str) and isinstance(tool.title_for({"path": 3}), str)
    assert tools[0].title_for({"path": "a.py", "content": ""}) == "Write a.py"
    assert tools[0].title_for({"path": 3}) == "Write file"
    edit = {"path": "a.py", "edits": [{"old_text": "a", "new_text": "b"}]}
    assert tools[1].title_for(edit) == tools[1].title(validate_args(tools[1], edit)) == "Edit a.py"
