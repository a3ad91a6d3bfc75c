"""The VS Code extension in real VS Code: code-server 4.99.4 (VS Code 1.99) driven by headless Chromium.

The stub-`vscode` tests (tests/editors/vscode) cannot see VS Code's own layout, stylesheet,
activation and workspace life cycle; this test installs the extension's .vsix into real VS Code
(`code-server --install-extension`) and uses it as a user does, through `drive.mjs`
(playwright-core from editors/vscode/node_modules, Debian's Chromium):

- at start-up, before the Tether view was ever opened, the status bar item is there;
- the window has no folder: the view says so; a folder is added (to the workspace file, which
  VS Code watches) and the view becomes usable (modes, the folder's earlier session, the notice
  gone). code-server reloads the window for a first folder, and now and then the reloaded window
  comes up without it (its own Explorer says "no folder opened"): then the test reloads once, as
  a user would, and says so in its output, with a screenshot;
- a prompt goes to the scripted provider (tests/editors/vscode_real/script.json, through this
  checkout's daemon); its long answer streams in, its code block has no per-line background
  (VS Code's webview stylesheet styles `code`), the chat is taller than the view, and the
  approval card that arrives is fully in view with its buttons;
- the edit opens in VS Code's diff editor and is accepted with its Accept Edit title button;
  the file on disk changes and the answer's end streams in.

All of it twice: against the default daemon, which the extension speaks ACP v2 with, and a
v1-only one (`TETHER_ACP_V2=off`, SPEC §12.1); the extension's log (kept by VS Code under the
user data's logs) says which version each connection spoke. One code-server (per test worker)
serves both: each test opens a window of its own, whose daemon (`tether.path`, with the test's
environment and version) the user settings name before the window opens.

Screenshots of each step go to editors/vscode/test-artifacts/vscode-real/acp-v<n>/ (gitignored); code-server's
log and the driver's output are in the failure message. Set up with `sh tests/install-deps`
(code-server into .cache/) after `npm ci --prefix editors/vscode`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
EXTENSION = REPO / "editors" / "vscode"
CODE_SERVER = REPO / ".cache" / "code-server-4.99.4" / "node_modules" / "code-server" / "out" / "node" / "entry.js"
ARTIFACTS = EXTENSION / "test-artifacts" / "vscode-real"
README = "# Sample\n\nHello from the sample workspace.\n"


def _installed_code_server() -> None:
    """Waits for the install `tests/install-deps` started in the background (its pid file
    beside the user cache's copy), then fails with the install log's end if it did not finish."""
    cache = os.environ.get("TETHER_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tether-tests"
    )
    dest = Path(cache) / CODE_SERVER.relative_to(REPO / ".cache").parts[0]
    pid_file, log = dest.with_name(dest.name + ".pid"), dest.with_name(dest.name + ".log")
    deadline = time.monotonic() + 900
    while not CODE_SERVER.exists() and pid_file.exists() and time.monotonic() < deadline:
        try:
            os.kill(int(pid_file.read_text().strip()), 0)
        except (ProcessLookupError, ValueError):
            break
        time.sleep(1)
    if not CODE_SERVER.exists() and log.exists():
        pytest.fail(f"code-server's background install did not finish ({log}):\n{log.read_text()[-3000:]}")
    _need(CODE_SERVER, "code-server")


def _need(path: Path, what: str) -> None:
    if not path.exists():
        pytest.fail(f"{what} is missing ({path}): run `sh tests/install-deps`")


def _chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("no Chromium: run tests/install-deps or set CHROMIUM")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> str:
    proc = subprocess.run(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{' '.join(args)} failed\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    )
    return proc.stdout


@dataclass
class VSCodeServer:
    """code-server with the freshly packaged .vsix installed: one per worker serves both versions."""

    node: str
    url: str
    log: Path
    user: Path  # the user data's User/ (settings.json)
    logs: Path  # where VS Code keeps its windows' logs (the extension's output channel among them)
    env: dict[str, str]  # a private HOME; no Tether, provider or user configuration of the shell


@pytest.fixture(params=[2, 1], ids=["acp-v2", "acp-v1"])
def acp_version(request: pytest.FixtureRequest) -> int:
    """The ACP version the daemon offers: 2 (the default), or 1 only (`TETHER_ACP_V2=off`)."""
    return int(request.param)


def _code_server_home(root: Path) -> tuple[str, list[str], dict[str, str]]:
    """node, code-server's data directories and environment, with the extension installed."""
    _installed_code_server()
    _need(EXTENSION / "node_modules" / "@vscode" / "vsce", "the extension's build tools")
    node = shutil.which("node") or pytest.fail("node is not on PATH")
    home = root / "vscode-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_", "ANTHROPIC_"))}
    env |= {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache")}
    env["XDG_CONFIG_HOME"] = str(root / "xdg-config")  # no user config file
    vsix = root / "tether.vsix"
    package = ["node_modules/@vscode/vsce/vsce", "package", "--no-dependencies", "--allow-missing-repository"]
    _run([node, *package, "-o", str(vsix)], cwd=EXTENSION, env=env, timeout=55)
    dirs = ["--user-data-dir", str(root / "user-data"), "--extensions-dir", str(root / "extensions")]
    out = _run([node, str(CODE_SERVER), *dirs, "--install-extension", str(vsix)], cwd=root, env=env, timeout=55)
    assert "successfully installed" in out, out
    return node, dirs, env


@pytest.fixture(scope="session")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VSCodeServer]:
    """code-server on a free port (no auth), started once: each test opens its own window of it,
    with its own daemon (the user settings' `tether.path`, written before the window opens).
    Stopped with all it started."""
    root = tmp_path_factory.mktemp("code-server")
    node, dirs, env = _code_server_home(root)
    port = _free_port()
    log = root / "code-server.log"
    args = [
        node,
        str(CODE_SERVER),
        *dirs,
        "--config",
        str(root / "code-server.yaml"),
        "--auth",
        "none",
        "--bind-addr",
        f"127.0.0.1:{port}",
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
    ]
    with log.open("w") as out:
        proc = subprocess.Popen(
            args,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "healthz", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"code-server did not start\n{log.read_text(errors='replace')}")
                time.sleep(0.2)
        yield VSCodeServer(node, url, log, root / "user-data" / "User", root / "user-data" / "logs", env)
    finally:
        # code-server, its extension hosts and the daemons the extension started: one process group
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)


