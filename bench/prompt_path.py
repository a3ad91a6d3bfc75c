"""How many of Tether's modules a prompt crosses from the wire to the provider's request.

    .venv/bin/python bench/prompt_path.py [--show]

A daemon's server in this process (tests/server/server_harness.py: the real handlers, the
scripted provider, a recording connection), one warm-up turn, then a second `session/prompt`
traced with `sys.setprofile` from the handler's call until the provider's `stream` begins:
the distinct `tether*` modules whose functions ran (issue 32's figure, goal under 15), the
modules on the stack the request is made from (the chain of calls, in the turn's task), and
the functions per module with `--show`. A count, not a speed figure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "server"))


def _stack(frame: FrameType | None) -> list[str]:
    """The tether* modules on the stack (outermost first, each once): the chain of calls the
    request is made in (the turn's task: its start in the prompt's handler is another task)."""
    chain: list[str] = []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("tether") and module not in chain:
            chain.append(module)
        frame = frame.f_back
    return chain[::-1]


def _trace(calls: Counter[tuple[str, str]], reached: list[bool], chain: list[str]) -> Any:
    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or reached[0]:
            return
        module = frame.f_globals.get("__name__", "")
        if module == "tether.providers.scripted" and frame.f_code.co_name == "stream":
            reached[0] = True
            chain.extend(_stack(frame.f_back))
            return
        if module.startswith("tether"):
            calls[(module, frame.f_code.co_name)] += 1

    return profile


async def _measure(chain: list[str]) -> Counter[tuple[str, str]]:
    from server_harness import running, settings_for

    calls: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Sample\n")
        async with running(settings_for(Path(tmp)), workspace) as daemon:
            session = await daemon.new_session(workspace)
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}
            await daemon.call("session/prompt", prompt)  # the warm-up: every module imported
            reached = [False]
            sys.setprofile(_trace(calls, reached, chain))
            try:
                await daemon.call("session/prompt", prompt)
            finally:
                sys.setprofile(None)
            assert reached[0], "the provider's stream was never called"
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="the functions that ran, per module")
    args = parser.parse_args()
    chain: list[str] = []
    calls = asyncio.run(_measure(chain))
    modules = Counter(module for module, _ in calls.elements())
    print(f"{len(chain)} modules on the stack the provider's request is made from: {' > '.join(chain)}")
    print(f"{len(modules)} modules of tether* from `session/prompt` to the provider's request")
    for module, count in sorted(modules.items()):
        print(f"  {module}: {count} calls")
        if args.show:
            for (owner, name), n in sorted(calls.items()):
                if owner == module:
                    print(f"      {name} x{n}")


if __name__ == "__main__":
    main()
