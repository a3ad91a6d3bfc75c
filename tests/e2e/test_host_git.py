"""Tether's own git over a planted `.git` (issue 30 item 1), through a real `tether serve`
and `tether run`, real git, under bubblewrap and with the sandbox off: a command moves a
crafted git directory into place (a partial clone with a promisor remote and
`core.sshCommand`, fsmonitor, hooks, filters, textconv, an external diff, an include, an
alternate, credential and gpg programs, `ext::` and remote-helper promisor remotes), the next command changes tracked files, and the
change scan and `/review` read git. Nothing the config names may run: no marker appears.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


def _git(where: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where, check=True, capture_output=True
    )


def _planted_config(marks: Path) -> str:
    def run(name: str) -> str:
        return f"touch {marks}/{name}"

    return f"""[core]
\trepositoryformatversion = 1
\tfsmonitor = {run("fsmonitor")}
\tsshCommand = {run("ssh")}
\taskPass = {run("askpass")}
\talternateRefsCommand = {run("altrefs")}
\thooksPath = hooks
[include]
\tpath = extra.cfg
[diff]
\texternal = {run("extdiff")}
[diff "tc"]
\ttextconv = {run("textconv")}
\tcommand = {run("diffcmd")}
[filter "fx"]
\tclean = {run("clean")}
\tsmudge = {run("smudge")}
[filter "Proc.y"]
\tprocess = {run("process")}
\trequired = true
[remote "origin"]
\turl = ssh://example.invalid/repo
\tpromisor = true
\tpartialclonefilter = blob:none
\tuploadpack = {run("uploadpack")}
[remote "ext"]
\turl = ext::sh -c touch% {marks}/ext
\tpromisor = true
[remote "helper"]
\tvcs = ext
\turl = sh -c touch% {marks}/vcs
\tpromisor = true
[extensions]
\tpartialClone = origin
[protocol "ssh"]
\tallow = always
[protocol "ext"]
\tallow = always
[credential]
\thelper = !{run("credential")}
[gpg]
\tprogram = {run("gpg")}
[uploadpack]
\tpackObjectsHook = {run("packhook")}
"""


def _crafted_git_dir(workspace: Path, marks: Path, name: str) -> Path:
    """`workspace/name`: a git directory tracking a.txt and b.txt (clean, not racily), its
    config planted; the path of a.txt's blob (removed, git would fetch it lazily)."""
    for rel in ("a.txt", "b.txt"):
        (workspace / rel).write_text(f"{rel} as committed\n")
    (workspace / ".gitattributes").write_text("a.txt filter=fx diff=tc\nb.txt filter=Proc.y diff=tc\n")
    _git(workspace, "init", "-q")
    _git(workspace, "add", "a.txt", "b.txt", ".gitattributes")
    _git(workspace, "commit", "-qm", "start")
    old = os.stat(workspace / ".git" / "index").st_mtime - 10
    for rel in ("a.txt", "b.txt", ".gitattributes"):
        os.utime(workspace / rel, (old, old))
    _git(workspace, "update-index", "--refresh")
    git = workspace / ".git"
    blob = subprocess.run(
        ["git", "rev-parse", "HEAD:a.txt"], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()
    (git / "objects" / "info" / "alternates").write_text(f"{marks.parent / 'elsewhere' / 'objects'}\n")
    (git / "extra.cfg").write_text(f"[core]\n\tfsmonitor = touch {marks}/included\n")
    (git / "hooks").mkdir(exist_ok=True)
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "fsmonitor-watchman"):
        (git / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marks}/hook\n")
        (git / "hooks" / hook).chmod(0o755)
    (git / "config").write_text(_planted_config(marks))
    if name != ".git":
        git.rename(workspace / name)
    return workspace / name / "objects" / blob[:2] / blob[2:]


def _changes_script(tmp_path: Path) -> Path:
    script = tmp_path / "plant.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {
                                "id": "plant",
                                "name": "run_command",
                                "arguments": {"command": "mv plant .git && echo planted"},
                            }
                        ],
                    },
                    {
                        "when": {"step": 2},
                        "tool_calls": [
                            {
                                "id": "change",
                                "name": "run_command",
                                "arguments": {"command": "echo changed >> a.txt && echo changed >> b.txt && echo ok"},
                            }
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    return script


@pytest.mark.parametrize("sandbox", ["bwrap", "off"])
async def test_the_change_scan_runs_nothing_a_planted_git_config_names(
    spawn_daemon, workspace: Path, tmp_path: Path, sandbox: str
):
    marks = tmp_path / "marks"
    marks.mkdir()
    _crafted_git_dir(workspace, marks, "plant").unlink()
    daemon = await spawn_daemon(
        "--mode", "full-auto", script=_changes_script(tmp_path), env={"TETHER_SANDBOX": sandbox}
    )

    async def on_request(method: str, params: dict):  # without a sandbox every command asks
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("plant it, then change the files")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert "planted" in json.dumps(updates) and (workspace / ".git" / "config").exists()
    assert sorted(os.listdir(marks)) == [], f"ran on the host under sandbox={sandbox}"
    # b.txt's content before came from git's objects (read without git): rewound exactly;
    # a.txt's object is missing (nothing fetched it): reported, not rewound
    changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
    assert {f["path"] for f in changes["files"]} >= {"a.txt", "b.txt"}, changes
    assert "a.txt (its content before the command was not known)" in json.dumps(updates)
    answer = await daemon.client.request(
        "_tether/session/rewind", {"sessionId": session.id, "toTurn": 1, "restore": "files", "force": True}
    )
    assert (workspace / "b.txt").read_text() == "b.txt as committed\n", answer
    assert (workspace / "a.txt").read_text() == "a.txt as committed\nchanged\n"
    assert sorted(os.listdir(marks)) == []


_REVIEW_SCRIPT = {
    "model": "scripted-review",
    "replies": [
        {"when": {"user": "(?s)Review the uncommitted.*<diff>.*\\+changed"}, "text": "REVIEWED the change."},
        {"text": "NOT A REVIEW"},
    ],
}


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock", "off"])
def test_review_of_a_project_that_came_with_a_planted_git_runs_nothing(
    daemon_env, workspace: Path, tmp_path: Path, sandbox: str
):
    marks = tmp_path / "marks"
    marks.mkdir()
    blob = _crafted_git_dir(workspace, marks, ".git")
    for rel in ("a.txt", "b.txt"):
        with open(workspace / rel, "a") as handle:
            handle.write("changed\n")
    script = tmp_path / "review.json"
    script.write_text(json.dumps(_REVIEW_SCRIPT))
    command = [sys.executable, "-m", "tether", "run", "/review", "--provider", "scripted", "--script", str(script)]
    env = {**daemon_env, "TETHER_SANDBOX": sandbox}
    done = subprocess.run(command, env=env, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(marks)) == [], f"ran on the host under sandbox={sandbox}"
    assert "REVIEWED the change." in done.stdout and "NOT A REVIEW" not in done.stdout, done.stdout
    # a "partial clone" missing a.txt's blob: git would fetch it with core.sshCommand
    blob.unlink()
    done = subprocess.run(command, env=env, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert sorted(os.listdir(marks)) == [], f"ran on the host under sandbox={sandbox}"
    assert "REVIEWED the change." not in done.stdout, done.stdout
