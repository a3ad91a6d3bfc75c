"""Autorun paths: workspace files an editor, shell or tool the user runs later executes without being named.

Owns: the list (`.vscode/tasks.json`, `.envrc`, `.nvim.lua`, `.exrc`, `.pre-commit-config.yaml`, ...) and why
each entry runs; work done without asking must not create or change them (decision 0004).
Must not: touch the disk or decide.
"""

from __future__ import annotations

__all__ = ["AUTORUN_DIRS", "AUTORUN_FILES", "autorun_why"]

# folder -> what runs its files (any file in it counts: settings point at programs too)
AUTORUN_DIRS: dict[str, str] = {
    ".vscode": "VS Code runs its tasks and settings when it opens the folder",
    ".idea": "JetBrains IDEs run its run configurations and startup tasks",
    ".devcontainer": "editors build and run its container set-up",
    ".helix": "Helix loads its configuration and language servers",
    ".zed": "Zed loads its settings and tasks",
    ".husky": "git runs its hooks at the user's next commit",
    ".tether": "Tether reads its hooks and configuration",
}
# file -> what runs it
AUTORUN_FILES: dict[str, str] = {
    ".envrc": "direnv runs it when the user enters the folder",
    ".env": "direnv, docker compose and editors load it into what they run (NODE_OPTIONS, PYTHONSTARTUP, ...)",
    ".nvim.lua": "Neovim runs it when it starts in the folder (exrc)",
    ".nvimrc": "Neovim runs it when it starts in the folder (exrc)",
    ".exrc": "Vim and Neovim run it when they start in the folder (exrc)",
    ".lvimrc": "the localvimrc plugin runs it",
    ".lazy.lua": "LazyVim runs it when Neovim starts in the folder",
    ".dir-locals.el": "Emacs evaluates it for files in the folder",
    ".dir-locals-2.el": "Emacs evaluates it for files in the folder",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names at the user's next commit",
    ".gitattributes": "git runs the filter and diff drivers it names",
    ".gitmodules": "git reads submodule URLs and commands from it",
    ".mise.toml": "mise runs its hooks when the user enters the folder",
    "mise.toml": "mise runs its hooks when the user enters the folder",
}


def autorun_why(rel: str) -> str:
    """What runs the workspace-relative path `rel` later ("" when nothing does). Any level
    counts (`sub/.envrc` runs when the user enters `sub/`)."""
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    for index, part in enumerate(parts):
        if part in AUTORUN_DIRS and index < len(parts) - 1:
            return AUTORUN_DIRS[part]
    if parts and parts[-1] in AUTORUN_FILES:
        return AUTORUN_FILES[parts[-1]]
    if parts and parts[-1] in AUTORUN_DIRS:
        return AUTORUN_DIRS[parts[-1]]  # the folder itself (a move or delete of it)
    return ""
