"""ACP's upstream JSON schemas -> msgspec Structs, checked in (issue 32 item 1, package A).

    .venv/bin/python protocol/tools/gen_acp.py            # writes acp_v2/*.py (areas) and acp_v1/*.py
    .venv/bin/python protocol/tools/gen_acp.py --check    # exit 1 if a file is stale

v1 (`protocol/upstream/acp-v1/schema.json` -> `acp_v1/<area>.py`) is `acp_v1.py`'s: only the
classes Tether uses, listed per area with Tether's deliberate differences in `acp_v1_table.py`.

Owns: the mapping from the schema's `$defs` (default: the vendored v2 Preview,
`protocol/upstream/acp-v2-preview/schema.unstable.json`) to Structs, one module per area
(`acp_v2_areas.py`; `schema_types.py` names them all); a schema update is: copy the new file
in, run this. Must not: be imported by the daemon.
The mapping: object with `properties` -> Struct (keyword-only, fields in the schema's order:
the wire's key order; wire names kept by `field(name=...)`, optional fields UNSET so they are
left out); `anyOf` whose members each pin one property to a `const` -> a tagged union (one
Struct per tag, the referenced object's fields copied in); with a catch-all member
(`"title": "other"`) -> an `OpenUnion` subclass (`acp_v2/_open.py`) whose `value` is the known
variant or the unknown object as it came; a variant that is itself an open union
(`state_update` -> `state`) -> one Struct per inner variant under the outer tag, the inner
tag a required `Literal` field; open enums -> `str`.
Not faithful (reported by `--report`): `x-deserialize-default-on-error` (a bad optional
value fails the message instead of becoming its default), untagged unions of two object or
two array types (typed `Any`), the fields an object's own variants add (the idle state's
`error`: kept as optional fields, not tied to their tag).
"""

from __future__ import annotations

import argparse
import collections
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

from acp_v2_areas import AREAS, Chunk, area_module, area_of, facade

ROOT = Path(__file__).resolve().parents[1]
V1_SCHEMA = ROOT / "upstream" / "acp-v1" / "schema.json"
V1_OUT = ROOT / "tether_protocol" / "acp_v1"
DEFAULT = ROOT / "upstream" / "acp-v2-preview" / "schema.unstable.json"
OUT = ROOT / "tether_protocol" / "acp_v2"
Schema = dict[str, Any]


def snake(name: str) -> str:
    out = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().lstrip("_") or "meta"
    return out + "_" if keyword.iskeyword(out) or out in ("list", "type", "id", "input") else out


def is_open_union(s: Schema) -> bool:
    return any(m.get("title") == "other" or "not" in m for m in s.get("anyOf", s.get("oneOf", [])))


