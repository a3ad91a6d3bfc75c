"""The class code cache (`tether.class_code_cache`) seen from `tether run`: the first start
writes it privately, later starts use it and give the same turn, and a cache that another
user could have written, or that is not a cache, is never used (the start compiles as usual).
"""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest
from cache_starts import LOOSENED, command_script, run_turn, said
from cache_starts import loosen as loosen_cache

pytestmark = pytest.mark.usefixtures("home_start_cache")  # these tests are about the home's own


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "reply.json"
    path.write_text(json.dumps({"replies": [{"text": "cached or not, the same answer"}]}))
    return path


def _cache_file(home: Path) -> Path:
    files = list((home / "cache").glob("class-code-*.marshal"))
    assert len(files) == 1, files
    return files[0]


def _poison(cache: Path) -> None:
    """Every cached code object replaced by code that fails the start, loudly."""
    entries = marshal.loads(cache.read_bytes())
    bad = compile("raise RuntimeError('POISONED class code')", "<poison>", "exec")
    cache.write_bytes(marshal.dumps({key: bad for key in entries}))


def test_the_first_start_writes_a_private_cache_that_later_starts_use(
    daemon_env, workspace: Path, tether_home: Path, script: Path
):
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    cache = _cache_file(tether_home)
    assert cache.stat().st_mode & 0o777 == 0o600 and cache.parent.stat().st_mode & 0o777 == 0o700
    written = cache.stat()
    entries = marshal.loads(cache.read_bytes())
    assert len(entries) > 300  # the protocol's and the turn's classes, not a handful
    # a second start finds every class's code there: it has nothing to add, so writes nothing
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    assert (cache.stat().st_ino, cache.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    # and it does run the cached code (the control for the tests below)
    _poison(cache)
    done = run_turn(daemon_env, workspace, script)
    assert done.returncode != 0 and "POISONED class code" in done.stderr


@pytest.mark.parametrize("loosen", LOOSENED)
def test_a_cache_another_user_could_have_written_is_not_used(
    daemon_env, workspace: Path, tether_home: Path, script: Path, loosen: str
):
    said(run_turn(daemon_env, workspace, script))
    cache = _cache_file(tether_home)
    _poison(cache)
    loosen_cache(cache, loosen)
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"


def test_a_file_that_is_not_a_cache_is_replaced_by_one(daemon_env, workspace: Path, tether_home: Path, script: Path):
    said(run_turn(daemon_env, workspace, script))
    cache = _cache_file(tether_home)
    cache.write_bytes(b"\x00not marshal data")
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    assert len(marshal.loads(cache.read_bytes())) > 300


def test_no_cache_is_kept_where_the_workspaces_commands_could_write_it(daemon_env, workspace: Path, script: Path):
    home = workspace / ".tether-home"  # the data directory inside the workspace
    env = {**daemon_env, "TETHER_HOME": str(home)}
    assert said(run_turn(env, workspace, script)) == "cached or not, the same answer"
    assert (home / "workspaces").is_dir()  # the history is there: the same directory was used
    # the folder may be made (empty, so that the sandbox hides it), but no cache is kept there
    assert not list((home / "cache").glob("class-code-*"))


def test_a_command_cannot_plant_a_cache_even_where_the_workspace_holds_the_default_data_dir(
    daemon_env, workspace: Path, tmp_path: Path
):
    """The history is elsewhere (the config's `home`), so the cache is in the default data
    directory, which lies inside the workspace here (XDG_DATA_HOME in it, as with the home
    folder opened as a workspace). A command writes a poisoned cache there; it never
    reaches the disk, and the next start is unharmed (the folder is hidden from commands)."""
    history = tmp_path / "history"
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'home = "{history}"\nmode = "full-auto"\n')
    env = {k: v for k, v in daemon_env.items() if k != "TETHER_HOME"}
    env["XDG_DATA_HOME"] = str(workspace / ".local" / "share")
    cache = workspace / ".local" / "share" / "tether" / "cache"
    poison = compile("raise RuntimeError('POISONED class code')", "<poison>", "exec")
    planted = tmp_path / "planted.marshal"
    planted.write_bytes(marshal.dumps({("exec", "x", 0, "y"): poison}))
    plant = (
        f"mkdir -p {cache} && for f in {cache}/class-code-*.marshal {cache}/class-code-new.marshal; "
        f'do cat {planted} > "$f"; done; ls -la {cache}'
    )
    done = run_turn(env, workspace, command_script(tmp_path, plant), "plant")
    assert done.returncode == 0, done.stderr
    assert history.is_dir()
    on_disk = sorted(p.name for p in cache.glob("*"))
    assert "class-code-new.marshal" not in on_disk
    for name in on_disk:
        assert (cache / name).read_bytes() != planted.read_bytes(), name
    again = tmp_path / "again.json"
    again.write_text(json.dumps({"replies": [{"text": "still the same answer"}]}))
    assert said(run_turn(env, workspace, again)) == "still the same answer"
