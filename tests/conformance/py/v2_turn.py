"""The official ACP Python SDK's v2 client (`acp.experimental.v2`, agent-client-protocol
1.0.0rc3) drives `tether acp` through two turns: an edit whose permission the SDK's
`request_permission` handler allows, a keyed prompt held behind it (its turn runs a command,
allowed too, whose output streams to a terminal, and a sub-agent with writes, a child session
whose command is asked on its own id), the keyed prompt's retries (while held and after
both turns), then `session/list` and `session/close`. With `--resume ID` (a new
daemon): `session/resume` of that session with `replayFrom: {type: "start"}`.

  python v2_turn.py --sdk DIR [--resume ID] --workspace WS -- python -m tether acp --provider scripted --script S

`--sdk` is where tests/conformance/install-acp-python-v2 put the pre-release: it goes first
on sys.path, so `acp` is 1.0.0rc3 here while the test venv keeps 0.12.1 for the v1 tests.
Prints one JSON summary: what the client saw, every line both ways, the SDK's own parse of
each daemon line (by the adapters its router uses) and what the SDK logged as an error.
Run by tests/conformance/test_acp_v2_python_sdk.py.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import os
import sys
import uuid
from typing import Annotated, Any

ARGS = sys.argv[1:]
SDK = ARGS[ARGS.index("--sdk") + 1]
WS = os.path.abspath(ARGS[ARGS.index("--workspace") + 1])
COMMAND = ARGS[ARGS.index("--") + 1 :]
RESUME = ARGS[ARGS.index("--resume") + 1] if "--resume" in ARGS[: ARGS.index("--")] else None
sys.path.insert(0, SDK)

from acp.experimental.v2 import ClientSideConnection, schema
from acp.experimental.v2._methods import AGENT_REQUESTS_BY_METHOD, protocol_specs
from acp.experimental.v2.interfaces import Client
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

WAIT = 30.0  # seconds for any one thing the daemon should do


class KeyedPromptRequest(schema.PromptRequest):
    """`session/prompt` with the RFD's `idempotencyKey`: 1.0.0rc3 (schema v2.0.0-alpha.5)
    has no such field, so its own PromptRequest would drop it (extra keys are ignored) and
    its `prompt(**kwargs)` puts extra keywords under `_meta`."""

    idempotency_key: Annotated[str, Field(alias="idempotencyKey")]


class RecordingClient:
    """The SDK's v2 `Client`: permissions allowed once the test says so, updates kept as the
    SDK delivered them (its models dumped back to JSON)."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []
        self.release = asyncio.Event()  # set when the permission may be answered
        self.changed = asyncio.Event()

    async def request_permission(
        self,
        session_id: str,
        title: str,
        options: list[schema.PermissionOption],
        description: str | None = None,
        subject: Any = None,
        **meta: Any,
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(
            {
                "sessionId": session_id,
                "title": title,
                "description": description,
                "subject": _dump(subject),
                "options": [_dump(o) for o in options],
                "meta": meta,
            }
        )
        self._poke()
        await self.release.wait()
        allow = next(o for o in options if o.kind == "allow_once")
        return schema.RequestPermissionResponse(
            outcome=schema.SelectedPermissionOutcomeVariant(option_id=allow.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **meta: Any) -> None:
        # under `session`: a `subagent_update` has a `sessionId` of its own (the child's)
        self.updates.append({"session": session_id, **_dump(update)})
        self._poke()

    def _poke(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    async def until(self, what: str, test: Any) -> None:
        """Wait until `test()` holds (checked on every update or permission request)."""
        try:
            async with asyncio.timeout(WAIT):
                while not test():
                    await self.changed.wait()
        except TimeoutError:
            raise TimeoutError(f"no {what} within {WAIT:.0f} s") from None


def _dump(model: Any) -> Any:
    if isinstance(model, BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return model


def text(body: str) -> list[schema.TextContentBlock]:
    return [schema.TextContentBlock(text=body)]


async def keyed_prompt(conn: ClientSideConnection, session_id: str, body: str, key: str) -> dict[str, Any]:
    """A keyed prompt through the SDK's own request path (its initialization gate, its
    dump, its parse of the answer as a `PromptResponse`)."""
    request = KeyedPromptRequest(session_id=session_id, prompt=text(body), idempotency_key=key)
    answer = await conn._request("session/prompt", request)  # the public prompt() cannot carry the key
    return _dump(answer)


def states(client: RecordingClient, session_id: str) -> list[str]:
    """The session's own states (a sub-agent's come on its child session's id)."""
    return [
        u["state"] for u in client.updates if u.get("sessionUpdate") == "state_update" and u["session"] == session_id
    ]


def queued(client: RecordingClient) -> bool:
    """The daemon shows a held prompt in its queue (`_meta.tether.queue`, SPEC §3.37)."""
    return any(((u.get("_meta") or {}).get("tether") or {}).get("queue") for u in client.updates)


async def initialize(conn: ClientSideConnection, summary: dict[str, Any]) -> None:
    init = await conn.initialize(
        protocol_version=2,
        info=schema.Implementation(name="tether-py-v2-conformance", version="1"),
        # Tether's opt-in for a command's live output (SPEC §4.2)
        capabilities=schema.ClientCapabilities(field_meta={"terminal_output": True}),
    )
    summary["initialize"] = _dump(init)


async def resume(conn: ClientSideConnection, client: RecordingClient, summary: dict[str, Any]) -> None:
    """The session replayed from its start; the updates up to the current `state_update`
    (the SDK may run a notification's handler after it read the answer that follows it)."""
    await initialize(conn, summary)
    summary["resumed"] = _dump(
        await conn.resume_session(session_id=RESUME, cwd=WS, replay_from=schema.ReplayFromStartVariant())
    )
    await client.until("the state after the replay", lambda: states(client, RESUME))
    summary["updates"] = client.updates


async def drive(conn: ClientSideConnection, client: RecordingClient, summary: dict[str, Any]) -> None:
    await initialize(conn, summary)
    session_id = (await conn.new_session(cwd=WS)).session_id
    summary["sessionId"] = session_id
    # answered at insertion: the turn runs on, and its edit waits for the permission
    summary["first"] = _dump(await conn.prompt(session_id=session_id, prompt=text("edit the readme, please")))
    await client.until("the permission request", lambda: client.permissions)
    key = str(uuid.uuid4())
    held = asyncio.ensure_future(keyed_prompt(conn, session_id, "then summarise it", key))
    await client.until("the held prompt in the queue", lambda: queued(client))
    retry_held = asyncio.ensure_future(keyed_prompt(conn, session_id, "then summarise it", key))
    await asyncio.sleep(0.2)  # the retry reaches the daemon while the first turn still waits
    summary["heldBeforeRelease"] = held.done() or retry_held.done()
    client.release.set()
    summary["held"], summary["retryHeld"] = await held, await retry_held
    await client.until("both turns' ends", lambda: states(client, session_id).count("idle") >= 2)
    summary["updatesAtIdle"] = len(client.updates)
    summary["retryAfter"] = await keyed_prompt(conn, session_id, "then summarise it", key)
    summary["list"] = _dump(await conn.list_sessions(cwd=WS))
    summary["close"] = _dump(await conn.close_session(session_id=session_id))


class ErrorLog(logging.Handler):
    """What the SDK logs as an error: a notification its router could not parse or handle
    ("Unhandled error while handling notification") never reaches the client otherwise."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


def sdk_parses(wire: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each daemon line through the adapter the SDK uses for it: requests and notifications
    by its `Client` routes, answers by its `Agent` method table (`initialize`: its
    `InitializeResponse`); the dump of what it made of the line, or its error."""
    requests, notifications = protocol_specs(Client)
    incoming: dict[str, TypeAdapter[Any]] = {s.method: s.request for s in requests}
    incoming.update({s.method: s.params for s in notifications})
    asked = {
        m["id"]: m["method"]
        for m in (json.loads(e["line"]) for e in wire if e["from"] == "client")
        if "method" in m and "id" in m
    }
    parsed = []
    for entry in wire:
        if entry["from"] != "daemon":
            continue
        message = json.loads(entry["line"])
        if "method" in message:
            adapter, data = incoming.get(message["method"]), message.get("params")
        elif "result" in message:
            method = asked[message["id"]]
            spec = AGENT_REQUESTS_BY_METHOD.get(method)
            adapter = TypeAdapter(schema.InitializeResponse) if method == "initialize" else spec and spec.response
            data = message["result"]
        else:
            parsed.append({"line": entry["line"], "sdk": None})  # an error answer: nothing to parse
            continue
        parsed.append({"line": entry["line"], **_through(adapter, data)})
    return parsed


def _through(adapter: TypeAdapter[Any] | None, data: Any) -> dict[str, Any]:
    if adapter is None:
        return {"sdkError": "the SDK has no route for this message"}
    try:
        value = adapter.validate_python(data)
    except ValidationError as exc:
        return {"sdkError": str(exc)}
    except Exception as exc:  # a validator of the SDK's that crashes rejects the message too
        return {"sdkError": f"{type(exc).__name__} in the SDK's validation: {exc}"}
    return {"sdk": adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)}


async def main() -> dict[str, Any]:
    summary: dict[str, Any] = {"ok": False, "sdkVersion": importlib.metadata.version("agent-client-protocol")}
    errors = ErrorLog()
    logging.getLogger().addHandler(errors)
    wire: list[dict[str, str]] = []
    daemon = await asyncio.create_subprocess_exec(
        *COMMAND, cwd=WS, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24
    )
    assert daemon.stdin is not None and daemon.stdout is not None
    from_daemon = asyncio.StreamReader(limit=1 << 24)

    async def tap() -> None:  # every line the daemon writes, recorded, then read by the SDK
        assert daemon.stdout is not None
        async for line in daemon.stdout:
            if line.strip():
                wire.append({"from": "daemon", "line": line.decode().rstrip("\n")})
            from_daemon.feed_data(line)
        from_daemon.feed_eof()

    def observe(event: Any) -> None:
        if event.direction.value == "outgoing":
            wire.append({"from": "client", "line": json.dumps(event.message)})

    tapping = asyncio.ensure_future(tap())
    client = RecordingClient()
    summary["updates"], summary["permissionRequests"] = client.updates, client.permissions  # also when it fails
    conn = ClientSideConnection(client, daemon.stdin, from_daemon, observers=[observe])
    try:
        await (resume(conn, client, summary) if RESUME else drive(conn, client, summary))
        summary["ok"] = True
    except Exception as exc:  # the summary says what failed; the test shows it
        summary["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await conn.close()
        daemon.stdin.close()
        summary["exitCode"] = await asyncio.wait_for(daemon.wait(), WAIT)
        await tapping
    summary["wire"], summary["sdkErrors"], summary["sdkParsed"] = wire, errors.records, sdk_parses(wire)
    return summary


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
