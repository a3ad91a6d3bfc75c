"""Tether as the benchmarks start it: its command lines, `initialize` params, one start-up sample.

Owns: the argv of `tether serve` / `tether acp` with the scripted provider or the openai
provider pointed at the fake model server, the environment the daemon runs in (its own
TETHER_HOME, no port probing, dummy keys, no proxy: Tether makes no request of its own
beyond the model's, which goes to 127.0.0.1), the
`initialize` params every benchmark sends, and one start-up sample: spawn ->
`initialize` answered -> `session/new` answered -> a "hi" `session/prompt` sent at
once and answered (spawn -> its first character read), then the process's CPU. Must not: assert anything about speed (nothing here is a test).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spawned import Spawned

from tether_protocol import Framing


def init_params(ws: Path) -> dict[str, Any]:
    return {"protocolVersion": 1, "clientCapabilities": {}, "rootUri": ws.as_uri(), "capabilities": {}}


def new_params(ws: Path) -> dict[str, Any]:
    return {"cwd": str(ws), "mcpServers": []}


def prompt_params(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def tether_argv(command: str, provider: str, *, script: Path | None = None, model_url: str | None = None,
                python: str = sys.executable) -> list[str]:
    """`python -m tether <command>` (serve, acp or run) with the scripted or the openai provider;
    ``python``: another checkout's interpreter (a baseline sampled in the same run)."""
    argv = [python, "-m", "tether", command, "--provider", provider]
    if provider == "scripted":
        assert script is not None
        return argv + ["--script", str(script)]
    assert model_url is not None
    return argv + ["--base-url", f"{model_url}/v1", "--model", "bench-model", "--max-retries", "0"]


def tether_env(base: dict[str, str], home: Path) -> dict[str, str]:
    # no proxy settings: the fake model server is on 127.0.0.1, reached directly.
    # Bytecode is cached as in any install (a wheel's pip install compiles it; an
    # environment with PYTHONDONTWRITEBYTECODE would compile every module on every spawn).
    compile_packages()
    env = {k: v for k, v in base.items()
           if not k.startswith(("TETHER_", "OPENAI_", "ANTHROPIC_", "PYTHONDONTWRITEBYTECODE"))
           and not k.lower().endswith("_proxy")}
    env.update(TETHER_HOME=str(home), TETHER_PROBE_PORTS="",
               OPENAI_API_KEY="bench-not-a-key", ANTHROPIC_API_KEY="bench-not-a-key")
    return env


async def tether_sample(argv: list[str], framing: Framing, env: dict[str, str], ws: Path,
                        pause_s: float = 0.0) -> dict[str, float]:
    """One spawn of the daemon: start-up figures, the short turn (sent `pause_s` after
    `session/new` answers: 0 is a prompt sent at once), CPU and peak RSS."""
    c = await Spawned.start(argv, env=env, cwd=ws, framing=framing)
    await c.request("initialize", init_params(ws))
    init_ms = c.since_spawn_ms()
    session = await c.request("session/new", new_params(ws))
    new_ms = c.since_spawn_ms()
    new_cpu_s = c.cpu_s()  # load on the machine stretches the wall time, not this
    if pause_s:
        await asyncio.sleep(pause_s)
    sent_ms = c.since_spawn_ms()
    answer = await c.request("session/prompt", prompt_params(session["sessionId"], "hi"))
    turn_ms = c.since_spawn_ms() - sent_ms
    first_ms = first_text_ms(c, "session/update", _is_text_chunk)
    if answer.get("stopReason") != "end_turn":
        raise RuntimeError(f"tether turn ended {answer}")
    rss = c.peak_rss_mb()
    cpu = await c.close()
    return {"init_ms": init_ms, "new_ms": new_ms, "new_cpu_s": new_cpu_s, "turn_ms": turn_ms,
            "first_ms": first_ms, "cpu_s": cpu, "rss_mb": rss}


def _is_text_chunk(params: Any) -> bool:
    return bool(params["update"]["sessionUpdate"] == "agent_message_chunk")


def first_text_ms(c: Spawned, method: str, is_text: Callable[[Any], bool]) -> float:
    """Spawn -> the first notification of the reply's text read (the prompt was sent the
    instant `session/new` answered, so this is the cold path's first character)."""
    for t, name, params in c.queued():
        if name == method and is_text(params):
            return (t - c.t_spawn) * 1000
    raise RuntimeError(f"no {method} with the reply's text arrived")


def compile_packages(python: str | None = None) -> None:
    """Write the .pyc files of Tether's packages, as installing a wheel does (``python``:
    those of the checkout that interpreter imports, e.g. a baseline's)."""
    import compileall

    if python is not None:
        code = ("import compileall, os, tether, tether_client, tether_protocol\n"
                "for m in (tether, tether_client, tether_protocol):\n"
                "    compileall.compile_dir(os.path.dirname(m.__file__), quiet=1)")
        subprocess.run([python, "-c", code], check=True, env={k: v for k, v in os.environ.items()
                                                              if k != "PYTHONDONTWRITEBYTECODE"})
        return
    root = Path(__file__).resolve().parent.parent
    for package in ("daemon", "protocol", "clients"):
        compileall.compile_dir(str(root / package), quiet=1)

