"""`/memory`: what the two MEMORY.md files hold, and `/memory add [--user] <fact>`.

Owns: the command's wording (paths, text, how to edit, whether retrieved memory is on) and its
argument parsing; `/memory add` proposes the fact as the `remember` tool would. Neither is a turn.
Must not: write a file other than through `propose_memory_edit`, or change settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.memory_files import MAX_MEMORY_CHARS, Scope, read_memory
from ..agent.turn_services import TurnServices

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from ..rendering import SessionUpdates
    from .ports import ClientPort

__all__ = ["DESCRIPTION", "HINT", "memory"]

DESCRIPTION = "Show the MEMORY.md files (user and workspace); /memory add [--user] <fact> proposes adding one"
HINT = "add [--user] <fact> (optional)"
_USAGE = "/memory shows both files; /memory add <fact> (workspace file) or /memory add --user <fact> (yours)"


def show(ctx: ClientPort, session: AgentSession) -> str:
    parts = ["[/memory: the files every session of this workspace reads after AGENTS.md]"]
    labels: tuple[tuple[Scope, str], ...] = (
        ("user", "Your memory, for every workspace"),
        ("workspace", "This workspace's memory"),
    )
    for scope, label in labels:
        found = read_memory(scope, session.workspace, session.sandbox.is_withheld)
        if not found.path.exists():
            parts.append(f"{label}: {found.path} (does not exist yet)")
            continue
        size = f"{found.size} characters" + (f", only the first {MAX_MEMORY_CHARS} are read" if found.cut else "")
        body = found.text.strip() or "(empty)"
        parts.append(f"{label}: {found.path} ({size})\n{body}")
    on = ctx.settings.memory == "on"
    parts.append(
        "Edit them in your editor, or "
        + _USAGE
        + ". Retrieved memory (messages of earlier sessions "
        + (
            "given to the model at each prompt) is on"
            if on
            else 'given to the model at each prompt) is off: set memory = "on" in your user config to turn it on'
        )
        + "."
    )
    return "\n\n".join(parts)


async def memory(ctx: ClientPort, session: AgentSession, turn_id: str, sink: SessionUpdates, args: str) -> None:
    """`/memory [add [--user] <fact>]`."""
    verb, _, rest = args.partition(" ")
    if not verb:
        sink.notice(f"\n{show(ctx, session)}\n")
        return
    if verb != "add" or not rest.strip():
        sink.notice(f"\n[/memory: {_USAGE}]\n")
        return
    fact, scope = rest.strip(), "workspace"
    if fact.startswith("--user"):
        fact, scope = fact[len("--user") :].strip(), "user"
    if not fact:
        sink.notice(f"\n[/memory: {_USAGE}]\n")
        return
    services = TurnServices(
        gate=ctx.gate_for(session.workspace, session.store),
        asker=ctx.asker(),
        files=ctx.editor_files(session.id, session.sandbox),
        documents=ctx.documents.texts,
    )
    chosen: Scope = "user" if scope == "user" else "workspace"
    from ..agent.memory_edit import propose_memory_edit  # (the remember tool's module: for `#` only)

    await propose_memory_edit(session, services, sink, call_id=f"memory-{turn_id}", facts=[fact], scope=chosen)
