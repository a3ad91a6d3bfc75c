"""One MCP server connection: its transport, its session, its tools, its state.

Owns: opening the configured transport (stdio as launch.py plans it, streamable HTTP or SSE), the handshake and
tool and prompt lists within the start-up timeout, one task holding it until `stop()`, stale-list marking, calls with
their timeout (the server's elicitations meanwhile go to the caller's user), `prompts/get`, why it failed or died.
Must not: name tools for the model or convert results (`tools.py`), or tell the client anything.
"""

from __future__ import annotations

import logging
import math
import tempfile
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.shared.exceptions import MCPError

from ..tools.errors import ToolError
from .launch import LaunchRefused, LaunchSettings, plan_launch

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from mcp.client.session import ClientRequestContext

    from tether_protocol import JsonObject

    from ..config.mcp_servers import McpServerConfig
    from ..tools.base import Elicit

log = logging.getLogger("tether.mcp")

_STDERR_TAIL = 600  # characters of a failed server's stderr in its error
_RESOURCE_NOT_FOUND = -32002  # MCP's error code for resources/read of an unknown URI


class McpConnection:
    """A server's connection; `run()` is its task (the manager starts it)."""

    def __init__(self, config: McpServerConfig, launch: LaunchSettings | None = None) -> None:
        self.config = config
        self.launch = launch or LaunchSettings()
        self.unconfined = ""  # why a stdio server runs without an OS sandbox ("" when it has one)
        self.state = "starting"  # starting | ready | failed | stopped
        self.error = ""
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []
        self.tools_stale = False  # the server said its tool list changed
        self.generation = 0  # bumped each time `tools` is replaced
        self.started = anyio.Event()  # set once ready or failed
        self.finished = anyio.Event()
        self._stop = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._session: ClientSession | None = None
        self._stderr: IO[str] | None = None  # a stdio server's stderr (the end is shown when it fails)
        self._askers: list[Elicit] = []  # of the calls under way: an elicitation asks their turn's user
        self._clocks: list[anyio.CancelScope] = []  # their `tool_timeout_sec`, paused while the user answers
        self._asking = 0  # forms the user has open
        self._left: dict[anyio.CancelScope, float] = {}  # each call's seconds left when the first form opened

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    async def run(self) -> None:
        try:
            with anyio.CancelScope() as self._scope:
                await self._serve()
        except Exception as exc:  # the SDK raises groups: the first leaf says what happened
            if not self._stop.is_set():
                when = "during start-up" if self.state == "starting" else "while it ran"
                self.fail(f"it stopped {when}: {_first_leaf(exc)}")
        finally:
            if self._stop.is_set() and self.state != "failed":
                self.state = "stopped"
            elif self.state in ("starting", "ready"):
                self.fail("the connection closed" if self.state == "ready" else "it stopped during start-up")
            self._session = None
            self.started.set()
            self.finished.set()
            if self._stderr is not None:
                self._stderr.close()

    async def _serve(self) -> None:
        async with (
            self._open() as (read, write),
            ClientSession(
                read, write, message_handler=self._on_message, elicitation_callback=self._on_elicit
            ) as session,
        ):
            await session.initialize()
            self.tools = await _all_tools(session)
            self.prompts = await _all_prompts(session)
            self._session = session
            self.state = "ready"
            self.generation += 1
            self.started.set()
            await self._stop.wait()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        async with AsyncExitStack() as stack:
            if config.transport == "stdio":
                from mcp.client.stdio import StdioServerParameters, stdio_client

                launch = await anyio.to_thread.run_sync(plan_launch, config, self.launch)
                self.unconfined = launch.unconfined
                self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
                params = StdioServerParameters(command=launch.command, args=launch.args, env=launch.env, cwd=launch.cwd)
                streams = await stack.enter_async_context(stdio_client(params, errlog=self._stderr))
            elif config.transport == "sse":
                from mcp.client.sse import sse_client

                streams = await stack.enter_async_context(sse_client(config.url, headers=dict(config.headers)))
            else:
                from mcp.client.streamable_http import streamable_http_client
                from mcp.shared._httpx_utils import create_mcp_http_client

                client = await stack.enter_async_context(create_mcp_http_client(headers=dict(config.headers)))
                streams = await stack.enter_async_context(streamable_http_client(config.url, http_client=client))
            yield streams[0], streams[1]

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_stale = True
        elif isinstance(message, Exception):
            log.debug("MCP server %s: %s", self.config.name, message)

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The server's `elicitation/create`: a checked form goes to the user of the call under
        way (no call, calls of two turns, a URL, or another of its forms open: declined); a form
        Tether does not show is refused with why."""
        from .elicitation import elicit_result, form_problem, shown_schema

        # calls of two turns under way (a server the daemon shares): whose question this is is
        # unknown, so nobody is asked (one turn's calls share its asker: equal bound methods)
        if not isinstance(params, types.ElicitRequestFormParams) or len(set(self._askers)) != 1:
            return types.ElicitResult(action="decline")
        problem = form_problem(params)
        if problem is not None:
            log.warning("MCP server %s: elicitation refused: %s", self.config.name, problem)
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"Tether does not show this form: {problem}")
        if self._asking:  # one of its forms waits for the user: no flood of forms
            return types.ElicitResult(action="decline")
        self._pause_clocks()
        try:
            # its titles, descriptions and choices' names escaped; the answer read by the form as sent
            answer = await _answer(
                self._askers[-1], self.config.name, params.message, shown_schema(params.requested_schema)
            )
        finally:
            self._resume_clocks()
        return elicit_result(answer, params.requested_schema)

    def _pause_clocks(self) -> None:
        """The time the user takes to answer is not the server's: its calls' timeouts wait."""
        self._asking += 1
        if self._asking == 1:
            now = anyio.current_time()
            self._left = {clock: clock.deadline - now for clock in self._clocks}
            for clock in self._clocks:
                clock.deadline = math.inf

    def _resume_clocks(self) -> None:
        self._asking -= 1
        if self._asking == 0:
            now = anyio.current_time()
            for clock, left in self._left.items():
                clock.deadline = now + left  # (a call that ended meanwhile: its scope is gone, harmless)
            self._left = {}

    async def wait_started(self) -> None:
        """Until ready or failed; past the start-up timeout the start is abandoned."""
        with anyio.move_on_after(self.config.startup_timeout_s):
            await self.started.wait()
        if not self.started.is_set():
            self.fail(f"it did not start within {self.config.startup_timeout_s:g} s (startup_timeout_sec)")
            if self._scope is not None:
                self._scope.cancel()
            self.started.set()

    def _died(self, why: str) -> None:
        """The server is gone: failed, and its task ends (its process is reaped)."""
        self.fail(why)
        self._stop.set()

    def fail(self, why: str) -> None:
        if self.state == "failed":
            return
        self.state = "failed"
        self.error = why + self._stderr_tail()
        log.warning("MCP server %s: %s", self.config.name, self.error)

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()[-_STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ended with: {text}" if text else ""

    async def relist(self) -> None:
        """Read the tool list again (after `notifications/tools/list_changed`)."""
        session = self._session
        self.tools_stale = False
        if session is None:
            return
        try:
            with anyio.fail_after(self.config.startup_timeout_s):
                self.tools = await _all_tools(session)
            self.generation += 1
        except Exception as exc:
            log.warning("MCP server %s: listing its tools again failed: %s", self.config.name, exc)

    async def call(
        self, tool: str, arguments: Mapping[str, Any], timeout: float, elicit: Elicit | None = None
    ) -> types.CallToolResult:
        """The server's answer to `tools/call`; ToolError when there is none in time. A
        cancelled caller's request is cancelled at the server (`notifications/cancelled`);
        ``elicit`` asks the caller's user what the server asks meanwhile."""
        if elicit is None:
            return await self._call(tool, arguments, timeout)
        self._askers.append(elicit)
        try:
            return await self._call(tool, arguments, timeout)
        finally:
            self._askers.remove(elicit)

    async def _call(self, tool: str, arguments: Mapping[str, Any], timeout: float) -> types.CallToolResult:
        session = self._session
        if session is None:
            raise ToolError(f"MCP server {self.config.name} is not running ({self.error or self.state})")
        try:
            with anyio.fail_after(timeout) as clock:
                self._clocks.append(clock)
                try:
                    result = await session.call_tool(tool, dict(arguments))
                finally:
                    self._clocks.remove(clock)
        except TimeoutError:
            raise ToolError(
                f"MCP server {self.config.name} did not answer {tool} within {timeout:g} s (tool_timeout_sec); "
                f"the call was cancelled"
            ) from None
        except MCPError as exc:
            if exc.code != types.CONNECTION_CLOSED:
                raise ToolError(f"MCP server {self.config.name} refused {tool}: {exc.message}") from None
            self._died("its connection closed during a call (did it exit?)")
            raise ToolError(f"MCP server {self.config.name} stopped answering: {self.error}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError) as exc:
            self._died(f"its connection broke during a call ({type(exc).__name__})")
            raise ToolError(f"MCP server {self.config.name} stopped answering: {self.error}") from None
        if not isinstance(result, types.CallToolResult):
            raise ToolError(f"MCP server {self.config.name} answered {tool} with an unexpected result")
        return result

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
        session = self._session
        if session is None:
            raise ToolError(f"MCP server {self.config.name} is not running ({self.error or self.state})")
        with anyio.fail_after(self.config.tool_timeout_s):
            return await session.get_prompt(name, dict(arguments))

    async def read_resource(self, uri: str) -> list[tuple[str, str | None, str | None]]:
        """(uri, text, mime type) of each text content of the resource (`resources/read`);
        [] when the server has no such resource."""
        session = self._session
        if session is None or session.server_capabilities is None or session.server_capabilities.resources is None:
            return []
        try:
            with anyio.fail_after(self.config.tool_timeout_s):
                result = await session.read_resource(uri)
        except MCPError as exc:
            if exc.code in (_RESOURCE_NOT_FOUND, types.INVALID_PARAMS):
                return []
            raise
        return [(str(c.uri), c.text, c.mime_type) for c in result.contents if isinstance(c, types.TextResourceContents)]

    def stop(self) -> None:
        self._stop.set()
        if self.state == "starting" and self._scope is not None:
            self._scope.cancel()


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # pages
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def _all_prompts(session: ClientSession) -> list[types.Prompt]:
    capabilities = session.server_capabilities
    if capabilities is None or capabilities.prompts is None:
        return []
    try:
        return list((await session.list_prompts()).prompts)
    except MCPError:
        return []


def _first_leaf(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, LaunchRefused):
        return f"it was not started: {exc}"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"its command was not found ({text})"
    return f"{type(exc).__name__}: {text}"


async def _answer(asker: Elicit, server: str, message: str, schema: JsonObject) -> JsonObject:
    """The user's answer; `cancel` when the window went away with the form open. Its request
    then fails (ConnectionError): raised into the SDK's dispatcher, it would tear down the
    server's connection for every session using it."""
    from ..transport.rpc import unless_window_left

    answer = await unless_window_left(asker(server, message, schema))
    return answer if answer is not None else {"action": "cancel"}
