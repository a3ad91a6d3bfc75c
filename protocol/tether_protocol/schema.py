"""`python -m tether_protocol.schema [--check] [--output PATH]`: write or check protocol/schema.json.

Owns: the file's exact text (`render()`), where it lives in a checkout, and `--check`'s exit 1
when it is stale. Must not: build any part of the schema itself (that is `_schema.build_schema()`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

_PACKAGE = Path(__file__).resolve().parent
# A checkout keeps the schema beside SPEC.md (protocol/schema.json); a wheel ships it inside
# the package (pyproject's force-include), and there is no protocol/ folder to write to
DEFAULT_PATH = _PACKAGE.parent / "schema.json" if (_PACKAGE.parent / "SPEC.md").is_file() else _PACKAGE / "schema.json"
REGENERATE = "python -m tether_protocol.schema"


def render() -> str:
    """The exact text of `schema.json`: sorted keys, 2-space indent, ASCII, final newline."""
    from ._schema import build_schema

    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description="Generate the Tether protocol's JSON Schema.")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_PATH,
        metavar="PATH",
        help="where the schema goes (default: protocol/schema.json of this checkout)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the file is missing or differs from the classes",
    )
    args = parser.parse_args(argv)
    path: Path = args.output
    shown = "protocol/schema.json" if path.resolve() == DEFAULT_PATH else str(path)
    text = render()
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None

    if args.check:
        if current != text:
            fix = REGENERATE if shown == "protocol/schema.json" else f"{REGENERATE} --output {path}"
            missing = " (missing)" if current is None else ""
            print(f"{shown} is stale{missing}; run {fix}", file=sys.stderr)
            return 1
        print(f"{shown} is up to date")
        return 0

    if current == text:
        print(f"{shown} is up to date")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
