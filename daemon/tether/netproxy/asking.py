"""Asking the user about a domain the proxy would refuse, through the normal prompt.

Owns: the held connection's `session/request_permission` (one option per kind), reading
the answer (anything but allow, or no answer in `ASK_SECONDS`: deny), and the "always"
list in Tether's data directory. Must not: ask when no ACP client is attached.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from pathlib import Path

    from tether.transport.rpc import TetherRPC

__all__ = ["ASK_SECONDS", "AskDomain", "always_allowed", "ask_through", "remember_always"]

ASK_SECONDS = 120.0
_FILE = "allowed_domains"
# (host, port) -> "session" | "always" | "deny"
AskDomain = Callable[[str, int], Awaitable[str]]
_ANSWERS = {"allow_domain_session": "session", "allow_domain_always": "always"}


def ask_through(rpc: TetherRPC, session_id: str, call_id: str, command: str) -> AskDomain:
    """Asks this command's client about a host; the answer, or "deny"."""

    async def ask(host: str, port: int) -> str:
        from tether.tools.visible_text import visible
        from tether.transport.rpc import ClientRequestFailed

        params = _params(session_id, call_id, visible(host), port, visible(command))
        with anyio.move_on_after(ASK_SECONDS):
            try:
                result = await rpc.request("session/request_permission", params)
            except (ClientRequestFailed, ConnectionError, OSError):
                return "deny"
            outcome = result.get("outcome") if isinstance(result, dict) else None
            chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
            return _ANSWERS.get(chosen, "deny") if isinstance(chosen, str) else "deny"
        return "deny"

    return ask


def _params(session_id: str, call_id: str, host: str, port: int, command: str) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": call_id,
            "title": f"Reach {host}:{port} from `{command}`",
            "kind": "fetch",
            "status": "pending",
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": (
                            f"The command wants to connect to {host} (port {port}), which is not in allowed_domains. "
                            "It waits until you answer."
                        ),
                    },
                }
            ],
        },
        "options": [
            {"optionId": "allow_domain_session", "name": f"Allow {host} for this session", "kind": "allow_once"},
            {"optionId": "allow_domain_always", "name": f"Always allow {host}", "kind": "allow_always"},
            {"optionId": "reject_domain", "name": "Deny", "kind": "reject_once"},
        ],
        "_meta": {"tether": {"reason": f"network: {host} is not in allowed_domains", "domain": host}},
    }


def always_allowed(home: Path) -> tuple[str, ...]:
    """The domains the user allowed always (one a line in the data directory)."""
    try:
        text = (home / _FILE).read_text(encoding="utf-8")
    except OSError:
        return ()
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def remember_always(home: Path, host: str) -> None:
    if host in always_allowed(home):
        return
    home.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(home / _FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        handle.write(host + "\n")
