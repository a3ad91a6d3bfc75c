"""What a turn's tools need from the server, gathered in one value the turn is given.

Owns: `TurnServices` (the approval gate and asker, file I/O, the sandbox and network settings,
hooks, and the per-turn switches tools read); defaults suit a read-only turn.
Must not: run tools or ask the user itself (the executor and the gate do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..tools.changes import MAX_RECORDED_BYTES
from .hook_port import NO_HOOKS, HookPort

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from ..approvals import ApprovalGate, Asker
    from ..netproxy.proxy import ProxyRules
    from ..tools.base import Elicit, FileIO


@dataclass(slots=True)
class TurnServices:
    """What tools that change things need from the server; defaults suit read-only turns."""

    gate: ApprovalGate | None = None
    asker: Asker | None = None
    files: FileIO | None = None
    documents: Mapping[str, str] = field(default_factory=dict)
    env_allow: tuple[str, ...] = ()
    checkpoint_max_bytes: int = MAX_RECORDED_BYTES  # larger files are not recorded for rewind
    # The OS sandbox for commands (settings.sandbox: auto | bwrap | landlock | off) and
    # the directories it hides from them (Tether's config and history).
    sandbox_setting: str = "auto"
    hidden_paths: tuple[str, ...] = ()
    filtered_paths: tuple[str, ...] = ()  # token files commands see without credential lines
    unix_sockets: tuple[str, ...] = ()  # `allow_unix_sockets`: for commands with the network
    net_rules: ProxyRules | None = None  # `network = "allowlist"`: the turn's proxy rules (netproxy/)
    mask_secrets: bool = True  # secret-looking text in results is masked (agent/secret_mask.py)
    # The client set `_meta.terminal_output`: command output goes to a terminal the client
    # shows (as claude-agent-acp and codex-acp do) instead of text content.
    terminal_output_meta: bool = False
    memory_tokens: int = 0  # retrieved memory's budget per turn (agent/memory.py); 0: off
    hooks: HookPort = NO_HOOKS  # the user's hooks (tether.hooks implements the port)
    ask_first: bool = False  # a destructive, vague prompt gets `hooks.first_question` first
    # asks the user ask-first's question in a form: the answer, or None (declined, cancelled,
    # unanswerable); None: the question is the turn's reply only (server/elicitation.py)
    clarify: Callable[[str], Awaitable[str | None]] | None = None
    # asks the user an MCP server's form (its name, message, schema) and gives its answer
    # `{action, content?}`; None: the client cannot answer forms (server/elicitation.py)
    elicit: Elicit | None = None
    # AGENTS.md and the MEMORY.md files as the session last read them (services/turn_setup.py);
    # None: the turn reads them when it starts
    instructions: str | None = None
