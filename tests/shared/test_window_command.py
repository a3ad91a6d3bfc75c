"""The `tether` command every editor window runs: bin/tether as it is (not pip's generated
console-script wrapper, which imports `re` first), and through the shared daemon it loads
only the few standard-library modules relaying needs."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tether import __version__

REPO = Path(__file__).resolve().parents[2]
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
# what the proxy must never pull in: each costs a window milliseconds before its first byte
HEAVY = {
    "re",
    "typing",
    "enum",
    "socket",
    "selectors",
    "json",
    "asyncio",
    "argparse",
    "pathlib",
    "hashlib",
    "orjson",
    "tether.server",
    "tether.handlers",
    "tether.services",
    "tether.rendering",
    "tether.config",
    "tether_protocol",
}


def _imported(stderr: str) -> set[str]:
    """Module names from `-X importtime` lines."""
    names = set()
    for line in stderr.splitlines():
        parts = line.split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[2].strip() != "package":
            names.add(parts[2].strip())
    return names


async def test_a_second_window_answers_initialize_with_a_few_stdlib_modules(windows, workspace: Path):
    await windows.open()  # the daemon is up
    window = subprocess.run(
        [sys.executable, "-X", "importtime", str(REPO / "bin" / "tether"), *windows.command()[3:]],
        input=INIT,
        capture_output=True,
        env=windows.env,
        cwd=workspace,
        timeout=60,
    )
    answer = json.loads(window.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["agentInfo"]["name"] == "tether", window.stderr.decode()[-2000:]
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, env=windows.env)
    extra = _imported(window.stderr.decode()) - _imported(bare.stderr.decode())
    assert not extra & HEAVY, sorted(extra & HEAVY)
    assert {"tether", "tether_cli", "tether.shared.proxy"} <= extra
    assert len(extra) <= 12, sorted(extra)
    assert windows.daemon_pids() and len(windows.daemon_pids()) == 1


def test_the_wheel_installs_bin_tether_as_the_command(tmp_path: Path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("tether-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        script = archive.read(f"tether-{__version__}.data/scripts/tether").decode()
        entry_points = [n for n in names if n.endswith("entry_points.txt")]
        console = "".join(archive.read(n).decode() for n in entry_points)
    # the installer points `#!python` at its interpreter; the rest is bin/tether's
    first, _, rest = script.partition("\n")
    assert first == "#!python"
    assert rest == (REPO / "bin" / "tether").read_text().partition("\n")[2]
    assert "import re" not in script
    assert "tether =" not in console, "a [project.scripts] `tether` would overwrite bin/tether with pip's wrapper"
