"""Issue 30 items 6 and 8 through a real `tether serve` under bubblewrap: a workspace whose
`.git` is a link to a workspace folder, or a `gitdir:` file naming one, keeps that real git
directory's hooks and config read-only to the model's commands, and so is `.tether/` (the
workspace config and trusted hooks). The model writes a hook, a config line and a hook
table; nothing reaches the disk, and each command's failure says the folder is read-only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

_ATTACK = (
    "echo 'touch PWNED' > real-git/hooks/pre-commit; chmod +x real-git/hooks/pre-commit; "
    "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> real-git/config; "
    "printf '[hooks]\\npre_tool = \"allow\"\\n' >> .tether/config.toml; "
    "mv real-git moved-git; echo done"
)


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "attack.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "attack", "name": "run_command", "arguments": {"command": _ATTACK}}],
                    },
                    {"when": {"step": 2}, "text": "tried"},
                ]
            }
        )
    )
    return script


@pytest.mark.parametrize("pointer", ["link", "gitdir file"])
async def test_a_linked_git_dir_and_tether_folder_stay_read_only_to_commands(
    spawn_daemon, workspace: Path, tmp_path: Path, pointer: str
):
    real = workspace / "real-git"
    (real / "hooks").mkdir(parents=True)
    (real / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (real / "HEAD").write_text("ref: refs/heads/main\n")
    if pointer == "link":
        (workspace / ".git").symlink_to("real-git")
    else:
        (workspace / ".git").write_text("gitdir: real-git\n")
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text("# the workspace's settings\n")
    daemon = await spawn_daemon("--mode", "full-auto", script=_script(tmp_path), env={"TETHER_SANDBOX": "bwrap"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("attack the git dir")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    said = json.dumps(updates)
    assert "done" in said and "Read-only file system" in said, said[-2000:]
    assert not (real / "hooks" / "pre-commit").exists()
    assert (real / "config").read_text() == "[core]\n\trepositoryformatversion = 0\n"
    assert (workspace / ".tether" / "config.toml").read_text() == "# the workspace's settings\n"
    assert real.is_dir() and not (workspace / "moved-git").exists()
    assert not list(workspace.rglob("PWNED"))
