"""Issue 32's generator sketch: msgspec Structs from ACP's upstream JSON schema.

    .venv/bin/python bench/acp_structs_gen.py [SCHEMA] [--out FILE]
    (default: /work/shared/reference/acp-v2-preview/schema.json)

Emits one module of Structs from the schema's `$defs`, imports it and builds a JSON
Decoder for every Struct (proof that msgspec accepts what was emitted), and prints what it
could not express faithfully, by construct. The mapping:
- object with `properties` -> Struct (`rename="camel"`-free: every field keeps its wire
  name via `field(name=...)`; optional fields default to UNSET, so they are left out);
- `anyOf` whose members each pin one property to a `const` and `allOf` one `$ref` ->
  a tagged union: one subclass of the referenced Struct per tag (`tag_field`/`tag`);
  an object with shared `properties` plus such an `anyOf` -> the shared fields on a base;
- `anyOf` of string `const`s -> `Literal`; with a catch-all `{"type": "string"}` member
  (ACP's open enums) -> `str` (the known values are lost to the type: LOSSY);
- `type` only (SessionId, ...) -> the scalar; integer bounds -> `Annotated[int, Meta(...)]`.
Not expressible in msgspec (reported): a tagged union's catch-all member (`"title":
"other"` with `not`: an unknown tag must decode, msgspec rejects it), the
`x-deserialize-default-on-error` fields (a bad optional value becomes its default:
msgspec fails the whole message), untagged unions of two object types.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import keyword
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

DEFAULT = Path("/work/shared/reference/acp-v2-preview/schema.json")
Schema = dict[str, Any]


def snake(name: str) -> str:
    out = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().lstrip("_") or "meta"
    return out + "_" if keyword.iskeyword(out) or out in ("list", "type", "id", "input") else out


class Generator:
    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs
        self.lines: list[str] = []
        self.lossy: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, list[str]] = collections.defaultdict(list)
        self.noted: set[tuple[str, str]] = set()
        self.kinds: collections.Counter[str] = collections.Counter()
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
        objects = [m for m in unique if m not in ("str", "int", "bool", "float", "None", "Any") and not m.startswith(("Literal", "list", "Annotated"))]
        if len([m for m in objects if m.startswith("dict") or m in self.struct_names()]) > 1 and not all(
            m in self.tagged_names for m in objects
        ):
            self.note("untagged union of object types", where)
            return "Any"
        return unique[0] if len(unique) == 1 else "Union[" + ", ".join(unique) + "]"

    def struct_names(self) -> set[str]:
        return {n for n, s in self.defs.items() if "properties" in s}

    def ref(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[1]
        target = self.defs[name]
        if set(target) <= {"type", "description", "title", "format", "minimum", "maximum"}:
            return self.type_of(target, name)  # SessionId & co: the scalar
        return name

    # ---- definitions -----------------------------------------------------------------

    def fields(self, s: Schema, where: str) -> list[str]:
        required = set(s.get("required", []))
        req, opt = [], []
        for key, prop in s.get("properties", {}).items():
            py = snake(key)
            tp = self.type_of(prop, f"{where}.{key}")
            if key in required:
                req.append(f"    {py}: {tp} = field(name={key!r})" if py != key else f"    {py}: {tp}")
            else:
                name = f", name={key!r}" if py != key else ""
                opt.append(f"    {py}: Union[{tp}, UnsetType] = field(default=UNSET{name})")
        return req + opt

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
            body = self.fields(s, name) or ["    pass"]
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
        self.lines += [f"class {base}(Struct, kw_only=True, omit_defaults=True, tag_field={tag!r}):",
                       *(shared_fields or ["    pass"]), ""]
        variants = []
        for m in s.get("anyOf", s.get("oneOf", [])):
            if m.get("title") == "other" or "not" in m:
                self.note("catch-all member of a tagged union (unknown tag must decode)", name)
                continue
            value = m["properties"][tag]["const"]
            cls = f"{name}_{re.sub(r'[^0-9A-Za-z]', '_', str(value))}"
            # msgspec allows one Struct base with fields: the referenced object's fields are
            # copied into each variant (flattened), the shared ones come from the base
            own = []
            for r in m.get("allOf", []):
                own += self.fields(self.defs[r["$ref"].rsplit("/", 1)[1]], cls) if "$ref" in r else []
            own += self.fields({"required": m.get("required", []), "properties": {
                k: p for k, p in m.get("properties", {}).items() if k != tag}}, cls)
            self.lines += [f"class {cls}({base}, tag={value!r}):", *(own or ["    pass"]), ""]
            variants.append(cls)
        self.lines += [f"{name} = Union[{', '.join(variants)}]", ""]

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

    def module(self) -> str:
        for name in self.order():
            self.emit(name, self.defs[name])
        head = [
            "from __future__ import annotations",
            "from typing import Annotated, Any, Literal, Union",
            "from msgspec import UNSET, Meta, Struct, UnsetType, field", "",
        ]
        return "\n".join(head + self.lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("schema", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    defs = json.loads(args.schema.read_text())["$defs"]
    gen = Generator(defs)
    source = gen.module()
    out = args.out or Path(tempfile.mkdtemp()) / "acp_generated.py"
    out.write_text(source)
    spec = importlib.util.spec_from_file_location("acp_generated", out)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["acp_generated"] = module
    spec.loader.exec_module(module)
    import msgspec

    structs = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, msgspec.Struct)]
    failed = []
    for cls in structs:
        try:
            msgspec.json.Decoder(cls)
        except Exception as exc:  # a type msgspec refuses: reported, not hidden
            failed.append(f"{cls.__name__}: {exc}")
    print(f"{args.schema}: {len(defs)} $defs -> {dict(gen.kinds)}; {len(structs)} Struct classes, "
          f"{len(source.splitlines())} lines -> {out}")
    print(f"decoders built: {len(structs) - len(failed)}/{len(structs)}")
    for line in failed[:3]:
        print("  refused:", line)
    print("not expressed faithfully:")
    for what, count in gen.lossy.most_common():
        print(f"  {count:4d}  {what}  e.g. {', '.join(gen.examples[what])}")


if __name__ == "__main__":
    main()
