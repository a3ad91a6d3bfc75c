"""A cold first turn against an https model server: what loading the CA bundle costs, before and after.

    .venv/bin/python bench/https_first_turn.py [--runs 10] [--baseline PYTHON]

The fake model server (bench/fake_model.py --tls) answers over TLS on 127.0.0.1 with a
self-signed certificate; `SSL_CERT_FILE` names certifi's bundle with that CA appended, so
the daemon loads as many CAs as it does for api.openai.com (and trusts the fake server).
Each sample is a fresh `tether run "hi" --provider openai` (spawn -> exit, and its CPU).
Variants, each sampled once per round in turn so the machine's load falls on all alike:
`base` (the baseline tree: httpx builds its context on the event loop as the provider is
built), `thread` (this tree: the context is built in a worker thread from the provider's
construction on) and `inline` (this tree with `tls.TlsContext` patched to build on the
event loop), which isolates what the thread saves. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import certifi

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from fake_model import FakeModel
from startup import REPLY_DELTAS, oneshot
from tether_side import compile_packages, tether_argv, tether_env

INLINE = (
    "import concurrent.futures, sys, tether.providers.tls as tls\n"
    "class Inline(tls.TlsContext):\n"
    "    def __init__(self, env):\n"
    "        self._future = concurrent.futures.Future()\n"
    "        self._build(dict(env))\n"
    "tls.TlsContext = Inline\n"
    "from tether_cli import main\n"
    "sys.argv[0] = 'tether'\n"
    "raise SystemExit(main())\n"
)


def certificates(scratch: Path) -> tuple[Path, Path, Path]:
    cert, key, bundle = scratch / "cert.pem", scratch / "key.pem", scratch / "bundle.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    bundle.write_text(Path(certifi.where()).read_text() + cert.read_text())
    return cert, key, bundle


async def run(runs: int, baseline: str | None) -> dict[str, dict[str, float]]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-https-"))
    ws = scratch / "ws"
    ws.mkdir()
    cert, key, bundle = certificates(scratch)
    model = FakeModel(REPLY_DELTAS, max_requests=100_000, tls=(str(cert), str(key)))
    env = {**tether_env(dict(os.environ), scratch / "home"), "SSL_CERT_FILE": str(bundle)}
    argv = [*tether_argv("run", "openai", model_url=model.url), "--workspace", str(ws), "hi"]
    variants = {"thread": argv, "inline": [sys.executable, "-c", INLINE, *argv[3:]]}
    if baseline is not None:
        compile_packages(baseline)
        variants = {"base": [baseline, *argv[1:]], **variants}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    try:
        for name, command in variants.items():  # warm-up: homes, databases, caches
            await oneshot(command, {**env, "TETHER_HOME": str(scratch / f"home-{name}")}, ws)
        for _ in range(runs):
            for name, command in variants.items():
                samples[name].append(await oneshot(command, {**env, "TETHER_HOME": str(scratch / f"home-{name}")}, ws))
    finally:
        model.close()
    return {
        name: {
            "wall_ms": statistics.median(s["wall_ms"] for s in got),
            "wall_min_ms": min(s["wall_ms"] for s in got),
            "cpu_ms": statistics.median(s["cpu_s"] for s in got) * 1000,
        }
        for name, got in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", help="another checkout's venv python (before the change)")
    args = parser.parse_args()
    result = asyncio.run(run(args.runs, args.baseline))
    print(json.dumps({"load": os.getloadavg(), "runs": args.runs, **result}, indent=1))


if __name__ == "__main__":
    main()
