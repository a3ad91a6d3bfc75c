"""What a session's turns are given that a prompt does not change: built once, checked each prompt.

Owns: `TurnSetup` (hidden paths, hooks, AGENTS.md, MEMORY.md, command files, MCP or not, the stream
sanitizer, the turns' parts; per connection a `Wiring`: file I/O, gate, tools, specs, provider, services)
on the `LiveSession`, built again when an input changed (`stat`). Must not: trust a file changed within
`_GRAIN_NS` of its read, or keep a trusted workspace's hooks or a turn's own services (made each turn).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .live_session import CommandEntry, LiveSession

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..agent.sanitize import StreamSanitizer
    from ..agent.session import AgentSession
    from ..agent.turn_parts import TurnParts
    from ..agent.turn_services import TurnServices
    from ..approvals import ApprovalGate
    from ..config import Settings
    from ..config.mcp_servers import McpServerConfig
    from ..hooks.config import HookSet
    from ..providers.base import Provider
    from ..tools.args import JsonSchema
    from ..tools.base import FileIO
    from ..tools.registry import ToolRegistry
    from .ports import ClientPort

# What the config's, the history's and the credential stores' places are worked out from
_ENV_KEYS = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
    "TETHER_CONFIG",
    "TETHER_HOME",
)
# Wider than a local file system's timestamp grain (a jiffy, 1-10 ms on Linux): a file changed
# this close to its read could change again with the same mtime, so it is not trusted yet.
_GRAIN_NS = 1_000_000_000
_HOST_KEYS = "/etc/ssh"  # its listing: a host key made between two prompts is hidden from the next

FileStamp = tuple[int, int, int, int] | None  # mtime, ctime, size, inode; None: missing


@dataclass(frozen=True, slots=True)
class Wiring:
    """What a connection gives its turns in a session: its file I/O (editor buffers, then
    disk), its approval gate, the daemon's tools, those and `delegate` where its settings
    have it (the turn's, with their specs made once), its provider (None until a turn asked)."""

    ctx: ClientPort
    file_io: FileIO
    gate: ApprovalGate
    tools: ToolRegistry
    turn_tools: ToolRegistry
    specs: list[JsonSchema]
    provider: Provider | None = None
    services: TurnServices | None = None  # kept where no part is a turn's own (services/turns.py)


@dataclass(frozen=True, slots=True)
class TurnSetup:
    settings: Settings  # the connection's, by identity (a new Settings is a change)
    env: tuple[str | None, ...]
    # the user and workspace config, /etc/ssh, each AGENTS.md and MEMORY.md that may be read
    files: tuple[str, ...]
    stamps: tuple[FileStamp, ...]
    markers: tuple[str, ...]  # the `.git` of the workspace's folders: where AGENTS.md's walk stops
    marked: tuple[bool, ...]
    folders: tuple[str, ...]  # made by the build if missing (the sandbox hides only what exists)
    steady: bool  # False: built again at the next prompt
    hidden: tuple[str, ...]  # what commands and tools may not read (`turns.read_paths`)
    filtered: tuple[str, ...]  # token files shown without their credential lines
    home: Path  # Tether's data directory
    hooks: HookSet  # as configured (hooks/config.py)
    instructions: str  # AGENTS.md and the MEMORY.md files (agent/context.py)
    commands: tuple[CommandEntry, ...]  # the user's command files (services/user_commands.py)
    # the MCP servers its client gave it (by identity: set again, they are a change) and whether
    # the session has any (the user's or those): a turn without any gets Tether's tools alone
    mcp_given: tuple[McpServerConfig, ...]
    mcp: bool
    wiring: Wiring  # for the connection that prompted last; another's prompt gets its own
    turn_id: str  # the turn that checked it last: a turn checks once
    wired: bool  # hooks, the reviewer or ask-first: the turn's hook port has something to do
    sanitizer: StreamSanitizer  # the turns' streamed output's (reset after each step; a turn at a time)
    parts: TurnParts  # the turns' journal, report builder and input guard (each turn starts them afresh)

    def current(self, settings: Settings, session: LiveSession) -> bool:
        return (
            self.steady
            and settings is self.settings
            and session.mcp_servers is self.mcp_given
            and self.env == _env()
            and self.stamps == _stamps(self.files)
            and self.marked == tuple(map(os.path.lexists, self.markers))
            and all(map(os.path.isdir, self.folders))
        )


def turn_setup(ctx: ClientPort, session: AgentSession, turn_id: str) -> TurnSetup:
    """The session's setup, built again only when one of its inputs changed since (checked
    once a turn: by the prompt's commands, then by the turn it starts)."""
    live = session if isinstance(session, LiveSession) else None
    kept = live.turn_setup if live is not None else None
    if live is not None and kept is not None and (kept.turn_id == turn_id or kept.current(ctx.settings, live)):
        setup = kept
        if kept.turn_id != turn_id or kept.wiring.ctx is not ctx:
            wiring = kept.wiring if kept.wiring.ctx is ctx else _wiring(ctx, session)
            setup = dataclasses.replace(kept, turn_id=turn_id, wiring=wiring)
    else:
        setup = _build(ctx, session, turn_id)
    if live is not None:
        live.turn_setup = setup
    return setup


def _build(ctx: ClientPort, session: AgentSession, turn_id: str) -> TurnSetup:
    from ..agent.context import INSTRUCTION_FILE, project_instructions
    from ..agent.memory_files import memory_file
    from ..agent.sanitize import StreamSanitizer
    from ..agent.turn_parts import turn_parts
    from ..class_code_cache import cache_dirs
    from ..config.layers import user_config_path
    from ..hooks.config import load_hooks
    from ..store.paths import tether_home
    from .mcp_servers import session_servers
    from .turns import read_paths
    from .user_commands import entries
    from .user_commands import folders as command_folders

    settings = ctx.settings
    workspace = Path(session.workspace)
    began = time.time_ns()
    env = _env()
    user_path = user_config_path()[0]
    folders = (workspace, *workspace.parents)  # AGENTS.md is looked for up to the repository's root
    files = (
        str(user_path),
        str(workspace / ".tether" / "config.toml"),
        _HOST_KEYS,
        *(str(folder / INSTRUCTION_FILE) for folder in folders),
        str(memory_file("user", workspace)),
        str(memory_file("workspace", workspace)),
        *_listed(folder for folder, _label, _within in command_folders(workspace)),
    )
    stamps = _stamps(files)
    markers = tuple(str(folder / ".git") for folder in folders)
    marked = tuple(map(os.path.lexists, markers))
    hidden, filtered = read_paths(ctx)  # makes the class code cache's folders
    home = tether_home(Path(settings.home) if settings.home else None)
    hooks = load_hooks(user_path, workspace, home)
    settled = all(stamp is None or max(stamp[0], stamp[1]) < began - _GRAIN_NS for stamp in stamps)
    return TurnSetup(
        settings=settings,
        env=env,
        files=files,
        stamps=stamps,
        markers=markers,
        marked=marked,
        folders=tuple(cache_dirs()),
        steady=settled and not hooks.trusted_workspace,
        hidden=hidden,
        filtered=filtered,
        home=home,
        hooks=hooks,
        instructions=project_instructions(workspace, session.sandbox.is_withheld),
        wired=bool(hooks) or settings.reviewer == "on" or settings.ask_first == "on",
        commands=tuple(entries(workspace)),
        mcp_given=session.mcp_servers if isinstance(session, LiveSession) else (),
        mcp=bool(session_servers(ctx, session.id)),
        wiring=_wiring(ctx, session),
        turn_id=turn_id,
        sanitizer=StreamSanitizer(),
        parts=turn_parts(session, settings.guard),  # type: ignore[arg-type]
    )


async def turn_provider(ctx: ClientPort, session: AgentSession, turn_id: str) -> Provider:
    """The connection's provider (`the connection's `provider``), kept with the setup once had."""
    setup = turn_setup(ctx, session, turn_id)
    if setup.wiring.provider is not None:
        return setup.wiring.provider
    provider = await ctx.provider()  # a failure (none configured) is asked again next time
    if isinstance(session, LiveSession) and session.turn_setup is setup:
        wiring = dataclasses.replace(setup.wiring, provider=provider)
        session.turn_setup = dataclasses.replace(setup, wiring=wiring)
    return provider


def keep_services(session: AgentSession, setup: TurnSetup, services: TurnServices) -> None:
    """Keep the turn's services with the setup, for the session's next turns on its connection."""
    if isinstance(session, LiveSession) and session.turn_setup is setup:
        session.turn_setup = dataclasses.replace(setup, wiring=dataclasses.replace(setup.wiring, services=services))


def _wiring(ctx: ClientPort, session: AgentSession) -> Wiring:
    files = ctx.editor_files(session.id, session.sandbox)
    tools = turn_tools = ctx.daemon.tools
    if ctx.settings.delegate == "on":  # sub-agents (agent/subagent.py): the tool is the same for every turn
        from ..agent.subagent import with_delegate

        turn_tools = with_delegate(tools, ctx.settings.delegate_max_steps)
    gate = ctx.gate_for(session.workspace, session.store)
    return Wiring(ctx, files, gate, tools, turn_tools, turn_tools.specs())


def _listed(folders: Iterable[Path]) -> list[str]:
    """Each folder and its entries: a file added, removed or renamed changes the folder's
    stamp, an edited one its own (a link's target's, which `stat` follows)."""
    found: list[str] = []
    for folder in folders:
        found.append(str(folder))
        try:
            found += sorted(entry.path for entry in os.scandir(folder))
        except OSError:
            continue
    return found


def _env() -> tuple[str | None, ...]:
    return tuple(map(os.environ.get, _ENV_KEYS))


def _stamps(paths: tuple[str, ...]) -> tuple[FileStamp, ...]:
    """Each path's stamp, in one loop (checked each prompt: no call a file)."""
    found: list[FileStamp] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            found.append(None)
            continue
        found.append((stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino))
    return tuple(found)
