"""How many allow-rule attack spellings run unasked: the gate's verdict, then a real run.

    python bench/allow_rule_attacks.py [--tree DIR]

The spellings are the tables of `tests/approvals/test_allow_rules_show_what_runs.py`
(writes onto existing or configuring files, options that run programs), decided by the
gate of the source tree `--tree` names (default: this one) with "allow always" rules on
read-looking programs, in mode ask. Each one allowed is then run through `run_command`
in bubblewrap, in a fresh workspace (a git repository with a `Makefile`, a
`package.json`, `notes.txt`, `.tether/`, `a.tar`), and counts as having run what it
hides when a `pwned` file appears, a file that was there changes, or a configuring file
(a dotfile, a build, instructions or code file) is created. The push spellings and the
ordinary ones are counted by the gate's verdict alone. Not a speed figure: the counts
for issue 30's note (`bench/RESULTS.md`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv else REPO
sys.path[:0] = [str(TREE / "daemon"), str(TREE / "protocol")]

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.sandbox import choose_sandbox
from tether.store import HistoryStore
from tether.tools.base import ToolContext
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox

TABLES = REPO / "tests" / "approvals" / "test_allow_rules_show_what_runs.py"
CONFIGURING = (
    "makefile",
    "package.json",
    "agents.md",
    "claude.md",
    ".py",
    ".toml",
    ".cfg",
    ".yml",
    ".yaml",
    ".json",
    ".js",
    ".txt",
)


class Rejects:
    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        return AskerAnswer("reject_once")


def workspace(root: Path) -> dict[str, bytes | None]:
    """A fresh workspace, and what is in it (outside `.git`)."""
    for folder in (".tether", "sub", "tests"):
        (root / folder).mkdir(parents=True)
    (root / "Makefile").write_text("test:\n\techo ok\n")
    (root / "package.json").write_text("{}\n")
    (root / "notes.txt").write_text("a\nx\n")
    (root / "linkdir").symlink_to(".tether")
    (root / "dangling").symlink_to(root.parent / "nowhere" / "file")
    (root / "outlink").symlink_to(root.parent)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(git + args, cwd=root, check=True)
    subprocess.run(["tar", "-cf", "a.tar", "notes.txt"], cwd=root, check=True)
    return contents(root)


def contents(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in root.rglob("*")
        if ".git/" not in p.as_posix()
    }


def ran_what_it_hides(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> bool:
    if any("pwned" in name for name in after):
        return True
    if any(name in after and after[name] != was for name, was in before.items()):
        return True
    created = [n for n in after if n not in before and not n.startswith((".git", "copy"))]  # `git clone . copy`
    return any(n.startswith((".", "linkdir")) or n.lower().endswith(CONFIGURING) for n in created)


async def allowed_unasked(gate: ApprovalGate, command: str) -> bool:
    request = ApprovalRequest(
        "s",
        "c",
        "run_command",
        "execute",
        command,
        {"command": command},
        "ask",
        command=command,
        cwd=".",
        sandboxed=True,
    )
    return (await gate.decide(request, Rejects())).allowed


async def main() -> None:
    spec = importlib.util.spec_from_file_location("tables", TABLES)
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    attacks = [command for command, _ in tables.WRITES + tables.RUNS]
    allowed, ran = 0, []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
        store = await HistoryStore.open(Path(scratch) / "h.sqlite3")
        for n, command in enumerate(attacks):
            root = Path(scratch) / f"ws{n}"
            before = workspace(root)
            takes = inspect.signature(ApprovalGate).parameters
            gate = ApprovalGate(store.rules, **({"workspace": root} if "workspace" in takes else {}))
            if n == 0:
                for prefix in tables.ALLOWED:
                    await gate.add_rule("execute", prefix, "allow")
            if not await allowed_unasked(gate, command):
                continue
            allowed += 1
            ctx = replace(ToolContext(sandbox=WorkspaceSandbox(root)), command_sandbox=choose_sandbox("bwrap"))
            await RunCommandTool().call({"command": command, "timeout": 5}, ctx)
            if ran_what_it_hides(before, contents(root)):
                ran.append(command)
        # the push spellings and the ordinary ones: the gate's verdict only
        verdicts = {}
        for table in ("PUSHES", "MAY_PUSH", "SAFE"):
            commands = [row if isinstance(row, str) else row[0] for row in getattr(tables, table)]
            verdicts[table] = (sum([await allowed_unasked(gate, c) for c in commands]), len(commands))
        await store.close()
    print(
        f"{TREE}: {allowed} of {len(attacks)} allowed unasked; {len(ran)} of {len(attacks)} ran or wrote what they hide"
    )
    for table, (n, total) in verdicts.items():
        print(f"  {table}: {n} of {total} allowed unasked")
    for command in ran:
        print(f"    {command}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="the source tree whose gate decides (default: this one)")
    parser.parse_args()
    asyncio.run(main())
