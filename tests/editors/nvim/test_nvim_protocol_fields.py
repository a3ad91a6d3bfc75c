"""The Neovim plugin speaks the protocol of `protocol/schema.json`: every protocol field
name its Lua reads or writes is one the schema defines.

The Lua sources (editors/nvim/lua) are tokenized here, no Neovim needed, and checked
three ways:

* the params it sends: the table literal of each `request("method", {...})` /
  `notify("method", {...})` (and the `initialize` params it builds) is walked key by key
  against that method's params in the schema, nested tables and lists included;
* the answers it gives the daemon's requests (`{outcome = ...}`, `{applied = ...}`)
  against those requests' results;
* every camelCase field name it uses anywhere (`x.toolCallId`, `sessionId = ...`,
  `vim.tbl_get(u, "_meta", "tether", "turnEnded")`) is a property somewhere in the
  schema, and every update kind it compares against is a `sessionUpdate` tag.

`acp_v2.lua` speaks ACP v2 (Preview): it is checked against the v2 schema
(`protocol/upstream/acp-v2-preview/schema.unstable.json`) instead.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
LUA = REPO / "editors" / "nvim" / "lua" / "tether"
SCHEMA = json.loads((REPO / "protocol" / "schema.json").read_text(encoding="utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]
METHODS: dict[str, Any] = SCHEMA["x-tether-methods"]
V2_SOURCE = LUA / "acp_v2.lua"
V2_DEFS: dict[str, Any] = json.loads(
    (REPO / "protocol" / "upstream" / "acp-v2-preview" / "schema.unstable.json").read_text(encoding="utf-8")
)["$defs"]
# v2's update kinds the Preview schema does not have yet (an RFD: SPEC §12.3, decision 0002)
V2_RFD_UPDATES = {"replay_complete"}

# camelCase names the plugin uses that are not protocol shapes of the schema, and why.
NOT_PROTOCOL = {
    "applyEdit": "an LSP client capability (`capabilities` is open in the schema)",
    "workspaceEdit": "an LSP client capability",
    "resourceOperations": "an LSP client capability",
    "maxSteps": "an initializationOptions setting (SPEC §9), not a protocol field",
    "baseUrl": "a setting (SPEC §9), and a key of `tether doctor --json` (the health check)",
    "keyEnv": "a key of `tether doctor --json` (the health check), not the protocol",
    "keySet": "a key of `tether doctor --json` (the health check), not the protocol",
}

_TOKEN = re.compile(
    r"""(?P<comment>--\[(?P<ceq>=*)\[.*?\](?P=ceq)\]|--[^\n]*)
      |(?P<long>\[(?P<leq>=*)\[.*?\](?P=leq)\])
      |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<number>\d[\w.]*)
      |(?P<op>==|~=|<=|>=|\.\.\.|\.\.|::|[^\s])""",
    re.S | re.X,
)


@functools.cache
def _tokens(path: Path) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(path.read_text(encoding="utf-8")):
        kind = next(k for k in ("comment", "long", "string", "name", "number", "op") if m.group(k) is not None)
        if kind == "comment":
            continue
        text = m.group(0)
        if kind == "string":
            text = text[1:-1]
        out.append((kind, text))
    return out


def _sources() -> list[Path]:
    """The sources that speak v1 (and Tether's extensions)."""
    return sorted(p for p in LUA.glob("*.lua") if p != V2_SOURCE)


# ---- table literals ------------------------------------------------------------------

Table = dict[str, Any]  # key -> nested Table, list of Tables, or None (any other value)


def _parse_table(tokens: list[tuple[str, str]], i: int) -> tuple[Table | list[Any], int]:
    """Parse the table literal whose `{` is at `i`; returns it and the index after `}`."""
    assert tokens[i] == ("op", "{")
    keyed: Table = {}
    items: list[Any] = []
    i += 1
    while tokens[i] != ("op", "}"):
        if tokens[i][0] == "name" and tokens[i + 1] == ("op", "="):
            key, i = tokens[i][1], i + 2
            keyed[key], i = _value(tokens, i)
        elif tokens[i] == ("op", "["):
            close = _skip(tokens, i, "[", "]")
            i = _value(tokens, close + 1)[1] if tokens[close] == ("op", "=") else close
        else:
            value, i = _value(tokens, i)
            items.append(value)
        if tokens[i] in (("op", ","), ("op", ";")):
            i += 1
    return (keyed if keyed or not items else items), i + 1


def _value(tokens: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    """A nested table, or None for any other expression (skipped to the next `,` `;` `}`)."""
    if tokens[i] == ("op", "{"):
        table, after = _parse_table(tokens, i)
        if tokens[after] in (("op", ","), ("op", ";"), ("op", "}")):
            return table, after
        i = after
    depth = 0
    while True:
        kind, text = tokens[i]
        if kind == "op" and text in "([{":
            depth += 1
        elif kind == "op" and text in ")]}":
            if depth == 0:
                return None, i
            depth -= 1
        elif kind == "op" and text in ",;" and depth == 0:
            return None, i
        i += 1


def _skip(tokens: list[tuple[str, str]], i: int, opening: str, closing: str) -> int:
    depth = 0
    while True:
        if tokens[i] == ("op", opening):
            depth += 1
        elif tokens[i] == ("op", closing):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


# ---- the schema side -----------------------------------------------------------------


def _objects(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The object definitions a schema node may be (through $ref and unions)."""
    if "$ref" in node:
        return _objects(DEFS[node["$ref"].removeprefix("#/$defs/")])
    if "anyOf" in node or "oneOf" in node:
        return [o for member in node.get("anyOf", node.get("oneOf", [])) for o in _objects(member)]
    return [node] if node.get("type") == "object" else []


def _arrays(node: dict[str, Any]) -> list[dict[str, Any]]:
    if "$ref" in node:
        return _arrays(DEFS[node["$ref"].removeprefix("#/$defs/")])
    if "anyOf" in node or "oneOf" in node:
        return [a for member in node.get("anyOf", node.get("oneOf", [])) for a in _arrays(member)]
    return [node] if node.get("type") == "array" else []


def _check(value: Any, node: dict[str, Any], where: str) -> list[str]:
    """Problems of a parsed Lua table against a schema node."""
    if isinstance(value, list):
        arrays = _arrays(node)
        if not arrays:
            return [f"{where}: a list where the schema has no array"]
        items = arrays[0].get("items", {})
        return [p for n, item in enumerate(value) if item is not None for p in _check(item, items, f"{where}[{n}]")]
    if not isinstance(value, dict) or not value:
        return []  # not a table, or `{}` (an empty list or object: Lua cannot tell)
    objects = _objects(node)
    if not objects:
        return [f"{where}: a table where the schema has no object"]
    if any("properties" not in o for o in objects):
        return []  # an open object (initializationOptions, LSP capabilities)
    best: list[str] | None = None
    for obj in objects:
        problems = [f"{where}.{k}: not a field of {obj.get('title')}" for k in value if k not in obj["properties"]]
        for key, sub in value.items():
            if key in obj["properties"] and sub is not None:
                problems += _check(sub, obj["properties"][key], f"{where}.{key}")
        if best is None or len(problems) < len(best):
            best = problems
    return best or []


# ---- what the plugin sends and answers -----------------------------------------------


def _sent_tables() -> list[tuple[str, str, Any]]:
    """(file, method, table) of every request/notify call with a literal params table."""
    found = []
    for path in _sources():
        tokens = _tokens(path)
        for i in range(len(tokens) - 4):
            if (
                tokens[i][1] in ("request", "notify")
                and tokens[i + 1] == ("op", "(")
                and tokens[i + 2][0] == "string"
                and tokens[i + 3] == ("op", ",")
                and tokens[i + 4] == ("op", "{")
            ):
                table, _ = _parse_table(tokens, i + 4)
                found.append((path.name, tokens[i + 2][1], table))
    return found


def _initialize_params() -> Any:
    tokens = _tokens(LUA / "client.lua")
    start = next(
        i
        for i in range(len(tokens))
        if tokens[i] == ("name", "_initialize_params")
        and tokens[i - 1] == ("op", ":")
        and tokens[i - 3] == ("name", "function")
    )
    ret = next(i for i in range(start, len(tokens)) if tokens[i] == ("name", "return"))
    return _parse_table(tokens, ret + 1)[0]


def _answers(path: Path, first_key: str) -> list[Any]:
    """Table literals starting with `{first_key = ...` given as an argument or returned."""
    tokens = _tokens(path)
    return [
        _parse_table(tokens, i)[0]
        for i in range(1, len(tokens) - 2)
        if tokens[i] == ("op", "{")
        and tokens[i + 1] == ("name", first_key)
        and tokens[i + 2] == ("op", "=")
        and tokens[i - 1] in (("op", "("), ("name", "return"))
    ]


def test_the_lua_sources_are_found_and_parsed() -> None:
    sent = _sent_tables()
    assert len(_sources()) >= 10
    assert {m for _, m, _ in sent} >= {
        "session/new",
        "session/load",
        "session/prompt",
        "session/set_mode",
        "session/cancel",
        "_tether/session/report",
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didClose",
    }
    prompt = next(t for _, m, t in sent if m == "session/prompt")
    assert prompt == {"sessionId": None, "prompt": [{"type": None, "text": None}], "_meta": None}
    assert "clientCapabilities" in _initialize_params()


def test_params_the_plugin_sends_fit_the_schema() -> None:
    problems = []
    for file, method, table in _sent_tables():
        assert method in METHODS, f"{file}: {method} is not a method of the schema"
        problems += _check(table, METHODS[method]["params"], f"{file} {method} params")
    problems += _check(_initialize_params(), METHODS["initialize"]["params"], "client.lua initialize params")
    assert problems == []


def test_answers_the_plugin_gives_fit_the_schema() -> None:
    permission = _answers(LUA / "approval.lua", "outcome")
    edits = _answers(LUA / "apply_edit.lua", "applied")
    assert permission and edits
    problems = [
        p for t in permission for p in _check(t, METHODS["session/request_permission"]["result"], "approval.lua")
    ]
    problems += [p for t in edits for p in _check(t, METHODS["workspace/applyEdit"]["result"], "apply_edit.lua")]
    assert problems == []


def _schema_properties() -> set[str]:
    return {prop for d in DEFS.values() for prop in d.get("properties", {})}


def _field_names(path: Path) -> set[str]:
    """Field names used in a file: `.x`, `x =` in a table, `["x"]`, `vim.tbl_get(t, "x", ...)`."""
    tokens = _tokens(path)
    names: set[str] = set()
    for i, (kind, text) in enumerate(tokens):
        if kind == "name" and text == "tbl_get":
            j = i + 2
            while tokens[j] != ("op", ")"):
                if tokens[j][0] == "string":
                    names.add(tokens[j][1])
                j += 1
        elif (
            (kind == "name" and i and tokens[i - 1] == ("op", "."))
            or (kind == "name" and tokens[i + 1 : i + 2] == [("op", "=")] and tokens[i - 1][1] in ("{", ",", ";"))
            or (kind == "string" and tokens[i - 1] == ("op", "[") and tokens[i + 1] == ("op", "]"))
        ):
            names.add(text)
    return names


def test_every_camel_case_field_the_plugin_uses_is_in_the_schema() -> None:
    camel = re.compile(r"^_?[a-z]+[A-Z][A-Za-z]*$")
    used = {n for path in _sources() for n in _field_names(path) if camel.match(n)}
    assert {"sessionId", "toolCallId", "turnEnded", "approvedBy", "stopReason"} <= used
    unknown = sorted(used - _schema_properties() - set(NOT_PROTOCOL))
    assert unknown == [], f"the plugin uses fields the schema does not define: {unknown}"
    stale = sorted(set(NOT_PROTOCOL) - used)
    assert stale == [], f"NOT_PROTOCOL lists names the plugin no longer uses: {stale}"
    assert not set(NOT_PROTOCOL) & _schema_properties(), "NOT_PROTOCOL hides a real schema field"


def test_every_update_kind_the_plugin_knows_is_one_tether_sends() -> None:
    tags = {
        DEFS[v["$ref"].removeprefix("#/$defs/")]["properties"]["sessionUpdate"]["enum"][0]
        for v in DEFS["SessionUpdate"]["anyOf"]
    }
    kind = re.compile(r"^[a-z]+(_[a-z]+)*_(chunk|update)$|^tool_call$")
    used = {text for path in _sources() for k, text in _tokens(path) if k == "string" and kind.match(text)}
    assert {"agent_message_chunk", "tool_call", "tool_call_update"} <= used
    assert sorted(used - tags) == []


# ---- ACP v2 (acp_v2.lua) ---------------------------------------------------------------


def _v2_tags() -> set[str]:
    tags = set()
    for member in V2_DEFS["SessionUpdate"]["anyOf"]:
        const = member.get("properties", {}).get("sessionUpdate", {}).get("const")
        if const:
            tags.add(const)
    return tags


def _returned_table(path: Path, function: str) -> Any:
    """The table literal `function M.<function>` returns first."""
    tokens = _tokens(path)
    start = next(i for i in range(2, len(tokens)) if tokens[i] == ("name", function) and tokens[i - 1] == ("op", "."))
    ret = next(i for i in range(start, len(tokens)) if tokens[i] == ("name", "return") and tokens[i + 1] == ("op", "{"))
    return _parse_table(tokens, ret + 1)[0]


def test_the_v2_requests_fit_the_v2_schema() -> None:
    resume = _returned_table(V2_SOURCE, "resume_params")
    assert set(resume) <= set(V2_DEFS["ResumeSessionRequest"]["properties"]), resume
    assert {"sessionId", "cwd", "replayFrom"} <= set(resume)
    cursors = {m["properties"]["type"].get("const") for m in V2_DEFS["ReplayFrom"]["anyOf"] if "properties" in m}
    assert resume["replayFrom"] == {"type": None} and "start" in cursors
    # what `initialize` adds for v2: `info` (v1's `clientInfo`) and `capabilities._meta`
    names = _field_names(V2_SOURCE)
    assert {"info", "capabilities"} <= names and {"info", "capabilities"} <= set(
        V2_DEFS["InitializeRequest"]["properties"]
    )


def test_the_v2_fields_and_updates_the_adapter_reads_are_v2s() -> None:
    v2_properties = {prop for d in V2_DEFS.values() for prop in d.get("properties", {})}
    camel = re.compile(r"^_?[a-z]+[A-Z][A-Za-z]*$")
    used = {n for n in _field_names(V2_SOURCE) if camel.match(n)}
    # v2's own names, which v1 does not have
    assert {"messageId", "terminalId", "exitStatus", "configId", "replayFrom"} <= used
    unknown = sorted(used - v2_properties - _schema_properties())
    assert unknown == [], f"acp_v2.lua uses fields neither schema defines: {unknown}"
    kinds = {text for k, text in _tokens(V2_SOURCE) if k == "string" and re.fullmatch(r"[a-z]+(_[a-z]+)+", text)}
    v2_kinds = {"state_update", "user_message", "plan_update", "terminal_output_chunk", "terminal_update", "notice"}
    assert v2_kinds - {"notice"} <= kinds and v2_kinds <= _v2_tags()
    tags = {
        DEFS[v["$ref"].removeprefix("#/$defs/")]["properties"]["sessionUpdate"]["enum"][0]
        for v in DEFS["SessionUpdate"]["anyOf"]
    }
    updates = {k for k in kinds if k.endswith(("_update", "_chunk", "_message", "_thought", "_complete"))}
    assert sorted(updates - _v2_tags() - tags - V2_RFD_UPDATES) == []
