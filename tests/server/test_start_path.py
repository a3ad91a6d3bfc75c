"""What `tether serve` imports before it can answer `session/new`, and that every handler
the method table imports later is really there.

The start path (`initialize`, `session/new`) is most of an editor's first wait; the turn,
the tools, the approvals, the providers and the replay are imported by the context's
warm-up once the first session is open (or by the first request that needs them).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import attrs

from tether.server.methods import METHODS

LATER = (
    "tether.agent.loop", "tether.agent.executor", "tether.approvals", "tether.tools.grep",
    "tether.tools.run_command", "tether.providers.select", "tether.server.prompt",
    "tether.server.loading", "tether.server.snapshots", "tether_protocol._converter",
    "tether_protocol._snapshots", "tether_protocol._lsp", "tether_protocol._extensions", "tether_protocol._methods",
    "tree_sitter", "httpx",
)


def test_the_server_and_the_session_handlers_import_nothing_of_the_turn() -> None:
    probe = (
        "import sys, tether.server.app, tether.server.sessions, tether.server.lifecycle;"
        f"print(sorted(m for m in {LATER!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_handler_imported_later_exists() -> None:
    later = [m for m in METHODS if "." in m.handler.__qualname__ and "<locals>" not in m.handler.__qualname__]
    assert len(later) >= 12  # prompt, load, snapshots, reports, rules, diagnostics
    for method in later:
        module, name = method.handler.__qualname__.rsplit(".", 1)
        target = getattr(importlib.import_module(f"tether.server.{module}"), name, None)
        assert callable(target), f"{method.name}: tether.server.{module}.{name} does not exist"


def test_the_table_structures_every_method_into_the_protocols_params_class() -> None:
    from tether.server.methods import Later
    from tether_protocol._methods import METHODS as V1_METHODS
    from tether_protocol._methods import EmptyParams

    for method in METHODS:
        if method.name == "initialize":  # raw on purpose: answered before the converter is imported
            assert method.params_cls is None
            continue
        params = method.params_cls.load() if isinstance(method.params_cls, Later) else method.params_cls
        expected = V1_METHODS[method.name].params
        if expected is EmptyParams:  # the same shape, `{_meta?}`, from a module the start path imports
            assert params is not None and [a.name for a in attrs.fields(params)] == ["meta"], method.name
        else:
            assert params is expected, method.name
        result = method.result_cls.load() if isinstance(method.result_cls, Later) else method.result_cls
        assert result is None or result is V1_METHODS[method.name].result, method.name
