"""A v2 window that joins a session while one of its commands runs (SPEC §12.9): a second v2
window of one shared daemon resumes the session while the command prints in the first. It
gets the command's terminal as it is now (`terminal_update` with the command, its directory
and its cancel), then its output from then on, then its exit. Real shared daemon, real
windows, a real command; every update decoded with the v2 types."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import V2Window, assert_valid

TERMINALS = {"_meta": {"terminal_output": True}}
COMMAND = "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.3; done"


async def _opened(windows, script: Path) -> V2Window:
    window = V2Window(await windows.open(script=script, initialize=False))
    await window.initialize(TERMINALS)
    return window


async def test_a_window_joining_mid_command_gets_its_terminal_first(windows, workspace: Path, tmp_path: Path):
    script = tmp_path / "command.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "run1", "name": "run_command", "arguments": {"command": COMMAND}}],
                    },
                    {"when": {"step": 2}, "text": "It ran."},
                ]
            }
        )
    )
    first, second = await _opened(windows, script), await _opened(windows, script)
    session = await first.new_session(workspace)
    await first.prompt(session, "run it")
    await until(lambda: first.of(session, "terminal_output_chunk"), timeout=30)  # the command prints

    await second.client.request("session/resume", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
    await until(lambda: "idle" in second.states(session), timeout=60)

    terminal = [u for u in second.of(session) if u.get("terminalId") == "run1"]
    started = first.of(session, "terminal_update")[0]
    assert (
        terminal[0]
        == started
        == {
            "sessionUpdate": "terminal_update",
            "terminalId": "run1",
            "command": COMMAND,
            "cwd": str(workspace),
            "capabilities": {"cancel": {}},
        }
    )
    # its current state once, then the output from the join on, then its exit
    kinds = [u["sessionUpdate"] for u in terminal]
    assert kinds[1:-1] and set(kinds[1:-1]) == {"terminal_output_chunk"} and kinds[-1] == "terminal_update"
    assert terminal[-1]["exitStatus"] == {"exitCode": 0, "signal": None}
    said = b"".join(base64.b64decode(u["data"]) for u in terminal[1:-1]).decode()
    assert said.endswith("line 10\n")
    # the state it joined in came before the terminal
    order = [u["sessionUpdate"] for u in second.of(session)]
    assert order.index("state_update") < order.index("terminal_update")
    assert_valid(second)
