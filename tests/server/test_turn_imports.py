"""What a cold `tether run` imports for its first turn: the command analysis (the shell
grammar, the runners, deny matching: ~10 ms of a cold start) only once the model asks to
run a command, and then it decides that command as it always did; the MCP servers' config
only when there are servers; each tool's module only at that tool's first call (the
model's specs come from tools/catalog.json); the hooks' points only when hooks or
ask-first are configured (a turn without them is given the no-op port, agent/hook_port.py).

Each case is a fresh process running the real `tether run` (the daemon served in-process,
the scripted provider, a real history store), with `sys.modules` printed after the turn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

COMMAND_ANALYSIS = (
    "tether.approvals.commands",
    "tether.approvals.shell_grammar",
    "tether.approvals.runners",
    "tether.approvals.deny_match",
)
# every built-in tool's module (tools/catalog.py)
TOOL_MODULES = (
    "tether.tools.read_file",
    "tether.tools.list_dir",
    "tether.tools.glob_tool",
    "tether.tools.grep",
    "tether.tools.update_plan",
    "tether.tools.write_file",
    "tether.tools.edit_file",
    "tether.tools.delete_path",
    "tether.tools.move_path",
    "tether.tools.run_command",
    "tether.tools.remember",
)

PROBE = """
import json, sys
import tether_cli
code = tether_cli.main(sys.argv[2:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=open(sys.argv[1], "w"))
"""


def _run(
    tmp_path: Path, replies: list[dict[str, object]], *flags: str, env: dict[str, str] | None = None
) -> tuple[int, set[str], str]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("a note\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": replies}))
    seen = tmp_path / "seen.json"
    argv = [
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--workspace",
        str(workspace),
        "--home",
        str(tmp_path / "home"),
        *flags,
        "go",
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(seen), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert seen.exists(), done.stderr
    got = json.loads(seen.read_text())
    return got["code"], set(got["modules"]), done.stdout


def test_a_turn_without_a_command_does_not_import_the_command_analysis(tmp_path: Path) -> None:
    code, modules, out = _run(tmp_path, [{"text": "hello"}])
    assert code == 0 and "hello" in out
    assert "tether.approvals.gate" in modules  # (the turn had its gate)
    assert sorted(m for m in COMMAND_ANALYSIS if m in modules) == []
    # nor the MCP servers' config when none is configured (the sandbox still hides their folder)
    assert "tether.config.mcp_servers" not in modules
    # nor any tool: the model was told of them all from the catalog
    assert sorted(m for m in TOOL_MODULES if m in modules) == []


def test_a_tool_call_that_is_not_a_command_does_not_import_it_either(tmp_path: Path) -> None:
    replies: list[dict[str, object]] = [
        {"when": {"step": 1}, "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"when": {"step": 2}, "text": "read it"},
    ]
    code, modules, out = _run(tmp_path, replies)
    assert code == 0 and "a note" in out and "read it" in out
    assert sorted(m for m in COMMAND_ANALYSIS if m in modules) == []
    # the tool called was imported (and worked: the note is in the output); no other tool was
    assert sorted(m for m in TOOL_MODULES if m in modules) == ["tether.tools.read_file"]


def test_the_first_command_of_a_cold_process_is_analysed_and_a_deny_rule_refuses_it(tmp_path: Path) -> None:
    # full-auto would run it; the built-in deny rule (`git push`) must still win, in the
    # first analysis of a process that had not imported the command analysis before
    replies: list[dict[str, object]] = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {"id": "c1", "name": "run_command", "arguments": {"command": "echo hi && git push origin main"}}
            ],
        },
        {"when": {"step": 2}, "text": "done"},
    ]
    code, modules, out = _run(tmp_path, replies, "--mode", "full-auto")
    assert code == 0, out
    assert "git push" in out and "never run" in out
    assert "tether.approvals.commands" in modules and "tether.approvals.deny_match" in modules


HOOK_POINTS = ("tether.hooks.points", "tether.hooks.turn_points", "tether.hooks.port", "tether.hooks.engine")
HOOK = Path(__file__).resolve().parent.parent / "hooks" / "hook_script.py"


def _tool_turn(tmp_path: Path, user_config: str) -> tuple[int, set[str], str]:
    """A full-auto turn that reads a file and writes one, under `user_config`."""
    config = tmp_path / "xdg-config" / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(user_config)
    replies: list[dict[str, object]] = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}},
                {"id": "c2", "name": "write_file", "arguments": {"path": "out.txt", "content": "written\n"}},
            ],
        },
        {"when": {"step": 2}, "text": "all done"},
    ]
    env = {**os.environ, "XDG_CONFIG_HOME": str(config.parent.parent)}
    return _run(tmp_path, replies, "--mode", "full-auto", env=env)


def test_a_turn_without_hooks_runs_its_tool_calls_through_the_no_op_port(tmp_path: Path) -> None:
    code, modules, out = _tool_turn(tmp_path, "")
    assert code == 0, out
    assert "a note" in out and "all done" in out  # the read's result reached the user
    assert (tmp_path / "ws" / "out.txt").read_text() == "written\n"  # the write was approved and applied
    assert sorted(m for m in HOOK_POINTS if m in modules) == []  # no hook point was loaded


def test_a_configured_hook_is_the_port_the_turn_calls(tmp_path: Path) -> None:
    hook = json.dumps(f"{sys.executable} {HOOK} context")  # a JSON string is a TOML basic string
    config = f'[[hooks.post_tool]]\ncommand = {hook}\nname = "colours"\ntool = "read_file"\n'
    code, modules, out = _tool_turn(tmp_path, config)
    assert code == 0, out
    assert "[hook colours (post_tool): added context for the model]" in out
    assert "| [context from hooks]\n   | The user's favourite colour is teal." in out  # in the read's result
    assert (tmp_path / "ws" / "out.txt").read_text() == "written\n"
    assert "tether.hooks.port" in modules and "tether.hooks.engine" in modules


# `tether acp` in a probe that says on stderr when the warm-up has finished, and writes
# `sys.modules` at exit
WARM_PROBE = """
import json, sys
import tether.server.context as context
warm_up = context.ClientConnection._warm_up
async def said(self):
    await warm_up(self)
    print("WARM", file=sys.stderr, flush=True)
context.ClientConnection._warm_up = said
import tether_cli
code = tether_cli.main(sys.argv[2:])
json.dump(sorted(sys.modules), open(sys.argv[1], "w"))
sys.exit(code)
"""


def test_a_warm_daemon_has_the_command_analysis_before_its_first_command(tmp_path: Path) -> None:
    # the cost left the cold turn without a command; it must not land on a warm daemon's first command
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seen = tmp_path / "seen.json"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"text": "hello"}]}))
    argv = ["acp", "--provider", "scripted", "--script", str(script), "--home", str(tmp_path / "home")]
    with subprocess.Popen(
        [sys.executable, "-c", WARM_PROBE, str(seen), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workspace,
    ) as daemon:
        assert daemon.stdin is not None and daemon.stderr is not None
        for request in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            },
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
        ):
            daemon.stdin.write(json.dumps(request) + "\n")
        daemon.stdin.flush()
        lines = []
        for line in daemon.stderr:  # until the warm-up says it is done (or the daemon ends)
            lines.append(line)
            if line.strip() == "WARM":
                break
        assert "WARM\n" in lines, "".join(lines)
        daemon.stdin.close()
        assert daemon.wait(timeout=60) == 0
    modules = set(json.loads(seen.read_text()))
    assert "tether.approvals.commands" in modules and "tether.approvals.shell_grammar" in modules
    # and every tool's module: a warm daemon's first call of a tool imports nothing
    assert sorted(m for m in TOOL_MODULES if m not in modules) == []
