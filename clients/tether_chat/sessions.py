"""Sessions in the chat: the one it starts in, the picker, and the chat's own commands.

Owns: new, `--resume [ID]`, `--continue`, and `/search`, `/resume`, `/new`, `/quit`,
`/rules` (`rules.py`), over `Daemon`'s requests. Must not: send a command the daemon listed
(those go as a prompt: `/compact`, `/review`, ...) or switch sessions while a turn runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .complete import CHAT_COMMANDS
from .wire import DaemonError, JsonObject

if TYPE_CHECKING:
    from .app import ChatApp

_PICKER_ROWS = 10  # fits 80x24 with the input and the status line
Start = Callable[["ChatApp"], Awaitable[None]]


def start_with(resume: str | None, *, continue_last: bool) -> Start:
    """How the chat begins: ``resume`` is a session id, "" for the picker, None for none."""

    async def start(chat: ChatApp) -> None:
        if continue_last:
            latest = await chat.daemon.latest()
            if latest is None:
                chat.transcript.notice("[no earlier session in this workspace: a new one]")
                await chat.daemon.new_session()
                return
            await load(chat, latest)
        elif resume:
            await load(chat, resume)
        elif resume == "":
            await chat.daemon.new_session()
            await open_picker(chat)
        else:
            await chat.daemon.new_session()

    return start


async def load(chat: ChatApp, session_id: str) -> None:
    """The session replayed, each old turn followed by its end line and usage (from its run
    report; none shown when the reports do not match the replayed turns one to one)."""
    chat.transcript.notice(f"[resuming {session_id}]")
    chat.transcript.start_replay()
    try:
        await chat.daemon.load(session_id)
    finally:
        slots = chat.transcript.end_replay()
    try:
        reports = await chat.daemon.reports()
        for slot, report in zip(slots, reports if len(reports) == len(slots) else [], strict=False):
            slot.text = chat.transcript.end_text(str(report.get("stopReason") or "end_turn"), report) + "\n"
    except DaemonError:
        pass  # no numbers: the conversation alone
    finally:
        for slot in slots:
            slot.text = slot.text if slot.text is not None else ""
    chat.transcript.flush()
    chat.transcript.notice("[resumed: what follows is new]")
    chat.refresh()


async def open_picker(chat: ChatApp) -> None:
    sessions = [s for s in await chat.daemon.sessions() if s.get("sessionId") != _current_id(chat)]
    if not sessions:
        chat.transcript.notice("[no stored session to resume in this workspace]")
    else:
        when = [str(s.get("updatedAt") or "")[:16].replace("T", " ") for s in sessions]
        chat.picker = [
            _entry(s.get("sessionId"), s.get("title"), w) for s, w in zip(sessions[:100], when, strict=False)
        ]
        chat.picked = 0
    chat.refresh()


def _entry(session_id: Any, title: Any, detail: str) -> JsonObject:
    return {"sessionId": str(session_id), "title": str(title or "(untitled)"), "detail": detail}


def _current_id(chat: ChatApp) -> str | None:
    return chat.daemon.session.id if chat.daemon.session else None


def picker_text(chat: ChatApp) -> str:
    lines = ["Resume which session? (↑/↓, Enter; Esc stays in this one)"]
    shown = chat.picker or []
    first = max(0, min(chat.picked - _PICKER_ROWS // 2, len(shown) - _PICKER_ROWS))
    for n, session in enumerate(shown[first : first + _PICKER_ROWS], first):
        mark = "›" if n == chat.picked else " "
        title, detail = str(session["title"])[:44], str(session["detail"])[: 76 - 44 - 1]
        lines.append(f"{mark} {title:<44} {detail}")
    return "\n".join(lines)


def pick_move(chat: ChatApp, step: int) -> None:
    if chat.picker:
        chat.picked = (chat.picked + step) % len(chat.picker)
        chat.refresh()


def pick_done(chat: ChatApp, take: bool) -> None:
    chosen = chat.picker[chat.picked] if take and chat.picker else None
    chat.picker = None
    if chosen is not None:
        chat.spawn(switch(chat, str(chosen.get("sessionId"))))
    chat.refresh()


async def switch(chat: ChatApp, session_id: str | None) -> None:
    chat.ready = False
    try:
        if session_id is None:
            await chat.daemon.new_session()
            chat.transcript.notice("[a new session]")
        else:
            await load(chat, session_id)
    except DaemonError as exc:
        chat.transcript.notice(f"[could not open the session: {exc.message}]")
    chat.ready = True
    chat.refresh()
    chat.next_held()


def chat_command(chat: ChatApp, text: str) -> bool:
    """Run one of the chat's own commands; False for anything else (a prompt)."""
    name, _, rest = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
    if name not in CHAT_COMMANDS or any(c.get("name") == name for c in chat.transcript.commands):
        return False
    if name == "quit":
        chat.quit()
    elif name == "steer":
        if rest.strip():
            chat.send(rest.strip(), steer=True)
        else:
            chat.transcript.notice("[/steer needs the message, e.g. /steer also update the changelog]")
    elif name == "dequeue":
        chat.outbox.dequeue()
    elif not chat.ready or chat.turn is not None:
        chat.transcript.notice(f"[/{name} waits until the turn ends]")
    elif name == "search":
        chat.spawn(search(chat, rest.strip()))
    elif name == "resume":
        chat.spawn(open_picker(chat))
    elif name == "new":
        chat.spawn(switch(chat, None))
    elif name == "rules":
        from .rules import rules_command

        chat.spawn(rules_command(chat, rest.strip()))
    chat.refresh()
    return True


async def search(chat: ChatApp, query: str) -> None:
    if not query:
        chat.transcript.notice("[/search needs words to look for, e.g. /search parser bug]")
        chat.refresh()
        return
    try:
        hits = await chat.daemon.search(query)
    except DaemonError as exc:
        chat.transcript.notice(f"[search: {exc.message}]")
        hits = []
    lines = [chat.paint.style(f"{len(hits)} hits for {query!r}", "1")]
    for hit in hits[:10]:
        title = str(hit.get("sessionTitle") or hit.get("sessionId"))[:40]
        snippet = _marked(str(hit.get("snippet", "")).replace("\n", " "), chat.paint.color)
        lines.append(f"  {title} ({hit.get('role')}): {snippet}")
    chat.transcript.emit("\n".join(lines))
    _pick_from(chat, hits)
    chat.refresh()


def _pick_from(chat: ChatApp, hits: list[JsonObject]) -> None:
    """The hits' sessions (best first, each once) in the picker: Enter resumes one."""
    entries: dict[str, JsonObject] = {}
    for hit in hits:
        session_id = str(hit.get("sessionId"))
        if session_id not in entries and session_id != _current_id(chat):
            snippet = str(hit.get("snippet", "")).replace("[[", "").replace("]]", "").replace("\n", " ")
            entries[session_id] = _entry(session_id, hit.get("sessionTitle"), snippet)
    if entries:
        chat.picker, chat.picked = list(entries.values())[:100], 0
    elif hits:
        chat.transcript.notice("[every hit is in this session, above: nothing to resume]")


def _marked(snippet: str, color: bool) -> Any:
    """The search's `[[match]]` marks as bold (or left as they are without colour)."""
    if not color:
        return snippet
    return snippet.replace("[[", "\x1b[1m").replace("]]", "\x1b[0m")
