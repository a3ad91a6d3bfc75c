"""What the MCP tests share: where the real servers are, a user config naming them,
sessions with servers an ACP client gives, and the turns' updates."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "mcp-turns.json"
TROUBLE = HERE / "servers" / "trouble.py"
EVERYTHING_VERSION = "2026.8.31"
EVERYTHING = (
    HERE.parent.parent
    / ".cache"
    / f"server-everything-{EVERYTHING_VERSION}"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def user_config(tmp_path: Path, text: str) -> Path:
    """The user config file the daemon reads (XDG_CONFIG_HOME is tmp_path/xdg-config)."""
    path = tmp_path / "xdg-config" / "tether" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def trouble_table(name: str = "trouble", *args: str, extra: str = "") -> str:
    argv = ", ".join(f'"{a}"' for a in (str(TROUBLE), *args))
    return f'[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = [{argv}]\n{extra}\n'


def trouble_marking_cancels(tmp_path: Path) -> Path:
    """The user config with the trouble server writing to a file it is allowed to write (its
    `writable`) as it gets a request and as that request is cancelled; that file."""
    marker = tmp_path / "marks" / "cancelled.txt"
    marker.parent.mkdir()
    user_config(
        tmp_path,
        trouble_table(extra=f'writable = ["{marker.parent}"]\n[mcp_servers.trouble.env]\nTROUBLE_MARKER = "{marker}"'),
    )
    return marker


def programs(pids: list[int]) -> list[str]:
    """The executables' names of `pids`: a sandboxed server's bwrap processes name its
    arguments too, so a test counts the server's own program among them."""
    import os

    return [os.path.basename(os.path.realpath(f"/proc/{pid}/exe")) for pid in pids]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def new_session(daemon, cwd: Path, servers: list[dict] | None = None):
    """`session/new` with `mcpServers`, as an ACP client sends it."""
    from tether_client._client import Session

    result = await daemon.client.peer.request("session/new", {"cwd": str(cwd), "mcpServers": servers or []})
    session = Session(daemon.client, result["sessionId"], result)
    session.updates.extend(daemon.client._unclaimed.pop(session.id, ()))  # sent with the answer
    daemon.client._sessions[session.id] = session
    return session


async def run(session, text: str):
    turn = session.prompt(text)
    updates = [u async for u in turn]
    return turn, updates


def final(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


def notices(updates: list[dict]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


class User:
    """Answers permission prompts from a list and keeps them."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[dict] = []

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.prompts.append(params)
        return {"outcome": {"outcome": "selected", "optionId": self.answers.pop(0)}}