class Generator:
    def __init__(self, defs: dict[str, Schema], source: str) -> None:
        self.defs = defs
        self.source = source
        self.lines: list[str] = []
        self.lossy: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, list[str]] = collections.defaultdict(list)
        self.noted: set[tuple[str, str]] = set()
        self.kinds: collections.Counter[str] = collections.Counter()
        self.refs: set[str] = set()  # the `$defs` the definition being emitted uses (its imports)
        self.tagged_names = {n for n, s in defs.items() if ("anyOf" in s or "oneOf" in s) and self.tagged(s)}

    def note(self, what: str, where: str) -> None:
        if (what, where) in self.noted:  # a field is typed again where a variant copies it
            return
        self.noted.add((what, where))
        self.lossy[what] += 1
        if len(self.examples[what]) < 4:
            self.examples[what].append(where)

    # ---- types ---------------------------------------------------------------------------

    def type_of(self, s: Schema, where: str) -> str:
        if s.get("x-deserialize-default-on-error"):
            self.note("x-deserialize-default-on-error (bad value -> default)", where)
        if "$ref" in s:
            return self.ref(s["$ref"])
        if "allOf" in s and len(s["allOf"]) == 1:
            return self.type_of(s["allOf"][0], where)
        if "const" in s:
            return f"Literal[{json.dumps(s['const'])}]"
        if "enum" in s:
            return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"]) + "]"
        if "anyOf" in s or "oneOf" in s:
            members = [self.type_of(m, where) for m in s.get("anyOf", s.get("oneOf", []))]
            return self.union(members, where)
        kind = s.get("type")
        if isinstance(kind, list):
            return self.union([self.type_of({**s, "type": k}, where) for k in kind], where)
        if kind == "array":
            return f"list[{self.type_of(s.get('items', {}), where)}]"
        if kind == "object":
            extra = s.get("additionalProperties")
            return f"dict[str, {self.type_of(extra, where)}]" if isinstance(extra, dict) else "dict[str, Any]"
        if kind == "integer":
            bounds = [f"{k}={s[m]}" for k, m in (("ge", "minimum"), ("le", "maximum")) if m in s]
            return f"Annotated[int, Meta({', '.join(bounds)})]" if bounds else "int"
        return {"string": "str", "boolean": "bool", "number": "float", "null": "None"}.get(kind or "", "Any")

    def union(self, members: list[str], where: str) -> str:
        unique = list(dict.fromkeys(members))
        objects = [
            m
            for m in unique
            if m not in ("str", "int", "bool", "float", "None", "Any")
            and not m.startswith(("Literal", "list", "Annotated"))
        ]
        if len([m for m in objects if m.startswith("dict") or m in self.struct_names()]) > 1 and not all(
            m in self.tagged_names for m in objects
        ):
            self.note("untagged union of object types", where)
            return "Any"
        if len([m for m in unique if m.startswith("list")]) > 1:
            self.note("untagged union of array types", where)
            return "list[Any]"
        return unique[0] if len(unique) == 1 else "Union[" + ", ".join(unique) + "]"

    def struct_names(self) -> set[str]:
        return {n for n, s in self.defs.items() if "properties" in s}

    def ref(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[1]
        target = self.defs[name]
        if set(target) <= {"type", "description", "title", "format", "minimum", "maximum"}:
            return self.type_of(target, name)  # SessionId & co: the scalar
        self.refs.add(name)
        return name

    # ---- definitions -----------------------------------------------------------------

    def fields(self, s: Schema, where: str) -> list[str]:
        required = set(s.get("required", []))
        out = []  # the schema's order (the Structs are keyword-only): the wire's key order
        for key, prop in s.get("properties", {}).items():
            py = snake(key)
            tp = self.type_of(prop, f"{where}.{key}")
            if key in required:
                out.append(f"    {py}: {tp} = field(name={key!r})" if py != key else f"    {py}: {tp}")
            else:
                name = f", name={key!r}" if py != key else ""
                out.append(f"    {py}: Union[{tp}, UnsetType] = field(default=UNSET{name})")
        return out

    def merged_fields(self, s: Schema, where: str) -> list[str]:
        """The optional fields an object's variants add (the idle state's `error` when its
        `stopReason` is `error`): kept, not tied to their tag (a tag union here would need a
        variant for a missing tag). A variant's required field is optional here."""
        known = set(s.get("properties", {}))
        added: dict[str, Schema] = {}
        for m in s.get("anyOf", s.get("oneOf", [])):
            refs = [self.defs[r["$ref"].rsplit("/", 1)[1]] for r in m.get("allOf", []) if "$ref" in r]
            for ref in [*refs, m]:
                added |= {k: p for k, p in ref.get("properties", {}).items() if k not in known}
        if added:
            self.note("a variant's fields merged as optional (not tied to its tag)", where)
        return self.fields({"properties": added}, where)

    def tagged(self, s: Schema) -> str | None:
        """The tag property of an `anyOf` whose members each pin one to a const, else None."""
        tags = set()
        for m in s.get("anyOf", s.get("oneOf", [])):
            pinned = [k for k, p in m.get("properties", {}).items() if "const" in p]
            if m.get("title") == "other" or "not" in m:
                continue
            if len(pinned) != 1:
                return None
            tags.add(pinned[0])
        return tags.pop() if len(tags) == 1 else None

    def emit(self, name: str, s: Schema) -> None:
        tag = self.tagged(s) if "anyOf" in s or "oneOf" in s else None
        if tag is not None:
            self.kinds["tagged union"] += 1
            self.emit_tagged(name, s, tag)
        elif "properties" in s:
            self.kinds["struct"] += 1
            body = self.fields(s, name) + self.merged_fields(s, name) or ["    pass"]
            self.lines += [f"class {name}(Struct, kw_only=True, omit_defaults=True):", *body, ""]
        else:
            self.kinds["alias / enum"] += 1
            if any(m.get("title") == "unknown" for m in s.get("anyOf", [])):
                self.note("open enum (known values + any string) -> str", name)
                self.lines += [f"{name} = str", ""]
                return
            self.lines += [f"{name} = {self.type_of(s, name)}", ""]

    def emit_tagged(self, name: str, s: Schema, tag: str) -> None:
        base = f"{name}Base"
        shared = {k: v for k, v in s.items() if k not in ("anyOf", "oneOf")}
        shared_fields = self.fields(shared, name) if "properties" in s else []
        self.lines += [
            f"class {base}(Struct, kw_only=True, omit_defaults=True, tag_field={tag!r}):",
            *(shared_fields or ["    pass"]),
            "",
        ]
        variants = []
        is_open = False
        for m in s.get("anyOf", s.get("oneOf", [])):
            if m.get("title") == "other" or "not" in m:
                is_open = True
                continue
            value = m["properties"][tag]["const"]
            cls = f"{name}_{re.sub(r'[^0-9A-Za-z]', '_', str(value))}"
            # msgspec allows one Struct base with fields: the referenced object's fields are
            # copied into each variant (flattened), the shared ones come from the base
            refs = [r["$ref"].rsplit("/", 1)[1] for r in m.get("allOf", []) if "$ref" in r]
            nested = [r for r in refs if self.tagged(self.defs[r]) is not None]
            if nested and is_open_union(self.defs[nested[0]]) and set(m.get("properties", {})) == {tag}:
                self.emit_nested(cls, base, value, nested[0])
                variants.append((value, cls))
                continue
            if nested:
                self.note("a variant that is a closed tagged union (its fields are not checked)", cls)
            own = self.variant_fields(m, tag, cls)
            self.lines += [f"class {cls}({base}, kw_only=True, tag={value!r}):", *(own or ["    pass"]), ""]
            variants.append((value, cls))
        if is_open:  # an unknown tag decodes too: `value` keeps the object as it came
            self.kinds["open union"] += 1
            known = ", ".join(f"{v!r}: {cls}" for v, cls in variants)
            self.lines += [f"class {name}(OpenUnion):", f"    tag_field = {tag!r}", f"    known = {{{known}}}", ""]
        else:
            self.lines += [f"{name} = Union[{', '.join(cls for _, cls in variants)}]", ""]

    def variant_fields(self, m: Schema, tag: str, cls: str) -> list[str]:
        """A variant's fields: its referenced objects' (copied in), then its own but the tag."""
        own = []
        for r in m.get("allOf", []):
            ref = self.defs[r["$ref"].rsplit("/", 1)[1]] if "$ref" in r else {}
            own += self.fields(ref, cls) + self.merged_fields(ref, cls)
        own_props = {k: p for k, p in m.get("properties", {}).items() if k != tag}
        return own + self.fields({"required": m.get("required", []), "properties": own_props}, cls)

    def emit_nested(self, cls: str, base: str, value: str, inner: str) -> None:
        """A variant that is itself an open tagged union (`state_update` -> `state`): one
        Struct per inner variant, under the outer tag, its inner tag a required `Literal`
        field written first; `cls` is the open union of them (decoding picks by the inner tag)."""
        s = self.defs[inner]
        inner_tag = self.tagged(s)
        assert inner_tag is not None
        py = snake(inner_tag)
        name = f", name={inner_tag!r}" if py != inner_tag else ""
        known = []
        for m in s.get("anyOf", s.get("oneOf", [])):
            if m.get("title") == "other" or "not" in m:
                continue
            inner_value = m["properties"][inner_tag]["const"]
            flat = f"{cls}_{re.sub(r'[^0-9A-Za-z]', '_', str(inner_value))}"
            pinned = f"    {py}: Literal[{json.dumps(inner_value)}]" + (f" = field({name[2:]})" if name else "")
            own = self.variant_fields(m, inner_tag, flat)
            self.lines += [f"class {flat}({base}, kw_only=True, tag={value!r}):", pinned, *own, ""]
            known.append((inner_value, flat))
        pairs = ", ".join(f"{v!r}: {c}" for v, c in known)
        self.lines += [f"class {cls}(OpenUnion):", f"    tag_field = {inner_tag!r}", f"    known = {{{pairs}}}", ""]

    def order(self) -> list[str]:
        """Definitions in dependency order (a Struct's bases before it)."""
        seen: list[str] = []

        def visit(name: str, stack: set[str]) -> None:
            if name in seen or name in stack:
                return
            stack.add(name)
            for dep in re.findall(r'"#/\$defs/([A-Za-z0-9_]+)"', json.dumps(self.defs[name])):
                if dep in self.defs and dep != name:
                    visit(dep, stack)
            seen.append(name)

        for name in self.defs:
            visit(name, set())
        return seen

    def modules(self) -> dict[str, str]:
        """Each area's module text by file name, and `schema_types.py` naming them all."""
        home = area_of(self.defs)
        chunks: dict[str, list[Chunk]] = {area: [] for area in AREAS}
        for name in self.order():
            start, self.refs = len(self.lines), set()
            self.emit(name, self.defs[name])
            chunks[home[name]].append((self.lines[start:], self.refs - {name}))
        texts = {f"{area}.py": area_module(area, self.source, chunks[area], home) for area in AREAS}
        return texts | {"schema_types.py": facade(self.source, chunks)}


def report(gen: Generator, source: str) -> None:
    print(f"{len(gen.defs)} $defs -> {dict(gen.kinds)}, {len(source.splitlines())} lines in the area modules")
    print("not expressed faithfully:")
    for what, count in gen.lossy.most_common():
        print(f"  {count:4d}  {what}  e.g. {', '.join(gen.examples[what])}")


def generate(schema: Path) -> tuple[Generator, dict[str, str]]:
    defs = json.loads(schema.read_text())["$defs"]
    gen = Generator(
        defs, schema.relative_to(ROOT.parent).as_posix() if schema.is_relative_to(ROOT.parent) else schema.name
    )
    return gen, gen.modules()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("schema", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--out", type=Path, default=OUT, help="the folder of v2's area modules")
    parser.add_argument("--v1-out", type=Path, default=V1_OUT, help="the folder of v1's area modules")
    parser.add_argument("--check", action="store_true", help="exit 1 when --out differs from what would be written")
    parser.add_argument("--report", action="store_true", help="print what the Structs do not express faithfully")
    args = parser.parse_args()
    gen, v2 = generate(args.schema.resolve())
    if args.report:
        report(gen, "\n".join(text for name, text in v2.items() if name != "schema_types.py"))
    outputs = {args.out / name: text for name, text in v2.items()}
    if args.schema.resolve() == DEFAULT:  # the default run: v1's modules too
        from acp_v1 import generate_v1

        v1 = generate_v1(V1_SCHEMA, V1_SCHEMA.relative_to(ROOT.parent).as_posix())
        outputs |= {args.v1_out / f"{area}.py": text for area, text in v1.items()}
    stale = [path for path, text in outputs.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run {Path(__file__).relative_to(ROOT.parent)}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(outputs[path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
