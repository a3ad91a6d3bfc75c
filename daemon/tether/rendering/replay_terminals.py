"""A stored `run_command` call's terminal, shown again on an ACP v2 replay (SPEC §12.9).

Owns: reading the stored result back into the terminal a live v2 client held (its command,
directory, output and exit status) as the three updates that build it. Must not: run
anything or change the history; the footer it reads is `tools/run_command.py`'s.
"""

from __future__ import annotations

import base64
import os
import re

from tether_protocol import JsonObject

from .acp_v2 import Update

# the footer `run_command` writes after the output (`RunCommandTool._footer`), on a line of its own
_FOOTER = re.compile(r"^(?:exit code (-?\d+)|killed by (\S+)|killed after timeout \(\d+ s\)) · [^\n]*$", re.M)


def terminal_replayed(call: JsonObject, result: JsonObject, workspace: str) -> list[Update]:
    """`terminal_update` (started), `terminal_output_chunk` (the output as stored: its head
    and tail when it was long) and `terminal_update` (its exit), or none: the call did not
    run a command (refused, or not run: no footer)."""
    text = result.get("content")
    if not isinstance(text, str):
        return []
    footer = None
    for footer in _FOOTER.finditer(text):  # the last: the output before it may hold such a line
        pass
    if footer is None:
        return []
    arguments = call.get("arguments")
    args: JsonObject = arguments if isinstance(arguments, dict) else {}
    terminal_id = call.get("id")
    cwd = os.path.normpath(os.path.join(workspace, str(args.get("cwd") or ".")))
    code, killed_by = footer.group(1), footer.group(2)
    exit_code = int(code) if code is not None else None
    # a timeout's group gets SIGTERM first (`process_group.py`); the result does not say if SIGKILL followed
    signal = None if exit_code is not None else (killed_by or "SIGTERM")
    output = base64.b64encode(text[: footer.start()].encode("utf-8", "replace")).decode("ascii")
    return [
        {"sessionUpdate": "terminal_update", "terminalId": terminal_id, "command": str(args.get("command") or ""),
         "cwd": cwd, "capabilities": {}},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": output},
        {"sessionUpdate": "terminal_update", "terminalId": terminal_id,
         "exitStatus": {"exitCode": exit_code, "signal": signal}, "capabilities": {}},
    ]
