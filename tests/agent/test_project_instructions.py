"""AGENTS.md files reach the system prompt, nearest last, within the repository."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.agent.context import build_request, project_instructions

if TYPE_CHECKING:
    from pathlib import Path


def test_agents_md_from_the_workspace_up_to_the_repository_root(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    ws = repo / "packages" / "web"
    ws.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("outside the repository: never used\n")
    (repo / "AGENTS.md").write_text("Use tabs.\n")
    (ws / "AGENTS.md").write_text("Run npm test before finishing.\n")
    text = project_instructions(ws)
    assert "never used" not in text
    assert text.index("Use tabs.") < text.index("Run npm test")
    request = build_request(
        messages=[], tools=[], workspace=ws, model="m", max_output_tokens=0, session_id="s", step=1, instructions=text
    )
    assert "Run npm test before finishing." in request.system
    # the same inputs give the same bytes (prompt caching)
    again = build_request(
        messages=[],
        tools=[],
        workspace=ws,
        model="m",
        max_output_tokens=0,
        session_id="s",
        step=2,
        instructions=project_instructions(ws),
    )
    assert again.system == request.system


def test_a_workspace_outside_any_repository_uses_only_its_own_file(tmp_path: Path):
    ws = tmp_path / "plain"
    ws.mkdir()
    (tmp_path / "AGENTS.md").write_text("parent file\n")
    (ws / "AGENTS.md").write_text("own file\n")
    text = project_instructions(ws)
    assert "own file" in text and "parent file" not in text


def test_a_link_to_a_file_outside_the_repository_is_left_out(tmp_path: Path):
    (tmp_path / "secret.txt").write_text("TOKEN=sk-outside\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("Shared rules.\n")
    ws = repo / "app"
    ws.mkdir()
    (repo / "AGENTS.md").symlink_to(repo / "docs" / "agents.md")  # inside: kept
    (ws / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    text = project_instructions(ws)
    assert "Shared rules." in text and "sk-outside" not in text

    plain = tmp_path / "plain"  # no repository: the workspace is the limit
    plain.mkdir()
    (plain / "AGENTS.md").symlink_to(repo / "docs" / "agents.md")
    assert project_instructions(plain) == ""


def test_a_huge_instruction_file_is_read_only_as_far_as_it_is_kept(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("é" * 50_000 + "END")
    text = project_instructions(ws)
    assert "END" not in text and text.count("é") == 32_000


def test_a_link_above_its_own_folder_is_left_out_even_inside_the_repository(tmp_path: Path):
    # a home folder that is a dotfiles repository: the "repository" holds ~/.ssh
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- SECRET\n")
    workspace = home / "Downloads" / "proj"  # an unpacked tarball, no repository of its own
    workspace.mkdir(parents=True)
    (workspace / "AGENTS.md").symlink_to("../../.ssh/id_ed25519")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Use tabs.\n")
    assert "SECRET" not in project_instructions(workspace)
    # a link beside or below its own folder still counts
    (workspace / "AGENTS.md").unlink()
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")
    assert "Use tabs." in project_instructions(workspace)
