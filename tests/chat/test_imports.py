"""`tether chat` is a client of the daemon, like the editor plugins: it never imports the
daemon's internals (`tether.*`), only the protocol through `tether_client`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "tether_chat"


def _imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_no_module_of_the_chat_imports_the_daemon():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 5
    offenders = {
        f"{path.name}: {name}"
        for path in files
        for name in _imported(ast.parse(path.read_text()))
        if name == "tether" or name.startswith("tether.")
    }
    assert not offenders, f"tether_chat imports the daemon: {sorted(offenders)}"


def test_the_running_chat_loads_no_daemon_module():
    code = (
        "import sys, tether_chat, tether_chat.app, tether_chat.render, tether_chat.sessions\n"
        "print(sorted(m for m in sys.modules if m == 'tether' or m.startswith('tether.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
