"""The official ACP TypeScript SDK (@agentclientprotocol/sdk) drives `tether acp`.

tests/conformance/ts/conformance.mjs is an ACP client built with the SDK: it spawns the
daemon with the scripted provider (examples/approvals.json), talks ndjson over its stdio,
answers permission prompts from a script, serves fs/read_text_file and fs/write_text_file
from the disk, and checks what an SDK client sees: initialize, session/new, an allowed
edit, a rejected command, session/cancel while a permission prompt is pending, the SDK's
own `$/cancel_request`, session/list, and session/load with replay in a second daemon.
Every message Tether sends is also parsed with the SDK's ACP v1 schemas.

Set up once with `npm ci --prefix tests/conformance/ts` (Node.js 20+).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daemon_harness import EXAMPLES

TS = Path(__file__).resolve().parent / "ts"
SCRIPT = TS / "conformance.mjs"
SDK_PACKAGE = TS / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
SETUP = "run `sh tests/install-deps` (it runs npm ci --prefix tests/conformance/ts)"

# Where Tether differs from ACP v1 or from what the SDK expects, as the run reports them
# (`deviations` in its summary). None of them breaks the run; listing them here makes a
# new one, or a fixed one, fail this test until the list is updated.
# Deviations from ACP v1 / the SDK that Tether knows about and keeps (none today: the
# LSP half of the initialize answer moved under `_meta` for ACP clients, and request
# cancellation uses ACP's `$/cancel_request {requestId}` both ways).
KNOWN_DEVIATIONS: dict[str, str] = {}


def test_official_typescript_sdk_drives_tether_acp(daemon_env: dict[str, str], workspace: Path) -> None:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    node = shutil.which("node", path=env["PATH"])
    if node is None:
        pytest.fail(f"node is not on PATH: this test needs Node.js 20+ and the ACP SDK ({SETUP})")
    if not SDK_PACKAGE.is_file():
        pytest.fail(f"tests/conformance/ts/node_modules is missing the ACP TypeScript SDK: {SETUP}")

    daemon = [
        sys.executable,
        "-m",
        "tether",
        "acp",
        "--provider",
        "scripted",
        "--script",
        str(EXAMPLES / "approvals.json"),
    ]
    try:
        proc = subprocess.run(
            [node, str(SCRIPT), "--workspace", str(workspace), "--", *daemon],
            env=env,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=50,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"conformance.mjs did not finish in {exc.timeout} s\n--- stdout ---\n{exc.stdout}\n--- stderr ---\n{exc.stderr}"
        )

    output = f"--- node stdout ---\n{proc.stdout}\n--- node stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, f"conformance.mjs exited {proc.returncode}\n{output}"
    summary = json.loads(proc.stdout)
    assert summary["ok"] and summary["failed"] == 0, output
    assert summary["passed"] >= 50, output  # the run really got through all its steps

    seen = {d["id"]: d for d in summary["deviations"]}
    new = sorted(seen.keys() - KNOWN_DEVIATIONS.keys())
    gone = sorted(KNOWN_DEVIATIONS.keys() - seen.keys())
    assert not new, "new deviations from ACP v1 / the SDK:\n" + "\n".join(
        f"- {key}: {seen[key]['summary']}\n    " + "\n    ".join(seen[key]["exchange"]) for key in new
    )
    assert not gone, f"no longer seen, remove them from KNOWN_DEVIATIONS: {gone}"
