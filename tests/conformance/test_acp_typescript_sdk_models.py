"""The official ACP TypeScript SDK switches the model and the reasoning effort mid-session
(`session/set_config_option`), and the next model request carries them.

tests/conformance/ts/model_switch.mjs starts a fake OpenAI-compatible server (node:http),
spawns `tether acp --provider openai` against it, and drives it with the SDK's client:
the provider's models arrive in a `config_option_update`, the SDK picks `o3` then the
reasoning effort `high`, and the request bodies the fake received show both. Every update
and answer is parsed with the SDK's own schemas. Set up once with `npm ci --prefix
tests/conformance/ts` (Node.js 20+).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TS = Path(__file__).resolve().parent / "ts"
SCRIPT = TS / "model_switch.mjs"
SDK_PACKAGE = TS / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
SETUP = "run `sh tests/install-deps` (it runs npm ci --prefix tests/conformance/ts)"


def test_the_typescript_sdk_switches_model_and_reasoning_mid_session(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    env = {
        **daemon_env,
        "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath,
        "TETHER_PYTHON": sys.executable,
        "OPENAI_API_KEY": "sk-conformance-fake",
    }
    node = shutil.which("node", path=env["PATH"])
    if node is None:
        pytest.fail(f"node is not on PATH: this test needs Node.js 20+ and the ACP SDK ({SETUP})")
    if not SDK_PACKAGE.is_file():
        pytest.fail(f"tests/conformance/ts/node_modules is missing the ACP TypeScript SDK: {SETUP}")
    proc = subprocess.run(
        [node, str(SCRIPT), "--workspace", str(workspace)],
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    output = f"--- node stdout ---\n{proc.stdout}\n--- node stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, output
    summary = json.loads(proc.stdout)
    assert summary["ok"] and summary["bodies"] == 3, output
    names = [c["name"] for c in summary["checks"]]
    assert "each next request carries the model and reasoning effort chosen" in names, output
