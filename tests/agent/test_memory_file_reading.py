"""The MEMORY.md files as the model reads them, and a fact appended under its heading."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.agent.context import project_instructions
from tether.agent.memory_files import memory_file, read_memory, with_fact

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("TETHER_CONFIG", str(tmp_path / "cfg" / "config.toml"))
    return tmp_path / "cfg"


def test_the_user_file_sits_beside_the_user_config(config_dir: Path, tmp_path: Path) -> None:
    assert memory_file("user", tmp_path) == config_dir / "MEMORY.md"
    assert memory_file("workspace", tmp_path / "ws") == tmp_path / "ws" / ".tether" / "MEMORY.md"


def test_no_files_add_nothing_and_a_workspace_link_out_is_not_read(config_dir: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".tether").mkdir(parents=True)
    assert project_instructions(ws) == ""
    (tmp_path / "secret.txt").write_text("TOKEN=sk-outside\n")
    (ws / ".tether" / "MEMORY.md").symlink_to(tmp_path / "secret.txt")
    assert read_memory("workspace", ws).text == "" and project_instructions(ws) == ""


def test_the_user_file_comes_before_the_workspace_file(config_dir: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".tether").mkdir(parents=True)
    config_dir.mkdir()
    (config_dir / "MEMORY.md").write_text("- mine\n")
    (ws / ".tether" / "MEMORY.md").write_text("- the project's\n")
    text = project_instructions(ws)
    assert text.index("- mine") < text.index("- the project's")


def test_with_fact_appends_under_the_heading_once() -> None:
    assert with_fact(None, "Use tabs") == "## Remembered\n\n- Use tabs\n"
    text = "# Notes\n\n## Remembered\n\n- one\n\n## Other\n\n- x\n"
    added = with_fact(text, "two  words")
    assert added == "# Notes\n\n## Remembered\n\n- one\n- two words\n\n## Other\n\n- x\n"
    assert with_fact(added, "two words") == added
    assert with_fact("no newline", "x", "Testing") == "no newline\n\n## Testing\n\n- x\n"
