"""Attacks on issue 35's masking of secret-looking tool output, through a real `tether
serve` talking to a real HTTP provider on 127.0.0.1 (what the model is sent is what the
server records): secrets reaching the model by routes other than a command's output, and
ordinary code that masking must leave readable (a masked line cannot be edited)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer, Reply, sse
from test_secret_environ import _chunk, _text

OPENAI = "sk-proj-" + "Qw7Er9" * 5  # built here, so this file holds no literal key
GITHUB = "ghp_" + "Mn4" * 12


def _calls(*calls: tuple[str, dict]) -> Reply:
    made = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    return Reply(chunks=sse(_chunk({"role": "assistant", "tool_calls": made}), _chunk({}, "tool_calls"), "[DONE]"))


async def _results_sent(spawn_daemon, workspace: Path, *calls: tuple[str, dict]) -> list[str]:
    """The tool results of one step as the model's provider receives them."""
    async with LocalHTTPServer() as server:
        server.queue(_calls(*calls), _text("Done."))
        command = [
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "openai",
            "--base-url",
            server.url + "/v1",
            "--model",
            "m",
            "--mode",
            "full-auto",
        ]
        daemon = await spawn_daemon(command=command, env={"OPENAI_API_KEY": "sk-fake"})

        async def allow(method: str, params: dict):
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        daemon.client.peer.on_request = allow
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("look around")
        _ = [u async for u in turn]
        assert turn.stop_reason == "end_turn"
    return [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]


async def test_secrets_read_by_the_file_tools_are_masked_too(spawn_daemon, workspace: Path):
    (workspace / ".env").write_text(f"OPENAI_API_KEY={OPENAI}\nDEBUG=1\n")
    (workspace / "deploy.json").write_text(json.dumps({"auth": {"github": GITHUB}}) + "\n")
    sent = await _results_sent(
        spawn_daemon,
        workspace,
        ("read_file", {"path": ".env"}),
        ("grep", {"pattern": "ghp_"}),
        ("read_file", {"path": "deploy.json"}),
    )
    everything = "\n".join(sent)
    assert OPENAI not in everything and GITHUB not in everything, everything
    assert "DEBUG=1" in everything and "[masked: looks like an OpenAI API key]" in everything


CODE = (
    'DEFAULTS = "max_tokens = 4096\\ntemperature = 0.2\\n"\n'
    "password_field = form.password_confirmation_input\n"
    "token = os.environ['GITHUB_TOKEN']\n"
    "secret_key_path = config_dir / 'secret.key'\n"
)


async def test_ordinary_code_read_with_read_file_is_not_masked(spawn_daemon, workspace: Path):
    """Found on this repository's own source (tests/test_workspace_config.py): a string
    holding `\\n`-separated settings was masked from `= ` to the next space."""
    (workspace / "settings.py").write_text(CODE)
    sent = await _results_sent(spawn_daemon, workspace, ("read_file", {"path": "settings.py"}))
    assert "masked" not in sent[0], sent[0]
    for line in CODE.splitlines():
        assert line in sent[0], line


async def test_a_progress_token_id_is_not_masked(spawn_daemon, workspace: Path):
    """protocol/SPEC.md's LSP progress example: a name and a short hex id is not a secret;
    a long hex value under a name still is, and so is a mixed-case one."""
    line = '{"method": "$/progress", "params": {"token": "tether/turn_74008768a59edf77"}}'
    long_hex = '{"token": "deploy/key_9f8e7d6c5b4a39281706f5e4d3c2b1a0"}'
    mixed_case = '{"token": "Deploy/Key_9f8e7d6c5b4a3928"}'
    (workspace / "trace.jsonl").write_text("\n".join((line, long_hex, mixed_case)) + "\n")
    sent = await _results_sent(spawn_daemon, workspace, ("read_file", {"path": "trace.jsonl"}))
    assert line in sent[0], sent[0]
    assert "9f8e7d6c5b4a3928" not in sent[0] and sent[0].count("[masked: looks like a password or token]") == 2


NPM = "npm_" + "Ab3Cd5Ef7Gh9" * 3
PYPI = "pypi-AgEIcHlwaS5vcmc" + "CJDk4ZTQ5YzQtN2Rm" * 4
GITLAB = "glpat-" + "xY7zW9vU5tS3rQ1pO2nM"
HUGGINGFACE = "hf_" + "KbQwErTyUiOpAsDfGhJkLzXcVbNm12"


async def test_registry_and_platform_tokens_written_without_an_equals_sign_are_masked(spawn_daemon, workspace: Path):
    """A Dockerfile's `ENV NAME value`, a CI log, `npm token list`: the value has no `=`
    before it, so only the token's own shape can give it away."""
    (workspace / "Dockerfile").write_text(
        f"FROM node:20\nENV NPM_TOKEN {NPM}\nRUN echo {PYPI} > /root/.pypirc\n# gitlab {GITLAB}\nENV HF {HUGGINGFACE}\n"
    )
    sent = await _results_sent(spawn_daemon, workspace, ("read_file", {"path": "Dockerfile"}))
    for token in (NPM, PYPI, GITLAB, HUGGINGFACE):
        assert token not in sent[0], sent[0]
    assert "FROM node:20" in sent[0]
