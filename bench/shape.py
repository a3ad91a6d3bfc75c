"""The code-shape counts issue 17 asks for, over daemon/, protocol/ and clients/.

    python bench/shape.py

`dict[str, Any]` occurrences, the longest functions, and modules over 400 lines. Printed,
not asserted (the static checks in tests/test_static_checks.py hold the rules that are).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("daemon/tether", "protocol/tether_protocol", "clients/tether_client")


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def functions(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno is not None
            found.append((node.end_lineno - node.lineno + 1, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return found


def main() -> None:
    files = sources()
    dict_any = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8").count("dict[str, Any]") for p in files}
    longest = sorted((f for p in files for f in functions(p)), reverse=True)
    big = sorted(
        ((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT))) for p in files), reverse=True
    )
    print(f"dict[str, Any]: {sum(dict_any.values())} in {sum(1 for n in dict_any.values() if n)} files")
    for name, n in sorted(dict_any.items(), key=lambda kv: -kv[1])[: int(sys.argv[1]) if len(sys.argv) > 1 else 10]:
        if n:
            print(f"  {n:4d} {name}")
    print("longest functions:")
    for n, where in longest[:5]:
        print(f"  {n:4d} {where}")
    print(f"functions over 60 lines: {sum(1 for n, _ in longest if n > 60)}")
    print("modules over 400 lines:", [f"{name} ({n})" for n, name in big if n > 400] or "none")


if __name__ == "__main__":
    main()
