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

from tether.server.methods import METHODS

LATER = (
    "tether.agent.loop", "tether.agent.executor", "tether.approvals", "tether.tools.grep",
    "tether.tools.run_command", "tether.providers.select", "tether.server.prompt",
    "tether.server.loading", "tether.server.snapshots", "tether_protocol._converter",
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
        module, name = method.handler.__qualname__.split(".")
        target = getattr(importlib.import_module(f"tether.server.{module}"), name, None)
        assert callable(target), f"{method.name}: tether.server.{module}.{name} does not exist"
