"""`protocol/schema.json` covers every method the daemon serves and every one it sends.

Served methods come from the daemon's own route table (a connection built here, no
process), plus the cancellation notifications the JSON-RPC peer handles itself; sent
methods are found by scanning the daemon's source for method names in string literals
(`request("fs/read_text_file", …)`, `notify("window/showMessage", …)`, the
pre-encoded `"method":"session/update"` frames). A method added to the daemon without a
params/result class in `tether_protocol._method_table` fails here.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAEMON = REPO / "daemon" / "tether"
SCHEMA_PATH = REPO / "protocol" / "schema.json"

# A JSON-RPC method name in one of the namespaces the two protocols use.
_METHOD = r"(?:\$|_tether|session|fs|window|workspace|textDocument|terminal)/[A-Za-z_/]+"
_WHOLE = re.compile(rf"^{_METHOD}$")
_IN_FRAME = re.compile(rf'"method":\s*"({_METHOD})"')


def _schema_methods() -> dict[str, dict[str, object]]:
    methods: dict[str, dict[str, object]] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["x-tether-methods"]
    return methods


@functools.cache
def _served() -> frozenset[str]:
    from tether.config import Settings
    from tether.server.app import connect
    from tether.server.daemon_services import Daemon

    settings = Settings(home=str(REPO / ".no-such-home"))
    server = connect(Daemon(settings), settings, REPO)
    # the cancellation notifications are handled by the peer itself
    handled_by_transport = {
        name for name in _literals(REPO / "protocol" / "tether_protocol" / "peer.py") if name.startswith("$/")
    }
    return frozenset(server.rpc.routes) | handled_by_transport


def _literals(path: Path) -> set[str]:
    """Method names in the string and bytes literals of one source file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, bytes)):
            continue
        text = node.value.decode("utf-8", "replace") if isinstance(node.value, bytes) else node.value
        if _WHOLE.match(text):
            found.add(text)
        found.update(_IN_FRAME.findall(text))
    return found


@functools.cache
def _named_in_source() -> frozenset[str]:
    names: set[str] = set()
    for path in sorted(DAEMON.rglob("*.py")):
        names |= _literals(path)
    return frozenset(names)


def _sent() -> frozenset[str]:
    """Methods the daemon names but does not serve: the ones it sends."""
    return _named_in_source() - _served()


def test_the_daemon_tables_are_found() -> None:
    # guards against a scan that finds nothing (and so would pass vacuously)
    served, sent = _served(), _sent()
    assert len(served) >= 29, sorted(served)
    assert {"initialize", "session/prompt", "textDocument/didChange", "$/cancel_request"} <= served
    assert {
        "session/update",
        "session/request_permission",
        "window/showMessageRequest",
        "fs/read_text_file",
        "fs/write_text_file",
        "workspace/applyEdit",
        "window/showMessage",
    } <= sent


@pytest.mark.parametrize("direction", ["served", "sent"])
def test_every_method_of_the_daemon_is_in_the_schema(direction: str) -> None:
    methods = _schema_methods()
    names = _served() if direction == "served" else _sent()
    missing = sorted(names - set(methods))
    assert missing == [], (
        f"{direction} by the daemon but not in protocol/schema.json: {missing} "
        "(add the method to tether_protocol._method_table, then run "
        "python -m tether_protocol.schema)"
    )
    for name in names:
        entry = methods[name]
        assert entry["params"] is not None, name
        if direction == "served":
            assert entry["direction"] in ("client->agent", "both"), name
        else:
            assert entry["direction"] in ("agent->client", "both"), name
        if entry["kind"] == "request":
            assert entry["result"] is not None, name


def test_every_method_in_the_schema_is_served_or_sent() -> None:
    stale = sorted(set(_schema_methods()) - _served() - _sent())
    assert stale == [], f"in protocol/schema.json but neither served nor sent: {stale}"


def test_served_notifications_are_notifications_in_the_schema() -> None:
    from tether.config import Settings
    from tether.server.app import connect
    from tether.server.daemon_services import Daemon

    settings = Settings(home=str(REPO / ".no-such-home"))
    server = connect(Daemon(settings), settings, REPO)
    methods = _schema_methods()
    for name, route in server.rpc.routes.items():
        expected = "notification" if route.notification else "request"
        assert methods[name]["kind"] == expected, name
