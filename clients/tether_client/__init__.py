"""A typed async Python client for the Tether daemon.

    async with await TetherClient.spawn(workspace=path) as client:
        await client.initialize()
        session = await client.new_session(path)
        turn = session.prompt("What does README.md say?")
        async for update in turn:
            ...
        print(turn.stop_reason)

The tests, the benchmarks and `tether run` use it; its JSON-RPC is the one peer the
daemon uses too (`tether_protocol.peer`). Standard library plus `tether_protocol` only.
"""

from ._client import DaemonStartError, PromptTurn, Session, TetherClient
from ._peer import ClientError, JsonRpcPeer

__all__ = ["ClientError", "DaemonStartError", "JsonRpcPeer", "PromptTurn", "Session", "TetherClient"]
