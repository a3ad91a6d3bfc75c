"""Generated spellings of a write onto a file that configures what runs, under allow rules
on every program involved: the gate never approves one, and /bin/sh really writes the
file with each (so the generator makes real attacks, not text the shell ignores)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bypass_property import RejectingUser  # the same "reject and count" user

from tether.approvals import ApprovalGate, ApprovalRequest
from tether.store import HistoryStore

TARGETS = (
    "Makefile",
    "package.json",
    "AGENTS.md",
    ".envrc",
    ".tether/MEMORY.md",
    "conftest.py",
    "notes.txt",
    ".vscode/tasks.json",
    "pyproject.toml",
    "justfile",
)
EXISTING = ("Makefile", "package.json", "notes.txt", ".tether/MEMORY.md")
RULES = ("echo", "printf", "cat", "ls", "tee", "sort", "uniq", "sed")


@st.composite
def spelled(draw: st.DrawFn, target: str) -> str:
    """`target` as the shell reads it, written another way."""
    path = draw(st.sampled_from([target, f"./{target}", f"sub/../{target}", f".//{target}"]))
    quoting = draw(st.sampled_from(["plain", "single", "double", "backslash", "split"]))
    if quoting == "single":
        return f"'{path}'"
    if quoting == "double":
        return f'"{path}"'
    if quoting == "backslash":
        return "\\" + path
    half = len(path) // 2
    return f"{path[:half]}''{path[half:]}" if quoting == "split" else path


@st.composite
def write_command(draw: st.DrawFn) -> tuple[str, str]:
    target = draw(st.sampled_from(TARGETS))
    where = draw(spelled(target))
    source = draw(st.sampled_from(["echo 'run: touch pwned'", "printf 'x\\n'", "cat source.txt", "ls"]))
    form = draw(st.sampled_from(["redirect", "tee", "sort", "uniq", "sed"]))
    if form == "redirect":
        operator = draw(st.sampled_from([">", ">>", ">|", "1>", "2>"]))
        command = f"{source} {operator}{draw(st.sampled_from(['', ' ']))}{where}"
        if draw(st.booleans()):
            command = f"{operator}{where} {source}"  # the redirection first
    elif form == "tee":
        command = f"{source} | tee {draw(st.sampled_from(['', '-a ', '-- ', '-i ']))}{where}"
    elif form == "sort":
        option = draw(st.sampled_from(["-o ", "-o", "--output=", "--output ", "--out=", "-uo "]))
        command = f"sort {option}{where} notes.txt"
    elif form == "uniq":
        command = f"uniq notes.txt {where}"
    else:
        target = draw(st.sampled_from(EXISTING))  # `sed -i` rewrites a file that is there
        where = draw(spelled(target))
        command = f"sed {draw(st.sampled_from(['-i', '-i.bak', '--in-place', '-ni', '-i -e']))} 's/a/b/' {where}"
    return target, command


def _workspace(root: Path) -> None:
    for folder in (".tether", ".vscode", "sub"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for name in EXISTING:
        (root / name).write_text("a\nz\n")
    (root / "notes.txt").write_text("b\na\na\n")  # what sort and uniq read: each changes it
    (root / "source.txt").write_text("from the source\n")


async def _decide(root: Path, command: str) -> tuple[bool, int, str]:
    store = await HistoryStore.open(root.parent / "h.sqlite3")
    try:
        gate = ApprovalGate(store.rules, workspace=root)
        for prefix in RULES:
            await gate.add_rule("execute", prefix, "allow")
        user = RejectingUser()
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
        verdict = await gate.decide(request, user)
        return verdict.allowed, user.asked, verdict.reason
    finally:
        await store.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=write_command())
def test_no_allow_rule_approves_a_write_onto_a_configuring_or_existing_file(case: tuple[str, str]) -> None:
    target, command = case
    with tempfile.TemporaryDirectory() as base:
        root = Path(base) / "ws"
        _workspace(root)
        allowed, asked, reason = anyio.run(_decide, root, command)
        assert not allowed and asked == 1, (command, reason)
        before = (root / target).read_bytes() if (root / target).exists() else None
        subprocess.run(["/bin/sh", "-c", command], cwd=root, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        after = (root / target).read_bytes() if (root / target).exists() else None
        assert after is not None and after != before, f"the generator's command does not write {target}: {command!r}"
