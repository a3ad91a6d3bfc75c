"""A typed async Python client for the Tether daemon (usage: docs/decisions/0014-clients.md).

Owns: `TetherClient` and its sessions and turns, used by the tests, the benchmarks and
`tether run`, over the daemon's own peer (`tether_protocol.peer`).
Must not: import the daemon, or anything but the standard library and `tether_protocol`.
"""

from ._client import DaemonStartError, PromptTurn, Session, TetherClient
from ._peer import ClientError, JsonRpcPeer

__all__ = ["ClientError", "DaemonStartError", "JsonRpcPeer", "PromptTurn", "Session", "TetherClient"]
