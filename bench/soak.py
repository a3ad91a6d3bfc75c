"""Bounded over time (issue 31, item 3; figures go to bench/RESULTS.md, "Issue 31: soak").

    .venv/bin/python bench/soak.py [--turns 2000] [--sessions 50] [--hours 24] [--base /work/main]

One `tether serve` (scripted provider) serves 50 sessions over 5 workspaces (git
repositories), each session given the real MCP server-everything (`.cache`, over stdio)
in its `session/new`, in full-auto mode. 2,000 turns go round the sessions; the kinds
turn in a cycle: a `write_file` (two contents in turn: every write is a change with a
checkpoint), a `run_command` in the sandbox that appends to a file, a rewind of that
turn (`_tether/session/rewind`, files and conversation) followed by a turn, an MCP tool
call (`echo`, then `get-sum`), a `read_file` + `grep`, and a `/compact`. After each round (one turn per session), 5 sessions are closed and loaded again
(`session/close`, `session/load` with their MCP server): what a client does to a session
it reopens. Every round, a sample: the daemon's VmRSS, open fds and threads (/proc), and
its asyncio tasks and watches (`_tether/daemon/stats`, when the daemon reports them),
the history databases' size on disk against what they hold (the bytes of the stored
message bodies, the checkpoint blobs and the search index).

Then 24 simulated hours of idle watching. The daemon has no clock-driven work when idle
(no timer, no poll of its own: what runs is event-driven), so time itself does not need
simulating; what a day brings an idle daemon is file events. A "simulated minute" is one
burst of them in every workspace: a source file is written (an event the watcher reads
and filters out), and every 10th minute a `.gitignore` changes (the watcher reloads the
workspace's ignore rules); the bench then waits for the watcher's debounce (0.1 s) so
each minute is its own batch. 1,440 minutes = 24 hours of an editor saving a file a
minute and changing a `.gitignore` every ten. A sample every simulated hour.

`--base TREE` runs the same soak against another checkout first (its own `.venv`), for
a baseline in the same run. The plot (RSS and fds over turns, then the idle hours) is
written to bench/soak.png; the numbers are printed as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from png_plot import write_plot
from spawned import Spawned
from tether_side import init_params, tether_env

EVERYTHING = (
    ROOT
    / ".cache"
    / "server-everything-2026.8.31"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
WORKSPACES = 5
CHURN = 5  # sessions closed and loaded again after each round
# a rewind undoes the turn before it: a command's change (not a compaction, which would
# bring the whole conversation back into the model's view)
KINDS = ("write a", "run", "rewind", "mcp echo", "read", "write b", "mcp sum", "/compact")
SCRIPT = {
    "model": "scripted-soak",
    "replies": [
        {
            "when": {"user": "^write a", "step": 1},
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "notes/a.txt", "content": "first\n" * 40}}],
        },
        {
            "when": {"user": "^write b", "step": 1},
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "notes/a.txt", "content": "second\n" * 40}}],
        },
        {
            "when": {"user": "^run", "step": 1},
            "text": "Running.",
            "tool_calls": [{"name": "run_command", "arguments": {"command": "echo soak >> log.txt && wc -l log.txt"}}],
        },
        {
            "when": {"user": "^mcp echo", "step": 1},
            "text": "Asking the server.",
            "tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "soak"}}],
        },
        {
            "when": {"user": "^mcp sum", "step": 1},
            "text": "Adding.",
            "tool_calls": [{"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 3}}],
        },
        {
            "when": {"user": "^read", "step": 1},
            "text": "Reading.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "README.md"}},
                {"name": "grep", "arguments": {"pattern": "soak"}},
            ],
        },
        {
            "when": {"purpose": "compaction"},
            "text": "Summary: the soak's turns wrote notes, ran commands and asked MCP.",
        },
        {"when": {"step": 2}, "text": "Done: the tool answered as expected, nothing more to do."},
        {"text": "Nothing to do for that one; ask again."},
    ],
}


def proc_counts(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return {
        "rss_mb": round(rss / 1024, 2),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": len(os.listdir(f"/proc/{pid}/task")),
    }


def db_figures(paths: list[Path]) -> dict[str, float]:
    """The databases' size on disk (with their WAL) against the bytes they hold."""
    disk = held = 0
    messages = 0
    for path in paths:
        disk += sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            messages += db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            held += db.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM messages").fetchone()[0]
            held += db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM file_blobs").fetchone()[0]
    return {"db_mb": round(disk / 2**20, 2), "held_mb": round(held / 2**20, 2), "messages": messages}


