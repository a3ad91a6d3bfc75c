"""Git blobs read without git (tools/git_objects.py), checked against `git cat-file` on
real repositories: loose objects, packs with offset and reference deltas, a worktree's
`commondir`; a damaged or missing object is "not known", never other bytes."""

from __future__ import annotations

import os
import subprocess
import zlib
from typing import TYPE_CHECKING

import pytest

from tether.tools.git_objects import find_git_dir, read_blobs

if TYPE_CHECKING:
    from pathlib import Path


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where, check=True, capture_output=True
    )
    return done.stdout.decode()


def _history(root: Path, versions: int = 30) -> list[str]:
    """A file rewritten `versions` times (similar texts: the pack stores deltas), and its blob ids."""
    _git(root, "init", "-q")
    text = "".join(f"line {i} of a file long enough to be worth a delta\n" for i in range(400))
    for version in range(versions):
        text = text.replace(f"line {version * 7} ", f"line {version * 7} changed in {version} ")
        (root / "f.txt").write_text(text)
        (root / "bin.dat").write_bytes(bytes(range(256)) * (version + 1))
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", f"v{version}")
    listed = _git(root, "rev-list", "--objects", "--all").split()
    return [
        line.split()[0]
        for line in subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=root,
            input="\n".join(listed).encode(),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .splitlines()
        if line.split()[1] == "blob"
    ]


def _cat(root: Path, blob: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", blob], cwd=root, capture_output=True, check=True).stdout


@pytest.mark.parametrize("offsets", ["true", "false"])  # offset deltas, or reference deltas (base by id)
def test_packed_blobs_with_deltas_are_read_as_git_reads_them(tmp_path: Path, offsets: str) -> None:
    blobs = _history(tmp_path)
    _git(tmp_path, "-c", f"repack.useDeltaBaseOffset={offsets}", "repack", "-adf", "--depth=50", "--window=50")
    _git(tmp_path, "prune-packed")
    assert not any((tmp_path / ".git" / "objects").glob("??/*")), "everything should be packed"
    found = read_blobs(str(tmp_path / ".git"), blobs)
    assert found == {blob: _cat(tmp_path, blob) for blob in blobs}
    # the pack holds deltas: most versions were not stored whole
    verify = _git(tmp_path, "verify-pack", "-v", *map(str, (tmp_path / ".git/objects/pack").glob("*.idx")))
    assert sum(1 for line in verify.splitlines() if len(line.split()) == 7) > 10, verify


def test_loose_blobs_and_a_worktrees_common_dir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    blobs = _history(main, versions=3)
    _git(main, "worktree", "add", "-q", str(tmp_path / "tree"))
    found_dir = find_git_dir(str(tmp_path / "tree"))
    assert found_dir is not None and found_dir.common_dir == str(main / ".git")
    assert read_blobs(found_dir.common_dir, blobs) == {blob: _cat(main, blob) for blob in blobs}


def test_a_damaged_or_missing_object_is_not_known(tmp_path: Path) -> None:
    blobs = _history(tmp_path, versions=2)
    first, second = blobs[0], blobs[1]
    loose = tmp_path / ".git" / "objects" / first[:2] / first[2:]
    other = zlib.decompress((tmp_path / ".git" / "objects" / second[:2] / second[2:]).read_bytes())
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(other))  # a valid object, but not the one its name says
    found = read_blobs(str(tmp_path / ".git"), [first, second, "0" * 40, "not an id"])
    assert found == {second: _cat(tmp_path, second)}


def test_an_object_that_inflates_past_the_limit_is_not_read(tmp_path: Path) -> None:
    """A command can plant objects: 100 MB of zeros compress to ~100 KB."""
    _history(tmp_path, versions=1)
    size = 100 * 1024 * 1024
    bomb = zlib.compressobj()
    data = bomb.compress(b"blob %d\0" % size) + bomb.compress(bytes(size)) + bomb.flush()
    blob = "ab" + "c" * 38
    (tmp_path / ".git" / "objects" / "ab").mkdir(exist_ok=True)
    (tmp_path / ".git" / "objects" / "ab" / blob[2:]).write_bytes(data)
    assert read_blobs(str(tmp_path / ".git"), [blob]) == {}


def test_a_fifo_in_place_of_a_git_file_does_not_block_the_scan(tmp_path: Path) -> None:
    """A command can `mkfifo .git` (or an index): opening it would wait for a writer forever."""
    from tether.tools.tree_scan import GitIndex

    plain = tmp_path / "plain"
    plain.mkdir()
    os.mkfifo(plain / ".git")
    assert find_git_dir(str(plain)) is None and GitIndex.read(str(plain)).entries == {}
    repo = tmp_path / "repo"
    repo.mkdir()
    _history(repo, versions=1)
    (repo / ".git" / "index").unlink()
    os.mkfifo(repo / ".git" / "index")
    assert GitIndex.read(str(repo)).entries == {}
