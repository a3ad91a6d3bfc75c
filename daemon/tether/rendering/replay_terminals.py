"""A stored `run_command` call's terminal, shown again on an ACP v2 replay (SPEC §12.9).

Owns: reading the stored result back into the terminal a live v2 client held (its command,
directory, output and exit status) as the three updates that build it. Must not: run
anything or change the history, or build an update (the live builders of `acp_v2` do); the
footer it reads is `tools/run_command.py`'s.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tether_protocol import COMMAND_FOOTER

from ..agent.sink import TerminalExited, TerminalOutput, TerminalStarted
from .acp_v2 import terminal_exited, terminal_output, terminal_started

if TYPE_CHECKING:
    from tether_protocol import JsonObject

    from .acp_v2 import Update

# the footer `run_command` writes after the output (`RunCommandTool._footer`), on a line of its own


def terminal_replayed(call: JsonObject, result: JsonObject, workspace: str) -> list[Update]:
    """`terminal_update` (started), `terminal_output_chunk` (the output as stored: its head
    and tail when it was long) and `terminal_update` (its exit), or none: the call did not
    run a command (refused, or not run: no footer)."""
    text = result.get("content")
    if not isinstance(text, str):
        return []
    footers = list(COMMAND_FOOTER.finditer(text))
    if not footers:
        return []
    footer = footers[-1]  # the last: the output before it may hold such a line
    arguments = call.get("arguments")
    args: JsonObject = arguments if isinstance(arguments, dict) else {}
    terminal_id = str(call["id"])
    cwd = os.path.normpath(os.path.join(workspace, str(args.get("cwd") or ".")))
    code, killed_by = footer.group(1), footer.group(2)
    exit_code = int(code) if code is not None else None
    # a timeout's group gets SIGTERM first (`process_group.py`); the result does not say if SIGKILL followed
    signal = None if exit_code is not None else (killed_by or "SIGTERM")
    return [
        terminal_started(TerminalStarted(terminal_id, str(args.get("command") or ""), cwd)),
        terminal_output(TerminalOutput(terminal_id, terminal_id, text[: footer.start()])),
        terminal_exited(TerminalExited(terminal_id, terminal_id, exit_code, signal)),
    ]
