"""The module cache (`tether.module_cache`) seen from `tether run` and from a program that
installs it: the first start writes it privately, later starts import from it and give the
same turn, an edited source is imported as edited, and a cache another user could have
written, that is not a cache, or that was made for another `sys.path` is never used.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cache_starts import LOOSENED, command_script, run_turn, said
from cache_starts import loosen as loosen_cache

from tether.module_cache import _MAGIC

POISON = compile("raise RuntimeError('POISONED module code')", "<poison>", "exec")


pytestmark = pytest.mark.usefixtures("home_start_cache")  # these tests are about the home's own


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "reply.json"
    path.write_text(json.dumps({"replies": [{"text": "cached or not, the same answer"}]}))
    return path


def _cache_file(directory: Path) -> Path:
    files = list(directory.glob("modules-*.bin"))
    assert len(files) == 1, files
    return files[0]


def _index(cache: Path) -> dict[str, tuple]:
    data = cache.read_bytes()
    assert data.startswith(_MAGIC)
    size = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 4], "little")
    return marshal.loads(data[len(_MAGIC) + 4 : len(_MAGIC) + 4 + size])


def _poison(cache: Path) -> None:
    """Every module's code replaced by code that fails the import, loudly (the file's
    format otherwise intact)."""
    blob = marshal.dumps(POISON)
    index = {name: (*entry[:5], i * len(blob), len(blob)) for i, (name, entry) in enumerate(_index(cache).items())}
    head = marshal.dumps(index)
    cache.write_bytes(_MAGIC + len(head).to_bytes(4, "little") + head + blob * len(index))


def test_the_first_start_writes_a_private_cache_that_later_starts_import_from(
    daemon_env, workspace: Path, tether_home: Path, script: Path
):
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    cache = _cache_file(tether_home / "cache")
    assert cache.stat().st_mode & 0o777 == 0o600 and cache.parent.stat().st_mode & 0o777 == 0o700
    index = _index(cache)
    assert len(index) > 250 and "tether.agent.loop" in index and "asyncio.base_events" in index
    written = cache.stat()
    # a second start imports what it needs from it: nothing to add, so nothing is written
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    assert (cache.stat().st_ino, cache.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    # and it does run the cached code (the control for the tests below)
    _poison(cache)
    done = run_turn(daemon_env, workspace, script)
    assert done.returncode != 0 and "POISONED module code" in done.stderr


@pytest.mark.parametrize("loosen", LOOSENED)
def test_a_cache_another_user_could_have_written_is_not_used(
    daemon_env, workspace: Path, tether_home: Path, script: Path, loosen: str
):
    said(run_turn(daemon_env, workspace, script))
    cache = _cache_file(tether_home / "cache")
    _poison(cache)
    loosen_cache(cache, loosen)
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"


def test_a_file_that_is_not_a_cache_is_replaced_by_one(daemon_env, workspace: Path, tether_home: Path, script: Path):
    said(run_turn(daemon_env, workspace, script))
    cache = _cache_file(tether_home / "cache")
    cache.write_bytes(_MAGIC + b"\xff\xff\x00\x00not marshal data")
    assert said(run_turn(daemon_env, workspace, script)) == "cached or not, the same answer"
    assert len(_index(_cache_file(tether_home / "cache"))) > 250


def test_no_module_cache_is_kept_where_the_workspaces_commands_could_write_it(
    daemon_env, workspace: Path, script: Path
):
    home = workspace / ".tether-home"
    env = {**daemon_env, "TETHER_HOME": str(home)}
    assert said(run_turn(env, workspace, script)) == "cached or not, the same answer"
    assert (home / "workspaces").is_dir()
    assert not list((home / "cache").glob("modules-*"))


@pytest.mark.parametrize("where", ["in the home", "named by TETHER_CACHE"])
def test_a_command_cannot_plant_a_module_cache(
    daemon_env, workspace: Path, tether_home: Path, tmp_path: Path, where: str
):
    """A command of a turn in full-auto writes a poisoned cache where the next start would
    read it: the folder is hidden from commands, so it never reaches the disk."""
    if where == "named by TETHER_CACHE":
        daemon_env = {**daemon_env, "TETHER_CACHE": str(tmp_path / "shared-cache")}
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"replies": [{"text": "first"}]}))
    said(run_turn(daemon_env, workspace, first))
    cache = _cache_file(tether_home / "cache" if where == "in the home" else tmp_path / "shared-cache")
    assert where == "in the home" or not list((tether_home / "cache").glob("modules-*"))
    planted = tmp_path / "planted.bin"
    planted.write_bytes(cache.read_bytes())
    _poison(planted)
    plant = f'for f in {cache.parent}/modules-*.bin {cache.parent}/modules-new.bin; do cat {planted} > "$f"; done'
    done = run_turn(daemon_env, workspace, command_script(tmp_path, plant), "plant", "--mode", "full-auto")
    assert done.returncode == 0, done.stderr
    assert not (cache.parent / "modules-new.bin").exists()
    assert cache.read_bytes() != planted.read_bytes()
    again = tmp_path / "again.json"
    again.write_text(json.dumps({"replies": [{"text": "still the same answer"}]}))
    assert said(run_turn(daemon_env, workspace, again)) == "still the same answer"


PROGRAM = """
import importlib.resources, inspect, sys
from pathlib import Path
from tether import module_cache
module_cache.install(Path(sys.argv[1]))
import shop.prices
print(shop.prices.PRICE, type(shop.prices.__spec__.loader).__name__, shop.prices.__file__)
print(importlib.resources.files("shop").joinpath("menu.txt").read_text().strip())
print(inspect.getsource(shop.prices).count("PRICE"))
module_cache.save()
"""


def _start(tmp_path: Path, *extra_path: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "lib"), *extra_path])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the cache is made from .pyc files, as an install has them
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path / "cache")], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_an_edited_module_is_imported_as_edited_and_a_cached_one_keeps_its_file_and_resources(tmp_path: Path):
    package = tmp_path / "lib" / "shop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "menu.txt").write_text("soup\n")
    prices = package / "prices.py"
    prices.write_text("PRICE = 1\n")
    assert _start(tmp_path) == ["1 SourceFileLoader " + str(prices), "soup", "1"]
    assert _start(tmp_path) == ["1 _Loader " + str(prices), "soup", "1"]  # from the cache
    # the same size, a second later (as an editor's save): the new code, then cached too
    time.sleep(0.01)
    prices.write_text("PRICE = 2\n")
    os.utime(prices, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    assert _start(tmp_path)[0] == "2 SourceFileLoader " + str(prices)
    assert _start(tmp_path)[0] == "2 _Loader " + str(prices)
    # another `sys.path` does not read this path's file
    assert _start(tmp_path, str(tmp_path / "elsewhere"))[0] == "2 SourceFileLoader " + str(prices)
    # a removed source is not imported from the cache
    prices.unlink()
    (package / "prices.py").write_text("PRICE = 3  # moved back\n")
    assert _start(tmp_path)[0].startswith("3 SourceFileLoader")


SAVES_TWICE = """
import os, sys
from pathlib import Path
from tether import module_cache
module_cache.install(Path(sys.argv[1]))
import shop.prices
module_cache.save()
import shop.menu
module_cache.save()
def cache_fds():
    fds = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}")]
    return sum(fd.startswith(sys.argv[1]) for fd in fds)
