"""Allow rules on archivers and copiers (`tar`, `zip`, `rsync`, `scp`: all "read-looking"
rules a user grants) as a hostile model uses them: the file they write where the command
names it (`tar -cf FILE`, `zip FILE`, the destination of `rsync`/`scp`) must not be an
existing file or one that configures what runs. Before, `printf … > x.txt` (a new inert
file), `rsync x.txt Makefile` and `make test`, each under its allow rule, ran the model's
code unasked. End to end through `tether serve` with real bubblewrap: the copy is asked
with the reason, the user rejects it, `Makefile` is intact (the spellings, through the
gate: tests/approvals/test_allow_rules_show_what_runs.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_CONFIGURES = "`Makefile` configures what builds, tests or the agent run"


async def test_a_model_cannot_copy_its_makefile_into_place_under_allow_rules(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "Makefile").write_text("test:\n\techo ok\n")
    setup = {"s1": "printf ready", "s2": "rsync --version", "s3": "make test"}
    attack = {
        "a1": "printf 'test:\\n\\ttouch pwned_by_make\\n' > x.txt",
        "a2": "rsync x.txt Makefile",
        "a3": "make test",
    }

    def calls(commands: dict[str, str]) -> list[dict]:
        return [{"id": i, "name": "run_command", "arguments": {"command": c}} for i, c in commands.items()]

    script = tmp_path / "copies.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"user": "^set up", "step": 1}, "tool_calls": calls(setup)},
                    {"when": {"user": "^set up", "step": 2}, "text": "Ready."},
                    {"when": {"user": "^attack", "step": 1}, "tool_calls": calls(attack)},
                    {"when": {"user": "^attack", "step": 2}, "text": "Done."},
                ]
            }
        )
    )
    reasons: dict[str, str] = {}

    async def on_request(method: str, params: dict):
        call = params["toolCall"]["toolCallId"]
        reasons[call] = params["_meta"]["tether"]["reason"]
        return {"outcome": {"outcome": "selected", "optionId": "allow_always" if call in setup else "reject_once"}}

    daemon = await spawn_daemon("--mode", "ask", script=script, env={"TETHER_SANDBOX": "bwrap"})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    _ = [u async for u in session.prompt("set up")]
    assert sorted(reasons) == sorted(setup)
    reasons.clear()
    turn = session.prompt("attack")
    _ = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert reasons == {"a2": "no allow rule may approve running `rsync x.txt Makefile`: " + _CONFIGURES}
    assert (workspace / "Makefile").read_text() == "test:\n\techo ok\n"
    assert (workspace / "x.txt").exists() and not (workspace / "pwned_by_make").exists()
