"""read_file: numbered lines, windows, caps, and errors the model can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError, ToolLocation
from tether.tools.read_file import MAX_OUTPUT_BYTES, ReadFileTool
from tether.tools.sandbox import SandboxError, WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path

TOOL = ReadFileTool()


async def test_lines_come_back_numbered_like_cat_n(ctx: ToolContext, write, root: Path) -> None:
    write({"src/app.py": "import os\n\nprint(os.getcwd())\n"})
    result = await TOOL.call({"path": "src/app.py"}, ctx)
    assert result.text == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())"
    assert not result.is_error
    assert result.locations == [ToolLocation(str(root / "src" / "app.py"), 1)]


async def test_offset_and_limit_select_a_window_and_say_how_to_continue(ctx: ToolContext, write) -> None:
    write({"f.txt": "".join(f"line {n}\n" for n in range(1, 6))})
    result = await TOOL.call({"path": "f.txt", "offset": 2, "limit": 2}, ctx)
    assert result.text == (
        "     2\tline 2\n     3\tline 3\n[truncated: showing lines 2-3 of 5; use offset=4 to read more]"
    )
    assert result.locations[0].line == 2


async def test_window_reaching_the_end_has_no_truncation_note(ctx: ToolContext, write) -> None:
    write({"f.txt": "a\nb\nc"})  # no trailing newline: still three lines
    result = await TOOL.call({"path": "f.txt", "offset": 2}, ctx)
    assert result.text == "     2\tb\n     3\tc"


async def test_offset_past_the_end_names_the_line_count(ctx: ToolContext, write) -> None:
    write({"f.txt": "a\nb\n"})
    with pytest.raises(ToolError, match=r"offset 9 is past the end of 'f.txt', which has 2 lines"):
        await TOOL.call({"path": "f.txt", "offset": 9}, ctx)


async def test_long_lines_are_cut_with_a_marker(ctx: ToolContext, write) -> None:
    write({"min.js": "x" * 2500 + "\nshort\n", "huge.js": "y" * 100_000 + "\r\nend\n"})
    text = (await TOOL.call({"path": "min.js"}, ctx)).text
    first = text.splitlines()[0]
    assert first == "     1\t" + "x" * 2000 + " [... line truncated, 500 more characters]"
    huge = (await TOOL.call({"path": "huge.js"}, ctx)).text.splitlines()
    assert huge[0].endswith(" [... line truncated, 98000 more characters]")
    assert huge[1] == "     2\tend"


async def test_output_is_capped_at_256_kib_with_a_note(ctx: ToolContext, write) -> None:
    write({"big.txt": "".join(f"{n:05d} " + "z" * 200 + "\n" for n in range(1, 2001))})
    text = (await TOOL.call({"path": "big.txt"}, ctx)).text
    assert len(text.encode()) <= MAX_OUTPUT_BYTES + 200
    last_line = text.splitlines()[-1]
    assert last_line.startswith("[truncated: showing lines 1-")
    assert "of 2000; use offset=" in last_line


async def test_a_window_deep_in_a_large_file_is_read(ctx: ToolContext, write) -> None:
    write({"log.txt": "".join(f"entry {n}\n" for n in range(1, 200_001))})
    result = await TOOL.call({"path": "log.txt", "offset": 199_999, "limit": 5}, ctx)
    assert result.text == "199999\tentry 199999\n200000\tentry 200000"


async def test_crlf_line_endings_and_utf8_bom_are_not_shown(ctx: ToolContext, write) -> None:
    write({"win.txt": b"\xef\xbb\xbfhello\r\nworld\r\n"})
    assert (await TOOL.call({"path": "win.txt"}, ctx)).text == "     1\thello\n     2\tworld"


async def test_empty_file_says_so(ctx: ToolContext, write) -> None:
    write({"empty.txt": ""})
    assert (await TOOL.call({"path": "empty.txt"}, ctx)).text == "(empty file)"


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", b"caf\xe9 au lait\n"])
async def test_binary_files_are_refused_with_their_size(ctx: ToolContext, write, content: bytes) -> None:
    write({"img.png": content})
    with pytest.raises(ToolError) as caught:
        await TOOL.call({"path": "img.png"}, ctx)
    assert str(caught.value) == (
        f"'img.png' looks like a binary file ({len(content)} bytes); read_file only returns text"
    )


async def test_directory_points_to_list_dir(ctx: ToolContext, write) -> None:
    write({"src/a.py": ""})
    with pytest.raises(ToolError, match=r"'src' is a directory.*use list_dir"):
        await TOOL.call({"path": "src"}, ctx)


async def test_missing_file_suggests_close_names(ctx: ToolContext, write) -> None:
    write({"src/main.py": "", "src/models.py": ""})
    with pytest.raises(ToolError) as caught:
        await TOOL.call({"path": "src/mian.py"}, ctx)
    assert str(caught.value) == "no such file 'src/mian.py'; did you mean 'src/main.py'?"


async def test_missing_directory_is_mentioned(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"no such file 'nope/a.py' \(the directory 'nope' does not exist either\)"):
        await TOOL.call({"path": "nope/a.py"}, ctx)


async def test_paths_outside_the_workspace_are_refused(ctx: ToolContext, outside: Path) -> None:
    with pytest.raises(SandboxError, match="outside the workspace"):
        await TOOL.call({"path": str(outside / "secret.txt")}, ctx)


async def test_open_editor_buffer_is_read_instead_of_disk(sandbox: WorkspaceSandbox, write, root: Path) -> None:
    write({"a.py": "on disk\n"})
    documents = {str(root / "a.py"): "unsaved\nedit", str(root / "new.py"): "never saved\n"}
    ctx = ToolContext(sandbox, documents=documents)
    assert (await TOOL.call({"path": "a.py"}, ctx)).text == "     1\tunsaved\n     2\tedit"
    assert (await TOOL.call({"path": "new.py"}, ctx)).text == "     1\tnever saved"
    window = await TOOL.call({"path": "a.py", "limit": 1}, ctx)
    assert window.text.endswith("[truncated: showing lines 1-1 of 2; use offset=2 to read more]")


def test_locations_are_known_before_running_and_never_raise(sandbox: WorkspaceSandbox, root: Path) -> None:
    assert TOOL.locations_for({"path": "src/a.py", "offset": 7}, sandbox) == [ToolLocation(str(root / "src/a.py"), 7)]
    assert TOOL.locations_for({"path": "../escape"}, sandbox) == []
    assert TOOL.locations_for({"path": 12}, sandbox) == []
    assert TOOL.locations_for({}, sandbox) == []