open_after_saves = cache_fds()
module_cache.close()
print(open_after_saves, cache_fds(), shop.prices.PRICE, shop.menu.SOUP)
"""


def test_a_start_that_saves_again_keeps_one_cache_file_open_and_none_once_closed(tmp_path: Path):
    """A daemon saves after start-up and again after its warm-up: the file each save
    replaces is closed, and after the warm-up (`close`) none is held for the daemon's life
    (a start from the cache, too)."""
    package = tmp_path / "lib" / "shop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "prices.py").write_text("PRICE = 1\n")
    (package / "menu.py").write_text("SOUP = 'leek'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _start_again in range(2):
        done = subprocess.run(
            [sys.executable, "-c", SAVES_TWICE, str(tmp_path / "cache")],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", "0", "1", "leek"]


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_command_cannot_plant_a_module_cache_where_the_workspace_holds_the_default_data_dir(
    daemon_env, workspace: Path, tmp_path: Path, backend: str
):
    """The default data directory lies inside this workspace (XDG_DATA_HOME in it, as when
    the home folder is opened as a workspace; the history is elsewhere): a start from another
    folder would read a cache there, so under either sandbox a command must not write one."""
    history = tmp_path / "history"
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'home = "{history}"\nmode = "full-auto"\n')
    env = {k: v for k, v in daemon_env.items() if k != "TETHER_HOME"}
    env.update(XDG_DATA_HOME=str(workspace / ".local" / "share"), TETHER_SANDBOX=backend)
    cache = workspace / ".local" / "share" / "tether" / "cache"
    plant = f'mkdir -p {cache}; for f in {cache}/modules-*.bin {cache}/modules-new.bin; do echo planted > "$f"; done'
    done = run_turn(env, workspace, command_script(tmp_path, plant), "plant")
    assert done.returncode == 0, done.stderr
    assert "is hidden from commands" in done.stdout
    assert history.is_dir() and cache.is_dir()  # made by the daemon before the command, so hidden
    assert not [p for p in cache.glob("modules-*") if p.read_bytes().startswith(b"planted")]
