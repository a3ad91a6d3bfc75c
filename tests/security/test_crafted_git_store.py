"""A hostile repository's `.git` against the change scan's Python git reader (issue 30's
attacker review): through a real `tether serve` under bubblewrap, a command changes a
tracked file, and the scan reads that file's earlier content from an object store or index
the repository crafted. The daemon must answer the turn, report the content as not known
(or read it some other way), and stay within memory: a long delta chain of large versions
(what any large file's history looks like in a pack) once held every version in memory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from typing import TYPE_CHECKING

import crafted_git
from measured_turn import measured_turn

if TYPE_CHECKING:
    from collections.abc import Callable

_MB = 1024 * 1024
_GROWTH_LIMIT = 160 * _MB  # what the scan may add to the daemon's peak memory


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=where,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _tracked(workspace: Path) -> str:
    """A repository tracking a.txt (clean in the index, not racily); a.txt's blob id."""
    (workspace / "a.txt").write_text("a.txt as committed\n")
    _git(workspace, "init", "-q")
    _git(workspace, "add", "a.txt")
    _git(workspace, "commit", "-qm", "start")
    old = os.stat(workspace / ".git" / "index").st_mtime - 10
    os.utime(workspace / "a.txt", (old, old))
    _git(workspace, "update-index", "--refresh")
    return _git(workspace, "rev-parse", "HEAD:a.txt")


def _chain(git: Path, blob: str) -> None:
    (git / "objects" / blob[:2] / blob[2:]).unlink()  # found only in the crafted pack
    crafted_git.write_pack(git, bytes.fromhex(blob), crafted_git.long_chain(8 * _MB, 40))


def _onto_itself(git: Path, blob: str) -> None:
    (git / "objects" / blob[:2] / blob[2:]).unlink()
    crafted_git.write_pack(git, bytes.fromhex(blob), crafted_git.onto_itself())


def _sparse_object(git: Path, blob: str) -> None:
    with open(git / "objects" / blob[:2] / blob[2:], "r+b") as handle:
        handle.truncate(1024 * _MB)  # its zlib stream, then 1 GB of zeros that takes no disk


def _sparse_index(git: Path, blob: str) -> None:
    with open(git / "index", "r+b") as handle:
        handle.truncate(1024 * _MB)


_ATTACKS: dict[str, Callable[[Path, str], None]] = {
    "a long chain of large versions": _chain,
    "an offset delta onto itself": _onto_itself,
    "a sparse 1 GB loose object": _sparse_object,
    "a sparse 1 GB index": _sparse_index,
}


@pytest.mark.parametrize("attack", list(_ATTACKS))
async def test_a_crafted_git_store_neither_breaks_nor_bloats_the_change_scan(
    spawn_daemon, workspace: Path, tmp_path: Path, attack: str
) -> None:
    blob = _tracked(workspace)
    _ATTACKS[attack](workspace / ".git", blob)
    daemon, session, updates, grown = await measured_turn(
        spawn_daemon, workspace, tmp_path, "run_command", {"command": "echo changed >> a.txt && echo CHANGED-OK"}
    )
    assert "CHANGED-OK" in updates, updates[-2000:]
    assert grown < _GROWTH_LIMIT, f"the change scan grew the daemon's peak memory by {grown // _MB} MB"
    changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
    assert [f["path"] for f in changes["files"]] == ["a.txt"], changes
    if "sparse" in attack:  # read some other way (a copy before the command; the object's zlib stream)
        await daemon.client.request(
            "_tether/session/rewind", {"sessionId": session.id, "toTurn": 1, "restore": "files", "force": True}
        )
        assert (workspace / "a.txt").read_text() == "a.txt as committed\n"
    else:  # the crafted object gives no bytes: reported as not rewindable, nothing made up
        assert "a.txt (its content before the command was not known)" in updates, updates[-2000:]
