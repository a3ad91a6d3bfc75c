"""The chat tests' fixtures: `tether chat` in a real terminal (tmux) against a scripted daemon."""

from __future__ import annotations

import shutil
import sys
from typing import TYPE_CHECKING

import pytest
from chat_harness import SCRIPT, Term

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


@pytest.fixture
def chat_workspace(workspace: Path) -> Path:
    (workspace / "README.md").write_text("# Chat\n\nHello from the chat workspace.\n")
    (workspace / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    return workspace


@pytest.fixture
def start_chat(daemon_env: dict[str, str], chat_workspace: Path, tmp_path: Path) -> Iterator[Callable[..., Term]]:
    """`start_chat(*flags, env=...)`: `tether chat` with the scripted model in an 80x24 tmux."""
    if shutil.which("tmux") is None:
        raise RuntimeError("tmux is missing: run tests/install-deps (Debian package tmux)")
    started: list[Term] = []

    def start(*flags: str, env: dict[str, str] | None = None) -> Term:
        argv = [
            sys.executable,
            "-m",
            "tether",
            "chat",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
            "--workspace",
            str(chat_workspace),
            *flags,
        ]
        term_env = {k: v for k, v in daemon_env.items() if k != "NO_COLOR"}
        term_env.update(env or {})
        term = Term(argv, env=term_env, cwd=chat_workspace, artifacts=tmp_path / "screens")
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()
