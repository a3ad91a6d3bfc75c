"""Code actions on a selection or a diagnostic, and the prompts they (and `tether.ask`) send.

Owns: `textDocument/codeAction` (Ask, Explain, Fix with diagnostics) as `tether.ask` commands, the
prompt from the selected lines (open buffer, else disk: inside the workspace, bounded) and diagnostics, and the preset questions.
Must not: start turns (`front.py`) or parse command arguments (`commands.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether_protocol import InvalidParams, JsonObject, unstructure

from ...server.handshake import uri_to_path
from ...services.message_size import MIB
from ...tools.regular_files import open_regular
from ...transport.rpc import ClientRequestFailed

if TYPE_CHECKING:
    from tether_protocol import CodeActionParams

    from ...server.context import ClientConnection

ASK, EXPLAIN, FIX = "ask", "explain", "fix"
KINDS = {ASK: "refactor.tether", EXPLAIN: "refactor.tether", FIX: "quickfix.tether"}
TITLES = {ASK: "Ask Tether about this", EXPLAIN: "Explain (Tether)", FIX: "Fix this with Tether"}
QUESTIONS = (
    "What does this do?",
    "Is there a bug here?",
    "How could this be simpler?",
    "Write tests for this.",
)
MAX_LINES = 400  # of a selection, in a prompt


@dataclass(slots=True)
class Ask:
    """What `tether.ask` was given (its argument object, read by `commands.py`)."""

    prompt: str | None = None
    uri: str | None = None
    range: dict[str, dict[str, int]] | None = None  # LSP `Range`, checked
    diagnostics: list[JsonObject] = field(default_factory=list)
    kind: str = ASK


def code_actions(params: CodeActionParams) -> list[JsonObject]:
    """The actions offered on `params.range` (filtered by `context.only`)."""
    context = params.context
    diagnostics = [unstructure(d) for d in context.diagnostics]
    where = {"uri": params.text_document.uri, "range": unstructure(params.range)}
    offered = [ASK, EXPLAIN] + ([FIX] if diagnostics else [])
    actions = []
    for kind in offered:
        if context.only and not any(KINDS[kind] == o or KINDS[kind].startswith(o + ".") for o in context.only):
            continue
        argument: JsonObject = {**where, "kind": kind}
        action: JsonObject = {"title": TITLES[kind], "kind": KINDS[kind]}
        if kind == FIX:
            argument["diagnostics"] = diagnostics
            action["diagnostics"] = diagnostics
        action["command"] = {"title": TITLES[kind], "command": "tether.ask", "arguments": [argument]}
        actions.append(action)
    return actions


@dataclass(slots=True)
class Snippet:
    where: str  # `src/app.py` lines 3-5
    language: str
    text: str


def snippet(ctx: ClientConnection, root: Path, ask: Ask) -> Snippet | None:
    """The selected lines (whole lines; the diagnostics' lines for an empty selection)."""
    if ask.uri is None:
        return None
    try:
        path = uri_to_path(ask.uri)
    except InvalidParams:
        raise InvalidParams(f"invalid params for tether.ask: uri {ask.uri!r} is not a file:// URI") from None
    document = ctx.documents.get(Path(path).resolve())
    if document is not None:  # the editor's own text (sent, and held to the frame's limit, already)
        text, language = document.text, document.language_id
    else:
        text, language = _disk_text(path, root, ctx.settings.max_message_mib), ""
    first, last = _lines(ask)
    lines = text.splitlines()
    last = min(last, len(lines) - 1, first + MAX_LINES - 1)
    chosen = "\n".join(lines[first : last + 1])
    try:
        shown = str(path.resolve().relative_to(root))
    except ValueError:
        shown = str(path)
    span = f"line {first + 1}" if first >= last else f"lines {first + 1}-{last + 1}"
    return Snippet(f"`{shown}` {span}", language or path.suffix.lstrip("."), chosen)


def _disk_text(path: Path, root: Path, limit_mib: int) -> str:
    """A file the editor has not opened, read as a prompt's `resource_link` may be read: only
    inside the workspace (as the tools read it), a regular file, at most ``limit_mib`` MiB."""
    where = f"invalid params for tether.ask: {path}"
    real = path.resolve()
    if not real.is_relative_to(root):  # through a link out of it too
        raise InvalidParams(
            f"{where} is outside the workspace {root}; open it in the editor or send the prompt as text"
        )
    limit = limit_mib * MIB
    try:
        with open_regular(str(real)) as file:  # never a FIFO that would wait for a writer
            data = file.read(limit + 1)
    except OSError as exc:
        raise InvalidParams(
            f"{where} cannot be read ({exc.strerror or exc}); open it in the editor or send the prompt as text"
        ) from None
    if len(data) > limit:
        raise InvalidParams(
            f"{where} is over the limit of {limit_mib} MiB per message (max_message_mib); select the lines "
            f"in the editor, or raise max_message_mib in your user config (a workspace config cannot)"
        )
    return data.decode("utf-8", errors="replace")


def _lines(ask: Ask) -> tuple[int, int]:
    ranges = [ask.range] if ask.range else []
    if not ranges or ranges[0]["start"] == ranges[0]["end"]:
        ranges += [d["range"] for d in ask.diagnostics if isinstance(d.get("range"), dict)]
    if not ranges:
        return 0, MAX_LINES - 1
    first = min(r["start"]["line"] for r in ranges)
    last = max(
        r["end"]["line"] - (1 if r["end"]["character"] == 0 and r["end"]["line"] > r["start"]["line"] else 0)
        for r in ranges
    )
    return first, max(first, last)


def prompt_text(ask: Ask, question: str, found: Snippet | None) -> str:
    """The prompt the model gets."""
    if found is None:
        return question
    block = f"```{found.language}\n{found.text}\n```"
    if ask.kind == FIX:
        problems = "\n".join(f"- {_diagnostic(d)}" for d in ask.diagnostics) or "- (the editor named none)"
        return f"Fix this problem in {found.where} by editing the file:\n{problems}\n\n{block}"
    if ask.kind == EXPLAIN:
        return f"Explain what this code in {found.where} does:\n\n{block}"
    return f"{question}\n\nAbout {found.where}:\n\n{block}"


def _diagnostic(d: JsonObject) -> str:
    line = d.get("range", {}).get("start", {}).get("line")
    origin = " ".join(str(x) for x in (d.get("source"), d.get("code")) if x not in (None, ""))
    return (
        f"{d.get('message', '')}"
        + (f" ({origin})" if origin else "")
        + (f" at line {line + 1}" if isinstance(line, int) else "")
    )


async def choose(ctx: ClientConnection, message: str, titles: list[str]) -> str | None:
    """`window/showMessageRequest` (Info) offering ``titles``: the one picked, None when the
    user dismissed it. Raises `ClientRequestFailed` when the client cannot show it."""
    from tether_protocol import MessageActionItem, ShowMessageRequestParams

    params = ShowMessageRequestParams(3, message, [MessageActionItem(title) for title in titles])
    result = await ctx.rpc.request("window/showMessageRequest", unstructure(params))
    title = result.get("title") if isinstance(result, dict) else None
    return title if title in titles else None


async def choose_question(ctx: ClientConnection, where: str) -> str | None:
    """Ask which preset question to send; None when the user dismissed it. A client that
    cannot show the choice (MethodNotFound or another error) gets the first one."""
    try:
        return await choose(ctx, f"Tether: what should I ask about {where}?", list(QUESTIONS))
    except ClientRequestFailed:
        return QUESTIONS[0]
