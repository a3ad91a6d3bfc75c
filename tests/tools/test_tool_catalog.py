"""The built-in tools' catalog (tools/catalog.json): what the model is told of each tool
without importing it must be what the tool's class says, and a reference imports its
tool on first use and behaves as the tool.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tether.agent.subagent import with_delegate
from tether.tools.base import MutatingTool
from tether.tools.catalog import BUILTIN_CLASSES, CATALOG_PATH, ToolRef, builtin_refs, catalog_rows
from tether.tools.registry import ToolRegistry, builtin_tools


def test_the_catalog_is_what_the_tool_classes_say() -> None:
    # a changed description or argument without `python -m tether.tools.catalog` fails here
    assert json.loads(CATALOG_PATH.read_text(encoding="utf-8")) == catalog_rows()
    assert [row["name"] for row in catalog_rows()] == [tool.name for tool in builtin_refs()]
    assert len(BUILTIN_CLASSES) == len({name for name, _ in BUILTIN_CLASSES})


def test_a_registry_of_references_tells_the_model_what_the_tools_would() -> None:
    lazy = ToolRegistry(builtin_tools())
    real = ToolRegistry([ref.resolve() for ref in builtin_refs()])
    assert lazy.specs() == real.specs()
    assert lazy.names() == real.names()
    assert [(t.name, t.kind, t.read_only) for t in lazy] == [(t.name, t.kind, t.read_only) for t in real]


def test_get_gives_the_tool_itself_so_a_mutating_one_is_still_one() -> None:
    registry = ToolRegistry(builtin_tools())
    edit = registry.get("edit_file")
    assert isinstance(edit, MutatingTool) and not isinstance(edit, ToolRef)
    assert registry.get("edit_file") is edit  # made once
    assert registry.get("no_such_tool") is None


def test_a_reference_answers_what_its_row_lacks_from_the_tool() -> None:
    ref = next(r for r in builtin_refs() if r.name == "read_file")
    assert ref.untitled == ref.resolve().untitled  # not in the row: asked of the tool
    assert "loaded=True" in repr(ref)


def test_the_turns_registry_with_delegate_keeps_the_references() -> None:
    registry = with_delegate(ToolRegistry(builtin_tools()), max_steps=3)
    assert registry.names()[-1] == "delegate"
    assert all(isinstance(t, ToolRef) for t in registry if t.name != "delegate")


def test_building_the_registry_and_its_specs_imports_no_tool() -> None:
    probe = (
        "import sys\n"
        "from tether.tools.registry import ToolRegistry, builtin_tools\n"
        "r = ToolRegistry(builtin_tools()); r.specs(); [t.read_only for t in r]\n"
        "from tether.tools.catalog import BUILTIN_CLASSES\n"
        "print(sorted(m for m, _ in BUILTIN_CLASSES if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
