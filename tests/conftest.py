"""Shared fixtures: a temp workspace, a private TETHER_HOME, and the daemon's environment."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from daemon_harness import BASIC_SCRIPT, serve_command

if TYPE_CHECKING:
    from pathlib import Path


def pytest_configure(config: pytest.Config) -> None:
    """Compile Tether's packages once, in the main process, before any test starts one: with
    PYTHONDONTWRITEBYTECODE set (CI's machines set it) nothing else writes their `.pyc`, and
    every daemon a test starts would compile ~400 modules from source again."""
    if hasattr(config, "workerinput"):
        return
    import compileall
    import importlib.util

    for name in ("tether", "tether_protocol", "tether_client", "tether_chat"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=1, workers=0)


# The longest tests on a fresh machine (mypy with no cache, real VS Code, the sandboxed network
# proxy, the editors' webviews, the property tests): started first, so that the run does not end
# on one of them while the other worker has nothing left (`--dist worksteal` cannot split a test).
_LONG_FIRST = (
    "tests/test_static_checks.py",
    "tests/editors/vscode_real/",
    "tests/netproxy/test_allowlist_e2e.py",
    "tests/editors/vscode/test_vscode_webview.py",
    "tests/approvals/test_bypass_property.py",
    "tests/approvals/test_allow_rule_writes_property.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(_LONG_FIRST))  # stable: the rest keep their order


# Provider keys and other secrets of the developer's shell never reach a test daemon.
_SCRUB = ("TETHER_", "OPENAI_", "ANTHROPIC_")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Sample\n\nHello from the sample workspace.\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n")
    (tmp_path / "outside.txt").write_text("secret outside the workspace\n")
    return ws.resolve()


@pytest.fixture
def tether_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture(scope="session")
def start_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The start cache all the run's daemons share (each worker's basetemp sits in one
    folder): written by the first start, then read. The cache's own tests use a home's."""
    return tmp_path_factory.getbasetemp().parent / "start-cache"


@pytest.fixture
def daemon_env(tether_home: Path, tmp_path: Path, start_cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB)}
    env["TETHER_HOME"] = str(tether_home)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")  # no user config file
    # MCP servers' own directories (a few kB each, ~6 MB a run), in the test's folder, not the user's ~/.cache
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    env["PYTHONUNBUFFERED"] = "1"
    env["TETHER_PROBE_PORTS"] = ""  # no local model server discovery in tests unless asked
    env["TETHER_CACHE"] = str(start_cache)  # one start cache for the run, not ~6 MB per test
    return env


@pytest.fixture
def home_start_cache(daemon_env: dict[str, str]) -> None:
    """The daemon keeps its start cache in its home, not the run's shared one (for the tests
    of that cache)."""
    daemon_env.pop("TETHER_CACHE")


class DaemonProcess:
    """A real `tether serve` subprocess driven by the Python client, stderr kept in a file."""

    def __init__(self, client, stderr_path: Path) -> None:
        self.client = client
        self.stderr_path = stderr_path

    @property
    def pid(self) -> int:
        return self.client.process.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@pytest.fixture
async def spawn_daemon(daemon_env: dict[str, str], workspace: Path, tmp_path: Path):
    """Start daemons on demand; all are closed (stdin EOF) at the end of the test."""
    from tether_client import TetherClient

    started: list[DaemonProcess] = []
    handles = []

    async def start(
        *extra: str,
        script: Path = BASIC_SCRIPT,
        env: dict[str, str] | None = None,
        initialize: bool = True,
        command: list[str] | None = None,
        framing: str = "lsp",
    ) -> DaemonProcess:
        stderr_path = tmp_path / f"daemon-{len(started)}.stderr"
        handle = open(stderr_path, "wb")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
        handles.append(handle)
        client = await TetherClient.spawn(
            command=command or serve_command(*extra, script=script),
            cwd=workspace,
            env={**daemon_env, **(env or {})},
            stderr=handle,
            framing=framing,  # type: ignore[arg-type]
        )
        daemon = DaemonProcess(client, stderr_path)
        started.append(daemon)
        if initialize:
            await client.initialize()
        return daemon

    yield start
    for daemon in started:
        await daemon.client.close()
    for handle in handles:
        handle.close()
