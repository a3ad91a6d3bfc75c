"""Permission prompts in a scripted, realistic session, before and after sandbox-aware asking.

    .venv/bin/python bench/prompt_count.py [--tree DIR] [--out FILE]

One session of `bench/prompt_session.json` (look around, install, test, edit, test again,
add a test, lint-like checks, `git status`/`diff`/`add`/`commit`, `make test`, one fetch),
run through a real `tether serve` (scripted provider, the OS sandbox `auto` picks) in a
fresh workspace (a small Python project with a Makefile, a package.json and a git
repository), three ways: mode `ask`, mode `auto-edit` with `sandbox_auto_allow = "off"`
(auto-edit as it was before), and `auto-edit` with it on (the default). Every prompt is
answered "allow once" (no network: nothing leaves the machine; what needs it fails in
the sandbox). Reported per way: the prompts, which calls asked, and which ran unasked
because the sandbox confines them. A count, not a speed figure (`bench/RESULTS.md`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv else REPO
SCRIPT = REPO / "bench" / "prompt_session.json"
WAYS = (("ask", "on"), ("auto-edit", "off"), ("auto-edit", "on"))


def _workspace(root: Path) -> Path:
    ws = root / "project"
    (ws / "src").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "README.md").write_text("# calc\n\nA tiny calculator.\n")
    (ws / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "tests" / "test_calc.py").write_text(
        "import sys, unittest\nsys.path.insert(0, 'src')\nfrom calc import add\n\n\n"
        "class T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    (ws / "Makefile").write_text("test:\n\tpython3 -m unittest discover -s tests -q\n")
    (ws / "package.json").write_text('{"name": "calc-docs", "private": true, "dependencies": {"left-pad": "1.3.0"}}\n')
    (ws / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0.1.0"\n')
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=ws, check=True)
    return ws


def _env(root: Path, auto_allow: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_", "ANTHROPIC_"))}
    env.update(
        TETHER_HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "cfg"),
        TETHER_PROBE_PORTS="",
        TETHER_SANDBOX_AUTO_ALLOW=auto_allow,
        PYTHONPATH=f"{TREE / 'daemon'}:{TREE / 'protocol'}",
    )
    return env


async def _session(mode: str, auto_allow: str) -> dict[str, object]:
    sys.path.insert(0, str(TREE / "clients"))
    from tether_client import TetherClient

    with tempfile.TemporaryDirectory(prefix="tether-prompts-") as tmp:
        root = Path(tmp)
        ws = _workspace(root)
        command = [
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
            "--mode",
            mode,
        ]
        client = await TetherClient.spawn(
            command=command, cwd=ws, env=_env(root, auto_allow), stderr=subprocess.DEVNULL, framing="lsp"
        )
        asked: list[str] = []

        async def on_request(method: str, params: dict) -> dict:
            call = params["toolCall"]
            asked.append(str((call.get("rawInput") or {}).get("command") or call.get("title")))
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        client.peer.on_request = on_request
        try:
            await client.initialize()
            session = await client.new_session(ws)
            updates = [u async for u in session.prompt("fix the calculator")]
        finally:
            await client.close()
    calls: dict[str, str] = {}  # call id -> its command (or title)
    status: dict[str, str] = {}
    for u in updates:
        if u.get("sessionUpdate") in ("tool_call", "tool_call_update"):
            raw = u.get("rawInput") or {}
            calls[u["toolCallId"]] = str(raw.get("command") or calls.get(u["toolCallId"]) or u.get("title"))
            status[u["toolCallId"]] = str(u.get("status") or status.get(u["toolCallId"], ""))
    unasked = [
        f"{calls[u['toolCallId']]}  [{status[u['toolCallId']]}]"
        for u in updates
        if "without asking" in str(((u.get("_meta") or {}).get("tether") or {}).get("approvedBy") or "")
    ]
    return {
        "mode": mode,
        "sandbox_auto_allow": auto_allow,
        "calls": len(calls),
        "prompts": len(asked),
        "asked": asked,
        "unasked": unasked,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", help="the source tree whose daemon runs (default: this one)")
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()
    results = [asyncio.run(_session(mode, auto)) for mode, auto in WAYS]
    for r in results:
        print(
            f"{r['mode']:<9} sandbox_auto_allow={r['sandbox_auto_allow']:<3}  "
            f"{r['prompts']:>2} prompts for {r['calls']} tool calls"
        )
        for command in r["asked"]:  # type: ignore[attr-defined]
            print(f"    asked:   {command}")
        for title in r["unasked"]:  # type: ignore[attr-defined]
            print(f"    unasked (sandboxed): {title}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
