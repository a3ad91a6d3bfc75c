"""SPEC §3's method index lists exactly the methods of the method table (`_methods.V1`,
which the daemon's routes serve): each with its kind and its direction, none missing,
none extra. A method added to the daemon without a line in the index fails here."""

from __future__ import annotations

import re
from pathlib import Path

from tether.server.methods import METHODS as ROUTES
from tether_protocol import V1

SPEC = Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md"
DIRECTIONS = {"client → Tether": "client->agent", "Tether → client": "agent->client", "both directions": "both"}


def _index() -> dict[str, tuple[str, str]]:
    """The index table of §3: method -> (kind, direction)."""
    text = SPEC.read_text()
    table = text[text.index("## 3. Methods"):text.index("### 3.1 ")]
    found: dict[str, tuple[str, str]] = {}
    for row in re.findall(r"^\| (`.+?) \| (.+?) \| (.+?) \| .+? \|$", table, re.M):
        names, kind, direction = row
        prefix = ""
        for name in re.findall(r"`([^`]+)`", names):
            if "/" in name:
                prefix = name.rsplit("/", 1)[0] + "/"
            elif re.fullmatch(r"[a-z][A-Za-z]+", name):  # `didChange` after `textDocument/didOpen`
                name = prefix + name
            else:
                continue  # a command's name (`tether.ask`), not a method
            found[name] = (kind.split()[0], DIRECTIONS[direction])
    return found


def test_the_spec_index_lists_every_method_with_its_kind_and_direction():
    index = _index()
    table = {m.name: (m.kind, m.direction) for m in V1}
    assert sorted(set(table) - set(index)) == [], "methods missing from SPEC §3's index"
    assert sorted(set(index) - set(table)) == [], "SPEC §3's index names methods the table does not have"
    assert {name: index[name] for name in table} == table


def test_the_daemon_serves_what_the_index_says_a_client_sends():
    index = _index()
    sent_by_clients = {n for n, (_kind, direction) in index.items() if direction == "client->agent"}
    assert {route.name for route in ROUTES} == sent_by_clients
