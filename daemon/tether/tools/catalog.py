"""Tether's own tools as the model sees them, without importing their modules.

Owns: the static table catalog.json (each built-in tool's module, class, name, kind,
read_only, description and input schema, written by `write_catalog` from the classes),
and `ToolRef`, which stands for a tool and imports it on first use beyond that table.
Must not: run tools, or be edited by hand (tests check it equals what the classes give).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # annotations only: importing base (attrs, the protocol's types) is what this module saves
    from tether.tools.args import JsonSchema
    from tether.tools.base import Tool

__all__ = ["CATALOG_PATH", "ToolRef", "builtin_refs", "catalog_rows", "write_catalog"]

CATALOG_PATH = Path(__file__).with_name("catalog.json")
# (module, class) of each built-in tool, in the order the model sees them
BUILTIN_CLASSES = (
    ("tether.tools.read_file", "ReadFileTool"),
    ("tether.tools.list_dir", "ListDirTool"),
    ("tether.tools.glob_tool", "GlobTool"),
    ("tether.tools.grep", "GrepTool"),
    ("tether.tools.update_plan", "UpdatePlanTool"),
    ("tether.tools.write_file", "WriteFileTool"),
    ("tether.tools.edit_file", "EditFileTool"),
    ("tether.tools.delete_path", "DeletePathTool"),
    ("tether.tools.move_path", "MovePathTool"),
    ("tether.tools.run_command", "RunCommandTool"),
    ("tether.tools.remember", "RememberTool"),
)


class ToolRef:
    """A built-in tool known by its catalog row; anything beyond the row imports it."""

    __slots__ = ("_module", "_class", "_tool", "name", "description", "input_schema", "kind", "read_only")

    def __init__(self, row: dict[str, Any]) -> None:
        self._module: str = row["module"]
        self._class: str = row["class"]
        self._tool: Tool[Any] | None = None
        self.name: str = row["name"]
        self.description: str = row["description"]
        self.input_schema: JsonSchema = row["input_schema"]
        self.kind: str = row["kind"]
        self.read_only: bool = row["read_only"]

    def resolve(self) -> Tool[Any]:
        """The tool itself (its module is imported and the instance made once)."""
        if self._tool is None:
            tool_class = getattr(importlib.import_module(self._module), self._class)
            self._tool = tool_class()
        return self._tool

    def __getattr__(self, attribute: str) -> Any:
        # only reached for what the row does not hold (slots are all set in __init__)
        return getattr(self.resolve(), attribute)

    def __repr__(self) -> str:
        return f"ToolRef({self.name!r}, loaded={self._tool is not None})"


def builtin_refs() -> list[ToolRef]:
    """A fresh reference per built-in tool, read from catalog.json."""
    rows: list[dict[str, Any]] = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    return [ToolRef(row) for row in rows]


def catalog_rows() -> list[dict[str, Any]]:
    """The table as the tool classes give it now (imports every tool)."""
    rows = []
    for module, class_name in BUILTIN_CLASSES:
        tool: Tool[Any] = getattr(importlib.import_module(module), class_name)()
        rows.append(
            {
                "module": module,
                "class": class_name,
                "name": tool.name,
                "kind": tool.kind,
                "read_only": tool.read_only,
                "description": tool.description,
                "input_schema": tool.input_schema,
            }
        )
    return rows


def write_catalog() -> None:
    """Rewrite catalog.json from the classes (`python -m tether.tools.catalog`)."""
    CATALOG_PATH.write_text(json.dumps(catalog_rows(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_catalog()
