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
user data's logs) says which version each connection spoke.

Screenshots of each step go to editors/vscode/test-artifacts/vscode-real/ (gitignored); code-server's
log and the driver's output are in the failure message. Set up with `sh tests/install-deps`
(code-server into .cache/) after `npm ci --prefix editors/vscode`.
"""

from __future__ import annotations

import contextlib
import json
import os
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
class VSCodeHome:
    node: str
    dirs: list[str]  # code-server's --user-data-dir and --extensions-dir
    env: dict[str, str]  # a private HOME; the daemon's test environment (TETHER_HOME, ...)


@pytest.fixture(params=[2, 1], ids=["acp-v2", "acp-v1"])
def acp_version(request: pytest.FixtureRequest) -> int:
    """The ACP version the daemon offers: 2 (the default), or 1 only (`TETHER_ACP_V2=off`)."""
    return int(request.param)


@pytest.fixture
def vscode_home(tmp_path: Path, daemon_env: dict[str, str], acp_version: int) -> VSCodeHome:
    """A private HOME, user data and extensions directory with the freshly packaged .vsix installed."""
    _installed_code_server()
    _need(EXTENSION / "node_modules" / "@vscode" / "vsce", "the extension's build tools")
    node = shutil.which("node") or pytest.fail("node is not on PATH")
    home = tmp_path / "vscode-home"
    user = tmp_path / "user-data" / "User"
    user.mkdir(parents=True)
    home.mkdir()
    env = {
        **daemon_env,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        # code-server's environment is the extension host's, and so the daemon's
        "TETHER_ACP_V2": "on" if acp_version == 2 else "off",
    }
    vsix = tmp_path / "tether.vsix"
    _run(
        [
            node,
            "node_modules/@vscode/vsce/vsce",
            "package",
            "--no-dependencies",
            "--allow-missing-repository",
            "-o",
            str(vsix),
        ],
        cwd=EXTENSION,
        env=env,
        timeout=55,
    )
    dirs = ["--user-data-dir", str(tmp_path / "user-data"), "--extensions-dir", str(tmp_path / "extensions")]
    out = _run([node, str(CODE_SERVER), *dirs, "--install-extension", str(vsix)], cwd=tmp_path, env=env, timeout=55)
    assert "successfully installed" in out, out

    # the daemon of this checkout, as `tether.path` (it is run as `<path> serve`)
    tether = tmp_path / "tether"
    tether.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tether "$@"\n')
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
    (user / "settings.json").write_text(json.dumps(settings, indent=1))
    return VSCodeHome(node, dirs, env)


@pytest.fixture
def code_server(vscode_home: VSCodeHome, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """code-server on a free port (no auth); yields its URL and log file; stopped with all it started."""
    port = _free_port()
    log = tmp_path / "code-server.log"
    args = [
        vscode_home.node,
        str(CODE_SERVER),
        *vscode_home.dirs,
        "--config",
        str(tmp_path / "code-server.yaml"),
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
            cwd=tmp_path,
            env=vscode_home.env,
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
        yield url, log
    finally:
        # code-server, its extension host and the daemons the extension started: one process group
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)


@pytest.mark.timeout(240)
def test_the_extension_in_real_vscode(
    code_server: tuple[str, Path], vscode_home: VSCodeHome, tmp_path: Path, acp_version: int
) -> None:
    url, log = code_server
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
        env=vscode_home.env,
        timeout=30,
    )
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)

    env = {
        **os.environ,
        "CHROMIUM": _chromium(),
        "VSCODE_URL": f"{url}?workspace={workspace}",
        "WORKSPACE_FILE": str(workspace),
        "TETHER_FOLDER": str(folder),
        "ARTIFACTS": str(ARTIFACTS),
    }
    node = shutil.which("node") or "node"
    try:
        proc = subprocess.run(
            [node, str(HERE / "drive.mjs")],
            cwd=EXTENSION,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=200,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"drive.mjs did not finish; screenshots in {ARTIFACTS}\n{exc.stdout}\n{exc.stderr}\n"
            f"--- code-server ---\n{log.read_text(errors='replace')[-4000:]}"
        )
    report = (
        f"screenshots in {ARTIFACTS}\n--- drive.mjs ---\n{proc.stdout}\n{proc.stderr}\n"
        f"--- code-server ---\n{log.read_text(errors='replace')[-4000:]}"
    )
    assert proc.returncode == 0, report
    assert (folder / "README.md").read_text() == README.replace(
        "Hello from the sample workspace.", "Hello, edited by Tether in VS Code."
    ), report
    shots = sorted(p.name for p in ARTIFACTS.glob("*.png"))
    assert len(shots) >= 5, (shots, report)
    # the extension's output channel, as VS Code keeps it: every daemon spoke the version offered
    logs = [p.read_text(errors="replace") for p in (tmp_path / "user-data" / "logs").rglob("*Tether*.log")]
    started = [line for text in logs for line in text.splitlines() if "] started (pid" in line]
    assert started and all(line.endswith(f", ACP v{acp_version})") for line in started), (started, report)
