"""Which files a plain command writes that an allow rule must not approve writing.

Owns: the check that a parsed command's write targets (redirections, `tee`, `sort -o`, `uniq` output) are
new and inert on disk: not existing, not configuring what later runs (decision 0004).
Must not: parse or decide.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

__all__ = ["unapprovable_write"]

# files that configure what builds, tests, installs, tools or the agent run (lowercase)
_CONFIGURING = frozenset(
    """
makefile gnumakefile package.json package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml
pnpm-workspace.yaml bun.lockb pyproject.toml setup.py setup.cfg tox.ini noxfile.py pytest.ini conftest.py
sitecustomize.py usercustomize.py manage.py pipfile pipfile.lock poetry.lock uv.lock cargo.toml cargo.lock
build.rs go.mod go.sum go.work gemfile gemfile.lock rakefile justfile taskfile.yml taskfile.yaml
cmakelists.txt meson.build build.gradle build.gradle.kts settings.gradle settings.gradle.kts gradlew
pom.xml build.xml build build.bazel workspace workspace.bazel module.bazel dockerfile containerfile
docker-compose.yml docker-compose.yaml compose.yml compose.yaml vagrantfile procfile deno.json deno.jsonc
bunfig.toml composer.json mix.exs rebar.config stack.yaml flake.nix default.nix shell.nix configure
configure.ac makefile.am makefile.in agents.md claude.md gemini.md copilot-instructions.md config
""".split()
)
# folders whose files other programs load or run
_CONFIGURING_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "dist-packages", "hooks"})
# code, and configuration formats tools read code settings from
_CODE_SUFFIXES = frozenset(
    """
py pyc pyo pyw pth pyx js mjs cjs ts mts cts jsx tsx vue svelte sh bash zsh ksh fish ps1 psm1 bat cmd
rb pl pm php lua mk cmake gradle kts nix el vim go rs c h cc cpp cxx hpp java kt scala swift cs fs ex exs
erl hs ml r jl dart groovy zig toml ini cfg conf yaml yml json jsonc json5 xml properties desktop service
""".split()
)


def unapprovable_write(targets: tuple[str, ...], workspace: Path | None, cwd: str) -> str:
    """Why an allow rule may not approve writing one of `targets` ("" when it may)."""
    for target in targets:
        why = _why(target, workspace, cwd)
        if why:
            return f"`{target}` {why}"
    return ""


def _why(target: str, workspace: Path | None, cwd: str) -> str:
    base = cwd if workspace is None or not os.path.isabs(cwd) else os.path.relpath(cwd, workspace)
    rel = posixpath.normpath(posixpath.join(base.replace(os.sep, "/"), target))
    named = _configures(rel)
    if named:
        return named
    if workspace is None:
        return "may already exist (the workspace is not known)"
    path = workspace / rel
    if os.path.lexists(path):
        return "already exists: an allow rule only lets a command create a new file"
    if "/" not in rel:
        return ""  # straight in the workspace: no folder on the way that could be a link
    # a folder on the way may be a link (`ln -s .git/hooks h; echo > h/pre-commit`)
    root = Path(os.path.realpath(workspace))
    parent = Path(os.path.realpath(path.parent))
    if not parent.is_relative_to(root):
        return "is written through a link that leaves the workspace"
    return _configures(posixpath.join(parent.relative_to(root).as_posix(), path.name))


def _configures(rel: str) -> str:
    parts = [p for p in rel.lower().split("/") if p not in ("", ".")]
    if not parts or parts[0] == "..":
        return "is outside the workspace"
    if any(p.startswith(".") for p in parts):
        return "is a dotfile or inside a dot-folder (`.envrc`, `.git*`, `.tether/`, `.vscode/`, …: configuration)"
    folder = next((p for p in parts[:-1] if p in _CONFIGURING_DIRS), None)
    if folder:
        return f"is inside `{folder}/`, whose files other programs load"
    name = parts[-1]
    if name in _CONFIGURING or (name.startswith("requirements") and name.endswith(".txt")):
        return "configures what builds, tests or the agent run"
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    if suffix in _CODE_SUFFIXES:
        return "is code or configuration that later commands may run"
    return ""
