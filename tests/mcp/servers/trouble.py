"""A real MCP server (the SDK's MCPServer, formerly FastMCP) that misbehaves on request.

    python trouble.py            serve over stdio: tools below
    python trouble.py crash      write to stderr and exit 3 before the handshake
    python trouble.py hang       never answer (the client's start-up timeout)

Tools: `note` (changes a file: not a read), `read_text` (a file's text, a read), `huge` (a big answer, a read), `never` (never
answers; writes "started" to $TROUBLE_MARKER, then "cancelled" when it is cancelled), `env_names` (its environment's
variable names, a read), `grow` (adds the tool `late` and says the list changed),
`bad_schema` (its input schema is broken), `die` (exits the server, a read). A prompt `review` with a `focus` argument; a resource `trouble://notes/today`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True)
server = MCPServer("trouble")


@server.tool(description="Append a line to notes.txt in the server's directory.")
def note(text: str) -> str:
    path = Path(os.getcwd(), "notes.txt")
    with path.open("a") as out:
        out.write(text + "\n")
    return f"noted in {path}"


@server.tool(description="The text of the file at `path`, or why it cannot be read.", annotations=READ)
def read_text(path: str) -> str:
    try:
        return Path(os.path.expanduser(path)).read_text()
    except OSError as error:
        return f"cannot read {path}: {error}"


@server.tool(description="Return `lines` numbered lines.", annotations=READ)
def huge(lines: int) -> str:
    return "\n".join(f"line {i} " + "x" * 60 for i in range(lines))


@server.tool(description="Never answers.", annotations=READ)
async def never() -> str:
    marker = os.environ.get("TROUBLE_MARKER")
    if marker:
        Path(marker).write_text("started")
    try:
        await anyio.sleep_forever()
    finally:
        if marker:
            Path(marker).write_text("cancelled")
    return "unreachable"


@server.tool(description="Names of the environment variables the server has.", annotations=READ)
def env_names() -> str:
    return "\n".join(sorted(os.environ))


@server.tool(description="Exits the server.", annotations=READ)
def die() -> str:
    os._exit(7)


@server.tool(description="Adds the tool `late`.")
async def grow(ctx: Context) -> str:
    server.add_tool(late, description="Added by grow.", annotations=READ)
    await ctx.session.send_tool_list_changed()
    return "grown"


def late() -> str:
    return "late tool answered"


@server.tool(description="Has a broken schema.")
def bad_schema(x: int) -> str:
    return str(x)


server._tool_manager._tools["bad_schema"].parameters = {"type": "object", "properties": {"x": {"type": 12}}}


@server.resource("trouble://notes/today", name="today", mime_type="text/plain")
def today() -> str:
    return "Today's note: ship the MCP work."


@server.prompt(description="Review the code with a focus.")
def review(focus: str) -> str:
    return f"Please review the code, focusing on {focus}."


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "crash":
        print("trouble: cannot start, the database is missing", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(3600)
    server.run("stdio")
