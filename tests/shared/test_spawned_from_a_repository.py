"""The shared daemon is started by the first window, in the window's cwd: the repository
the editor opened. `python -m` puts the cwd first on sys.path, so a repository shipping
`tomllib.py` or `aiosqlite.py` had its code imported into the shared daemon, on the host,
with the daemon's environment (the API keys), before any sandbox. The daemon is started
with `-P`: the window (an installed `tether`, started in the repository) gets its daemon,
and no planted module ran."""

from __future__ import annotations

import sys
from pathlib import Path

from tether_client import TetherClient


async def test_a_repositorys_modules_never_load_into_the_shared_daemon(
    windows, shared_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "imported-from-the-repository"
    for module in ("tomllib", "aiosqlite", "anyio", "json"):
        (workspace / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write({module!r})\n")
    # the window as an installed `tether` script runs: the script's folder, not the cwd, on sys.path
    command = [
        sys.executable,
        "-P",
        "-m",
        "tether",
        "acp",
        "--shared",
        "--provider",
        "scripted",
        "--script",
        str(Path(__file__).parents[2] / "examples" / "basic-turn.json"),
    ]
    with open(tmp_path / "window.stderr", "wb") as err:
        client = await TetherClient.spawn(command=command, env=shared_env, cwd=workspace, stderr=err, framing="ndjson")
    windows.clients.append(client)
    answer = await client.initialize()
    assert answer["agentInfo"]["name"] == "tether", answer
    session = await client.new_session(workspace)
    assert session.id
    assert windows.daemon_pids(), "the shared daemon did not start"
    assert not marker.exists(), f"the shared daemon imported the repository's {marker.read_text()}"