@pytest.fixture
def daemon_of_the_window(
    code_server: VSCodeServer, daemon_env: dict[str, str], acp_version: int, tmp_path: Path
) -> dict[str, str]:
    """The user settings the next window starts with: this checkout's daemon as `tether.path` (run
    as `<path> serve`) with this test's environment (TETHER_HOME, ...) and offered ACP version.
    Returns that environment."""
    env = {
        **daemon_env,
        "HOME": code_server.env["HOME"],
        "TETHER_ACP_V2": "on" if acp_version == 2 else "off",
    }
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if code_server.env.get(k) != v)
    tether = tmp_path / "tether"
    tether.write_text(f'#!/bin/sh\n{exports}exec "{sys.executable}" -m tether "$@"\n')
    tether.chmod(0o755)
    settings = {
        "tether.path": str(tether),
        "tether.provider": "scripted",
        "tether.script": str(HERE / "script.json"),
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "git.enabled": False,
    }
    code_server.user.mkdir(parents=True, exist_ok=True)
    (code_server.user / "settings.json").write_text(json.dumps(settings, indent=1))
    return env


def _extension_log_sizes(code_server: VSCodeServer) -> dict[Path, int]:
    return {p: p.stat().st_size for p in code_server.logs.rglob("*Tether*.log")}


def _extension_log_since(code_server: VSCodeServer, sizes: dict[Path, int]) -> list[str]:
    """The lines the extension's output channels got since `sizes` (the windows this test opened)."""
    lines = []
    for path in code_server.logs.rglob("*Tether*.log"):
        with path.open("rb") as log:
            log.seek(sizes.get(path, 0))
            lines += log.read().decode(errors="replace").splitlines()
    return lines


@pytest.mark.timeout(240)
def test_the_extension_in_real_vscode(
    code_server: VSCodeServer, daemon_of_the_window: dict[str, str], tmp_path: Path, acp_version: int
) -> None:
    url, log, artifacts = code_server.url, code_server.log, ARTIFACTS / f"acp-v{acp_version}"
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text(README)
    (folder / "src" / "greet.py").write_text('def greet(name):\n    return f"Hello, {name}"\n')
    # a workspace with no folder yet: folders arrive while the extension runs
    workspace = tmp_path / "chat.code-workspace"
    workspace.write_text('{"folders": []}\n')
    # an earlier session of the folder, for the view to list once the folder is there
    _run(
        [
            sys.executable,
            "-m",
            "tether",
            "run",
            "say hello",
            "--provider",
            "scripted",
            "--script",
            str(HERE / "script.json"),
        ],
        cwd=folder,
        env=daemon_of_the_window,
        timeout=30,
    )
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    log_sizes = _extension_log_sizes(code_server)

    env = {
        **os.environ,
        "CHROMIUM": _chromium(),
        "VSCODE_URL": f"{url}?workspace={workspace}",
        "WORKSPACE_FILE": str(workspace),
        "TETHER_FOLDER": str(folder),
        "ARTIFACTS": str(artifacts),
    }
    try:
        proc = subprocess.run(
            [code_server.node, str(HERE / "drive.mjs")],
            cwd=EXTENSION,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=200,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"drive.mjs did not finish; screenshots in {artifacts}\n{exc.stdout}\n{exc.stderr}\n"
            f"--- code-server ---\n{log.read_text(errors='replace')[-4000:]}"
        )
    report = (
        f"screenshots in {artifacts}\n--- drive.mjs ---\n{proc.stdout}\n{proc.stderr}\n"
        f"--- code-server ---\n{log.read_text(errors='replace')[-4000:]}"
    )
    assert proc.returncode == 0, report
    assert (folder / "README.md").read_text() == README.replace(
        "Hello from the sample workspace.", "Hello, edited by Tether in VS Code."
    ), report
    shots = sorted(p.name for p in artifacts.glob("*.png"))
    assert len(shots) >= 5, (shots, report)
    # the extension's output channel, as VS Code keeps it: every daemon of this test's windows
    # spoke the version offered
    started = [line for line in _extension_log_since(code_server, log_sizes) if "] started (pid" in line]
    assert started and all(line.endswith(f", ACP v{acp_version})") for line in started), (started, report)
