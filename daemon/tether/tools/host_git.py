"""Git run by Tether itself over a workspace (today `/review`'s diffs): the one way it does.

Owns: running git in the command sandbox and always inert (no config, protocol, hooks, fsmonitor, filters,
textconv or external diffs; the minimal environment; SPEC §5.13.1, decision 0009).
Must not: run git with the daemon's environment, or at all when no git directory is found.
"""

from __future__ import annotations

import asyncio
import os

from tether.sandbox import SandboxChoice, SandboxPolicy
from tether.sandbox.host_path import host_program
from tether.tools.git_objects import find_git_dir
from tether.tools.subprocess_env import command_env

__all__ = ["INERT_CONFIG", "HostGit", "diff_args", "inert_env"]

# `-c` settings win over every file git reads; an empty command is no command.
INERT_CONFIG: tuple[str, ...] = (
    "protocol.allow=never",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.sshCommand=",
    "core.askPass=",
    "credential.helper=",
    "diff.external=",
    "diff.ignoreSubmodules=all",
    "core.alternateRefsCommand=",
    "gc.auto=0",
    "maintenance.auto=false",
)
_OUTPUT_CAP = 4 * 1024 * 1024
_TIMEOUT_S = 20.0


def inert_env(git_dir: str, work_tree: str) -> dict[str, str]:
    """The minimal command environment, and git's own switches that no config can undo."""
    return command_env() | {
        "GIT_DIR": git_dir,
        "GIT_WORK_TREE": work_tree,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ALLOW_PROTOCOL": "none",  # beats `protocol.<name>.allow` in the repository's config
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_SSH_COMMAND": "/bin/false",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_EXTERNAL_DIFF": "",
    }


class HostGit:
    """Git over one workspace, confined by `choice` (None: the sandbox is off; inert only)."""

    def __init__(self, workspace: str, choice: SandboxChoice, hidden: tuple[str, ...] = ()) -> None:
        self.workspace, self.choice, self.hidden = workspace, choice, hidden
        self._filters: list[str] | None = None

    async def run(self, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        """git's output, or "" when it failed, found no repository or could not start."""
        if self._filters is None:
            found = await self._git("config", "--get-regexp", r"^filter\.", ok=(0, 1), filters=[])
            self._filters = _emptied_filters(found)
        return await self._git(*args, ok=ok, filters=self._filters)

    async def _git(self, *args: str, ok: tuple[int, ...], filters: list[str]) -> str:
        repository, git = find_git_dir(self.workspace), host_program("git")
        if repository is None or git is None:
            return ""  # git found by absolute PATH entries only: `./node_modules/.bin/git` is the repository's
        argv = [git, "--no-pager", *(arg for setting in INERT_CONFIG for arg in ("-c", setting)), *filters, *args]
        fds: list[int] = []
        if self.choice.sandbox is not None:
            policy = SandboxPolicy(
                workspace=self.workspace,
                tmpdir=None,
                cwd=self.workspace,
                writable=False,
                network=False,
                hidden=self.hidden,
            )
            try:
                argv, fds = self.choice.sandbox.prepare(argv, policy)
            except (OSError, ValueError):
                return ""  # fails closed: never unconfined when a backend was chosen
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.workspace,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env=inert_env(repository.git_dir, repository.top),
                pass_fds=fds,
                limit=_OUTPUT_CAP,
            )
        except OSError:
            return ""
        finally:
            for fd in fds:
                os.close(fd)
        try:
            out, _err = await asyncio.wait_for(proc.communicate(), _TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return ""
        return out.decode("utf-8", "replace") if proc.returncode in ok else ""


def _emptied_filters(config: str) -> list[str]:
    """`-c filter.NAME.clean=` (and process, smudge; and not required, or git fails) for every
    filter the configuration names: `git config` itself runs nothing, an empty command is no filter."""
    keys = [line.split(" ", 1)[0] for line in config.splitlines()]
    names = {key[len("filter.") : key.rindex(".")] for key in keys if key.count(".") >= 2}  # names may hold dots
    return [
        arg
        for name in sorted(names)
        for key in ("clean=", "process=", "smudge=", "required=false")
        for arg in ("-c", f"filter.{name}.{key}")
    ]


def diff_args(*extra: str) -> list[str]:
    """`git diff` that shows text only: no external diff, no textconv, no submodule's git."""
    return ["diff", *extra, "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"]
