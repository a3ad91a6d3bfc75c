"""Where the history database lives: per user, keyed by the workspace's real path."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tether.store import database_path, workspace_key
from tether.store.paths import LABEL_NAME


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "my proj"
    folder.mkdir(parents=True)
    return folder


def test_tether_home_env_is_respected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "tether-home"
    monkeypatch.setenv("TETHER_HOME", str(home))

    db = database_path(workspace)

    assert db.name == "history.sqlite3"
    assert db.parent.parent == home / "workspaces"
    assert re.fullmatch(r"my_proj-[0-9a-f]{16}", db.parent.name)
    assert db.parent.is_dir()
    assert not db.exists()  # finding the path must not create the database


def test_home_argument_beats_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "from-env"))
    db = database_path(workspace, home=tmp_path / "explicit")
    assert db.is_relative_to(tmp_path / "explicit")
    assert not (tmp_path / "from-env").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlinked_and_unnormalised_spellings_share_one_database(tmp_path: Path, workspace: Path) -> None:
    link = tmp_path / "link-to-proj"
    link.symlink_to(workspace, target_is_directory=True)
    home = tmp_path / "home"

    db = database_path(workspace, home)

    assert database_path(link, home) == db
    assert database_path(workspace / "sub" / "..", home) == db
    # the folder is named after the real directory, not the link
    assert db.parent.name.startswith("my_proj-")


def test_distinct_workspaces_with_one_basename_get_distinct_databases(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "app", tmp_path / "b" / "app"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    assert database_path(first, tmp_path / "home") != database_path(second, tmp_path / "home")


def test_filesystem_root_gets_a_readable_key() -> None:
    assert re.fullmatch(r"root-[0-9a-f]{16}", workspace_key(Path(os.path.abspath(os.sep))))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME is the Linux default")
def test_default_location_is_the_user_data_dir_not_the_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path
) -> None:
    monkeypatch.delenv("TETHER_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))

    db = database_path(workspace)

    assert db.is_relative_to(tmp_path / "xdg" / "tether" / "workspaces")
    assert not db.is_relative_to(workspace)
    assert list(workspace.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_created_folders_are_private(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    db = database_path(workspace, home)
    for folder in (home, home / "workspaces", db.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_label_names_the_real_workspace_and_is_written_only_once(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    label = database_path(workspace, home).parent / LABEL_NAME

    recorded = json.loads(label.read_text(encoding="utf-8"))
    assert recorded["workspace"] == os.path.realpath(workspace)

    label.write_text('{"workspace": "edited by a human"}', encoding="utf-8")
    database_path(workspace, home)
    assert json.loads(label.read_text(encoding="utf-8")) == {"workspace": "edited by a human"}
