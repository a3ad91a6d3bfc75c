"""OpenAI Codex as the start-up baseline: finding it, configuring it, one app-server sample.

Owns: resolving the Codex binary from an option or `TETHER_BENCH_CODEX` (the native
binary, an npm prefix holding `@openai/codex`, or the npm `bin/codex.js` launcher: the
native binary inside the package is what is measured, so node's start-up is not
counted), a CODEX_HOME whose config.toml points Codex at the fake model server
(`wire_api = "responses"`, a dummy key from the environment), and one sample of
`codex app-server`: spawn -> `initialize` answered -> `thread/start` answered ->
`turn/start` -> `turn/completed`, then the process's CPU. Must not: let Codex reach the
network (the environment routes every other host to a dead proxy) or read the user's
own ~/.codex.

The app-server speaks JSON-RPC over stdio, one JSON per line, without the `"jsonrpc"`
member in what it writes (bench/spawned.py puts it in for the peer). Methods and params,
as `codex app-server generate-json-schema` gives them for codex-cli 0.169.0:
`initialize {clientInfo}`, the `initialized` notification, `thread/start {cwd}` ->
`{thread: {id}}`, `turn/start {threadId, input: [{type: "text", text}]}`, then the
`turn/completed` notification.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from fake_model import OFFLINE_ENV
from spawned import Spawned

ENV_VAR = "TETHER_BENCH_CODEX"
TEXT_DELTA = "item/agentMessage/delta"  # the app-server's notification of the reply's text


def resolve_codex(given: str | None) -> Path | None:
    """The native codex binary, or None when it is not installed where we were told."""
    raw = given or os.environ.get(ENV_VAR)
    if not raw:
        return None
    path = Path(raw).expanduser().resolve()
    if path.is_file() and path.suffix != ".js":
        return path
    root = path.parent.parent if path.suffix == ".js" else path  # bin/codex.js -> the package
    patterns = (
        "node_modules/@openai/codex-*/vendor/*/bin/codex",
        "node_modules/@openai/codex/vendor/*/codex/codex",
        "vendor/*/bin/codex",
        "vendor/*/codex/codex",
        "../codex-*/vendor/*/bin/codex",
    )
    for pattern in patterns:
        for found in sorted(root.glob(pattern)):
            if found.is_file() and os.access(found, os.X_OK):
                return found
    return None


def codex_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or out.stderr.strip()


def write_codex_home(home: Path, model_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "bench-model"\n'
        'model_provider = "bench"\n'
        "[model_providers.bench]\n"
        'name = "bench"\n'
        f'base_url = "{model_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "BENCH_CODEX_API_KEY"\n'
    )


def codex_env(base: dict[str, str], home: Path) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("CODEX_", "OPENAI_", "RUST_LOG"))}
    env.update(OFFLINE_ENV)
    env.update(CODEX_HOME=str(home), BENCH_CODEX_API_KEY="bench-not-a-key")
    return env


async def _refuse(method: str, params: Any) -> Any:
    raise RuntimeError(f"the bench does not answer {method}")


async def codex_sample(binary: Path, env: dict[str, str], ws: Path, stderr_log: Path | None = None) -> dict[str, float]:
    """One spawn of `codex app-server`: start-up figures, the short turn, CPU and peak RSS."""
    log = stderr_log.open("ab") if stderr_log is not None else None
    try:
        c = await Spawned.start(
            [str(binary), "app-server"], env=env, cwd=ws, framing="ndjson", on_request=_refuse, stderr=log, lite=True
        )
        await c.request("initialize", {"clientInfo": {"name": "tether-bench", "title": "Tether bench", "version": "0"}})
        init_ms = c.since_spawn_ms()
        c.notify("initialized")
        thread = await c.request("thread/start", {"cwd": str(ws)})
        new_ms = c.since_spawn_ms()
        new_cpu_s = c.cpu_s()  # load on the machine stretches the wall time, not this
        await c.request("turn/start", {"threadId": thread["thread"]["id"], "input": [{"type": "text", "text": "hi"}]})
        first_ms, done = await _first_text_and_end(c)
        turn_ms = c.since_spawn_ms() - new_ms
        status = done["turn"]["status"]
        if status != "completed":
            raise RuntimeError(f"codex turn ended {status}: {done['turn'].get('error')}")
        rss = c.peak_rss_mb()
        cpu = await c.close()
    finally:
        if log is not None:
            log.close()
    return {
        "init_ms": init_ms,
        "new_ms": new_ms,
        "new_cpu_s": new_cpu_s,
        "turn_ms": turn_ms,
        "first_ms": first_ms,
        "cpu_s": cpu,
        "rss_mb": rss,
    }


async def _first_text_and_end(c: Spawned) -> tuple[float, Any]:
    """Spawn -> the first `item/agentMessage/delta` read (ms), and `turn/completed`'s params."""
    first_ms = float("nan")
    while True:
        t, method, params = await c.next_note()
        if method == TEXT_DELTA and first_ms != first_ms:
            first_ms = (t - c.t_spawn) * 1000
        if method == "turn/completed":
            return first_ms, params


def codex_exec_argv(binary: Path) -> list[str]:
    return [str(binary), "exec", "--skip-git-repo-check", "hi"]