class Soak:
    def __init__(self, scratch: Path, python: str, tree: Path) -> None:
        self.scratch, self.python, self.tree = scratch, python, tree
        self.home = scratch / "home"
        self.workspaces = [scratch / f"ws{n}" for n in range(WORKSPACES)]
        self.samples: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self.sessions: list[tuple[str, Path]] = []
        self.c: Spawned | None = None

    def servers(self) -> list[dict[str, Any]]:
        return [{"name": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"], "env": []}]

    def prepare(self) -> Path:
        for ws in self.workspaces:
            (ws / "notes").mkdir(parents=True)
            (ws / "README.md").write_text("soak workspace\n")
            (ws / ".gitignore").write_text("*.log\n")
            (ws / "src.py").write_text("x = 0\n")
            subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
            subprocess.run(["git", "-c", "user.name=s", "-c", "user.email=s@s", "add", "-A"], cwd=ws, check=True)
            subprocess.run(
                ["git", "-c", "user.name=s", "-c", "user.email=s@s", "commit", "-qm", "start"], cwd=ws, check=True
            )
        script = self.scratch / "soak.json"
        script.write_text(json.dumps(SCRIPT))
        return script

    @property
    def client(self) -> Spawned:
        assert self.c is not None
        return self.c

    async def start(self, script: Path) -> None:
        env = tether_env(dict(os.environ), self.home)
        env["XDG_CONFIG_HOME"] = str(self.scratch / "xdg")  # no user config: no servers but the sessions'
        env["PYTHONPATH"] = os.pathsep.join(str(self.tree / p) for p in ("daemon", "protocol"))
        argv = [self.python, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
        self.c = await Spawned.start(
            argv,
            env=env,
            cwd=self.workspaces[0],
            on_request=self.answer,
            stderr=open(self.scratch / "daemon.log", "wb"),  # noqa: SIM115 (the daemon's log, open while it runs)
        )
        await self.client.request("initialize", init_params(self.workspaces[0]))

    async def answer(self, method: str, params: Any) -> Any:
        self.failures.append(f"asked {method}")  # full-auto asks nothing; should it, allow and note it
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    async def open_sessions(self, count: int) -> None:
        for n in range(count):
            ws = self.workspaces[n % WORKSPACES]
            answer = await self.client.request("session/new", {"cwd": str(ws), "mcpServers": self.servers()})
            sid = answer["sessionId"]
            await self.client.request("session/set_mode", {"sessionId": sid, "modeId": "full-auto"})
            self.sessions.append((sid, ws))

    async def turn(self, n: int) -> None:
        sid, ws = self.sessions[n % len(self.sessions)]
        kind = KINDS[
            (n % len(self.sessions) + n // len(self.sessions)) % len(KINDS)
        ]  # each session: every kind in turn
        if kind == "rewind":
            last = self.last_turn(sid, ws)
            if last:
                answer = await self.client.request(
                    "_tether/session/rewind", {"sessionId": sid, "toTurn": last, "restore": "both", "force": True}
                )
                if not answer.get("done"):
                    self.failures.append(f"rewind of {sid} turn {last} not done: {answer}")
            kind = "read"
        text = kind if kind.startswith("/") else f"{kind} (turn {n})"
        answer = await self.client.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        if answer.get("stopReason") != "end_turn":
            self.failures.append(f"turn {n} ({kind}) ended {answer.get('stopReason')}")
        self.client.queued()  # the updates are not looked at: dropped as they come

    def last_turn(self, sid: str, ws: Path) -> int:
        from tether.store import database_path

        with sqlite3.connect(f"file:{database_path(ws, self.home)}?mode=ro", uri=True) as db:
            row = db.execute("SELECT MAX(seq) FROM turns WHERE session_id = ?", (sid,)).fetchone()
        return int(row[0] or 0)

    async def churn(self, round_no: int) -> None:
        for k in range(CHURN):
            sid, ws = self.sessions[(round_no * CHURN + k) % len(self.sessions)]
            await self.client.request("session/close", {"sessionId": sid})
            await self.client.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": self.servers()})
            self.client.queued()

    async def sample(self, phase: str, at: float) -> dict[str, Any]:
        from tether.store import database_path

        stats = await self.client.request("_tether/daemon/stats", {})
        row: dict[str, Any] = {"phase": phase, "at": at, **proc_counts(self.client.proc.pid)}
        row.update({k: stats[k] for k in ("tasks", "watchedWorkspaces", "openStores", "liveSessions") if k in stats})
        row.update(db_figures([database_path(ws, self.home) for ws in self.workspaces]))
        self.samples.append(row)
        return row

    async def idle(self, hours: int) -> None:
        for minute in range(hours * 60):
            for ws in self.workspaces:
                (ws / "src.py").write_text(f"x = {minute}\n")
                if minute % 10 == 0:
                    (ws / ".gitignore").write_text(f"*.log\n# minute {minute}\n")
            await asyncio.sleep(0.12)  # past the watcher's 0.1 s debounce: one batch a minute
            if minute % 60 == 59:
                await self.sample("idle", (minute + 1) / 60)


async def soak(python: str, tree: Path, turns: int, sessions: int, hours: int) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-soak-"))
    run = Soak(scratch, python, tree)
    await run.start(run.prepare())
    t0 = time.perf_counter()
    await run.open_sessions(sessions)
    await run.sample("turns", 0)
    for n in range(turns):
        await run.turn(n)
        if n % sessions == sessions - 1:
            await run.churn(n // sessions)
            row = await run.sample("turns", n + 1)
            print(json.dumps(row), file=sys.stderr, flush=True)
    turns_s = time.perf_counter() - t0
    await run.idle(hours)
    await run.client.close()
    return summary(run, turns_s)


def summary(run: Soak, turns_s: float) -> dict[str, Any]:
    turns = [s for s in run.samples if s["phase"] == "turns"]
    idle = [s for s in run.samples if s["phase"] == "idle"]
    after_100 = next(s for s in turns if s["at"] >= 100)
    last = turns[-1]

    def growth(key: str, since: dict[str, Any], until: dict[str, Any]) -> float | None:
        return round(until[key] - since[key], 2) if key in since and key in until else None

    out: dict[str, Any] = {
        "turns": last["at"],
        "turns_s": round(turns_s, 1),
        "failures": run.failures[:10],
        "failure_count": len(run.failures),
        "after_100": after_100,
        "after_turns": last,
        "after_idle": idle[-1] if idle else None,
    }
    for key in ("rss_mb", "fds", "threads", "tasks"):
        out[f"{key}_growth_after_100"] = growth(key, after_100, last)
        out[f"{key}_max_after_100"] = max((s[key] for s in turns if s["at"] >= 100 and key in s), default=None)
        if idle:
            out[f"{key}_growth_idle"] = growth(key, last, idle[-1])
    out["samples"] = run.samples
    return out


def plot(results: dict[str, dict[str, Any]], path: Path) -> None:
    colors = {"base": (150, 150, 150), "this": (200, 40, 40)}
    panels = []
    for key, title in (("rss_mb", "RSS MB"), ("fds", "OPEN FDS"), ("threads", "THREADS")):
        series = []
        for name, result in results.items():
            turns = result["turns"]
            points = [
                (s["at"] if s["phase"] == "turns" else turns + s["at"] / 24 * turns / 4, s[key])
                for s in result["samples"]
            ]
            series.append((f"{name} {key}", colors[name], points))
        panels.append((f"{title} OVER TURNS, THEN 24 SIMULATED IDLE HOURS (LAST QUARTER)", series))
    turns = next(iter(results.values()))["turns"]
    write_plot(path, panels, marks=[(100, "100"), (turns, f"{turns}: IDLE")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--base", type=Path, help="another checkout to soak first, with its own .venv")
    parser.add_argument("--plot", type=Path, default=ROOT / "bench" / "soak.png")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    trees = ([("base", args.base)] if args.base else []) + [("this", ROOT)]
    for name, tree in trees:
        python = str(tree / ".venv" / "bin" / "python")
        results[name] = asyncio.run(soak(python, tree, args.turns, args.sessions, args.hours))
    plot(results, args.plot)
    print(json.dumps({name: {k: v for k, v in r.items() if k != "samples"} for name, r in results.items()}, indent=2))
    (args.plot.with_suffix(".json")).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
