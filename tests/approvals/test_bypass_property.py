"""Property: a denied command wrapped in random shell constructs, with random quoting,
`#` and newlines that the shell still runs as the denied command, is never allowed by a
mode or a rule without asking. The harmless stand-in (`touch pwned`, denied by
`deny_commands`) is also run through the real /bin/sh, so the generator is checked to
produce commands that really run it."""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.store import HistoryStore

# each core as a list of words; every word has spellings the shell reads the same
CORES = [
    ["git", "push", "origin", "main"],
    ["git", "push"],
    ["rm", "-rf", "/"],
    ["rm", "-fr", "/"],
    ["sudo", "true"],
    ["touch", "pwned"],
]
STAND_IN = ["touch", "pwned"]


def spellings(word: str) -> list[str]:
    out = [word, f"'{word}'", f'"{word}"', "\\" + word]
    if len(word) > 1:
        out += [f"{word[0]}'{word[1:]}'", f'{word[:-1]}"{word[-1]}"', f"{word[0]}''{word[1:]}"]
    return out


@st.composite
def core_command(draw: st.DrawFn) -> tuple[list[str], str]:
    core = draw(st.sampled_from(CORES))
    words = [draw(st.sampled_from(spellings(w))) for w in core]
    if draw(st.booleans()):
        words.append(draw(st.sampled_from(["x#y", "x#", "'#'"])))  # `#` inside a word: not a comment
    return core, " ".join(words)


SIMPLE_WRAPPERS = [
    "env {c}",
    "nice -n 5 {c}",
    "timeout 10 {c}",
    "nohup {c}",
    "command {c}",
    "stdbuf -oL {c}",
    "echo x | xargs {c}",
    "eval {q}",
    "sh -c {q}",
    "bash -lc {q}",
    "bash -c {dq}",
]
EXTERNAL = ["env {c}", "nice -n 5 {c}", "timeout 10 {c}", "nohup {c}", "stdbuf -oL {c}", "echo x | xargs {c}"]
COMPOUND = [
    "for i in 1; do {c}; done",
    "if true; then {c}; fi",
    "if false; then :; else {c}; fi",
    "while true; do {c}; break; done",
    "{{ {c}; }}",
    "( {c} )",
    "! {{ {c}; }}",
    "true | {{ {c}; }}",
    "true && {c}",
    "false || {c}",
    "echo $( {c} )",
    "echo `{c}`",
    "x=$( {c} )",
    "case a in a) {c};; esac",
    "f() {{ {c}; }}; f",
]
NOISE = ["", "echo x#; ", "ls\n", "echo '#'; ", "# hi\n", ": a#b\n", 'echo "#" && ', "true;\n\n"]


def double_quoted(command: str) -> str:
    escaped = "".join("\\" + ch if ch in '"$`\\' else ch for ch in command)
    return f'"{escaped}"'


@st.composite
def wrapped(draw: st.DrawFn) -> tuple[list[str], str]:
    core, command = draw(core_command())
    simple, builtin = True, False
    for _ in range(draw(st.integers(0, 3))):
        wrappers = [t for t in SIMPLE_WRAPPERS if not (builtin and t in EXTERNAL)] if simple else []
        templates = wrappers + COMPOUND + ["sh -c {q}", "bash -lc {q}", "eval {q}"]
        if "`" in command:  # backticks do not nest
            templates.remove("echo `{c}`")
        template = draw(st.sampled_from(templates))
        command = template.format(c=command, q=shlex.quote(command), dq=double_quoted(command))
        simple = template in SIMPLE_WRAPPERS
        builtin = template in ("command {c}", "eval {q}")  # a program cannot run a builtin
    comment = draw(st.sampled_from(["", " #x", " # git status", "\n# done"]))
    return core, draw(st.sampled_from(NOISE)) + command + comment


class RejectingUser:
    def __init__(self) -> None:
        self.asked = 0

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked += 1
        return AskerAnswer("reject_once")


HARMLESS = (
    "echo",
    "ls",
    "true",
    "false",
    ":",
    "env",
    "nice",
    "timeout",
    "nohup",
    "command",
    "stdbuf",
    "xargs",
    "sh",
    "bash",
    "x",
    "f",
)


async def _decide_all(command: str) -> list[tuple[bool, int, str]]:
    out = []
    with tempfile.TemporaryDirectory() as base:
        store = await HistoryStore.open(Path(base) / "h.sqlite3")
        try:
            gate = ApprovalGate(store.rules, deny_commands=("touch",))
            for prefix in HARMLESS:
                await gate.add_rule("execute", prefix, "allow")
            for mode in ("full-auto", "auto-edit", "ask"):
                user = RejectingUser()
                request = ApprovalRequest(
                    "s", "c", "run_command", "execute", "t", {"command": command}, mode, command=command, sandboxed=True
                )
                verdict = await gate.decide(request, user)
                out.append((verdict.allowed, user.asked, verdict.reason))
        finally:
            await store.close()
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=wrapped())
def test_a_denied_command_in_any_wrapping_is_never_allowed_without_asking(case: tuple[list[str], str]) -> None:
    core, command = case
    for allowed, asked, reason in anyio.run(_decide_all, command):
        assert not allowed, (command, reason)
        assert asked or reason.startswith("refused by"), (command, reason)
    if core == STAND_IN:
        _check_the_shell_runs_it(command)


def _check_the_shell_runs_it(command: str) -> None:
    with tempfile.TemporaryDirectory() as cwd:
        subprocess.run(["/bin/sh", "-c", command], cwd=cwd, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        assert (Path(cwd) / "pwned").exists(), f"the generator's command does not run the stand-in: {command!r}"
