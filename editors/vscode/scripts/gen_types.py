"""Write the VS Code extension's protocol types from protocol/schema.json.

    python3 scripts/gen_types.py           rewrite src/protocol/schema.ts
    python3 scripts/gen_types.py --check   exit 1 if the committed file is stale

(`npm run gen:types` / `npm run check:types` in editors/vscode.) Standard library only.
Every `$defs` entry becomes an exported type: an object an `interface` (a property not
in `required` is optional), a union or an enumeration a `type`. A literal tag (`type`,
`sessionUpdate`, `outcome`, `kind`: one value) is required, since it is always on the
wire; an optional property is not also `null` (Tether leaves such fields out rather than
sending null, and a client need not send null either), a required one keeps its `null`. The method table becomes four maps from method name to params (and result)
— `ClientRequests`, `ClientNotifications`, `AgentRequests`, `AgentNotifications` — so a
client names a method once and gets both types.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXTENSION = HERE.parent
SCHEMA_PATH = EXTENSION.parent.parent / "protocol" / "schema.json"
OUTPUT_PATH = EXTENSION / "src" / "protocol" / "schema.ts"
REGENERATE = "npm run gen:types (python3 scripts/gen_types.py)"
HEADER = """// generated — DO NOT EDIT.
// Types of the Tether protocol, from protocol/schema.json by scripts/gen_types.py
// (`npm run gen:types`); a test fails when this file is stale.
"""
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_REF = "#/$defs/"


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else json.dumps(name)


def _doc(text: str | None, indent: str = "") -> list[str]:
    if not text:
        return []
    lines = text.replace("*/", "*\\/").splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in lines), f"{indent} */"]


def _group(ts: str) -> str:
    """`ts` usable before `[]`."""
    return f"({ts})" if " | " in ts else ts


def ts_type(node: dict[str, Any]) -> str:
    """The TypeScript type of one schema node (no `$defs` entry: those are named)."""
    if "$ref" in node:
        return str(node["$ref"]).removeprefix(_REF)
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return " | ".join(json.dumps(v) for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            members: list[str] = []
            for member in node[key]:
                ts = ts_type(member)
                if ts not in members:
                    members.append(ts)
            return " | ".join(members)
    kind = node.get("type")
    if kind == "array":
        return f"{_group(ts_type(node['items']))}[]" if "items" in node else "unknown[]"
    if kind == "object":
        extra = node.get("additionalProperties")
        value = ts_type(extra) if isinstance(extra, dict) else "unknown"
        return f"{{ [key: string]: {value} }}"
    scalars = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}
    return scalars.get(str(kind), "unknown")


def _without_null(node: dict[str, Any]) -> str:
    members = node.get("anyOf")
    if members is None:
        return ts_type(node)
    kept = [m for m in members if m != {"type": "null"}]
    return ts_type({**node, "anyOf": kept}) if kept else "null"


def _tags(defs: dict[str, Any]) -> dict[str, set[str]]:
    """Definition name -> the tags it must carry as a member of a tagged union."""
    tags: dict[str, set[str]] = {}
    for definition in defs.values():
        for member in definition.get("oneOf", []):
            if "$ref" in member:
                name = member["$ref"].removeprefix(_REF)
                tags.setdefault(name, set()).update(member.get("required", []))
    return tags


def _interface(name: str, definition: dict[str, Any], tags: set[str]) -> list[str]:
    required = set(definition.get("required", [])) | tags
    lines = [*_doc(definition.get("description")), f"export interface {name} {{"]
    for prop, node in definition["properties"].items():
        description = node.get("description")
        if prop != "_meta" and description:
            lines += _doc(description, "  ")
        if prop in required or "const" in node or len(node.get("enum", ())) == 1:
            lines.append(f"  {_key(prop)}: {ts_type(node)};")
        else:
            lines.append(f"  {_key(prop)}?: {_without_null(node)};")
    lines.append("}")
    return lines


def _definition(name: str, definition: dict[str, Any], tags: set[str]) -> list[str]:
    if definition.get("type") == "object" and "properties" in definition:
        return _interface(name, definition, tags)
    return [*_doc(definition.get("description")), f"export type {name} = {ts_type(definition)};"]


def _method_maps(methods: dict[str, Any]) -> list[str]:
    maps: dict[str, list[str]] = {
        "ClientRequests": [],
        "ClientNotifications": [],
        "AgentRequests": [],
        "AgentNotifications": [],
    }
    for method, entry in methods.items():
        params = ts_type(entry["params"])
        senders = (
            ["Client", "Agent"]
            if entry["direction"] == "both"
            else (["Client"] if entry["direction"] == "client->agent" else ["Agent"])
        )
        for sender in senders:
            if entry["kind"] == "request":
                line = f"  {_key(method)}: {{ params: {params}; result: {ts_type(entry['result'])} }};"
                maps[f"{sender}Requests"].append(line)
            else:
                maps[f"{sender}Notifications"].append(f"  {_key(method)}: {params};")
    docs = {
        "ClientRequests": "Requests a client sends Tether: method -> params and result.",
        "ClientNotifications": "Notifications a client sends Tether: method -> params.",
        "AgentRequests": "Requests Tether sends the client: method -> params and the answer.",
        "AgentNotifications": "Notifications Tether sends the client: method -> params.",
    }
    lines: list[str] = []
    for name, entries in maps.items():
        lines += ["", *_doc(docs[name]), f"export interface {name} {{", *entries, "}"]
    return lines


def generate(schema: dict[str, Any]) -> str:
    defs: dict[str, Any] = schema["$defs"]
    tags = _tags(defs)
    lines = [
        f"export const PROTOCOL_VERSION = {int(schema['x-tether-protocol-version'])};",
    ]
    for name in sorted(defs):
        lines += ["", *_definition(name, defs[name], tags.get(name, set()))]
    lines += _method_maps(dict(sorted(schema["x-tether-methods"].items())))
    return HEADER + "\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = generate(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    try:
        current = OUTPUT_PATH.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    if args.check:
        if current != text:
            print(f"src/protocol/schema.ts is stale: run {REGENERATE}", file=sys.stderr)
            return 1
        print("src/protocol/schema.ts is up to date")
        return 0
    if current != text:
        OUTPUT_PATH.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {OUTPUT_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
