"""Issue 35 item 2: tool output that looks like a secret is masked before the model sees
it (the request a real HTTP provider gets), the user gets a notice, and only the user's
own configuration turns it off."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_http import LocalHTTPServer
from test_secret_environ import _command_call, _text

GITHUB = "ghp_" + "Zq3" * 12  # built here, so this file holds no literal token
AWS_ID = "AKIA" + "QX7T" * 4
OPENAI = "sk-proj-" + "a1B2c3D4e5" * 3
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU"
    + "QUFB" * 10
    + "\n-----END OPENSSH PRIVATE KEY-----"
)
SECRETS = (GITHUB, AWS_ID, OPENAI, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU")


async def _leaky_turn(spawn_daemon, workspace: Path, env: dict[str, str]) -> tuple[list[dict], list]:
    """A command prints secrets (from a file a hostile repository ships) and ordinary code."""
    (workspace / "leak.txt").write_text(
        f"export GITHUB_TOKEN={GITHUB}\naws id {AWS_ID}\nkey: {OPENAI}\n{PEM}\ntoken = get_token()\nmax_tokens = 4096\n"
    )
    async with LocalHTTPServer() as server:
        server.queue(_command_call("cat leak.txt"), _text("Done."))
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
        daemon = await spawn_daemon(command=command, env={"OPENAI_API_KEY": "sk-fake", **env})

        async def allow(method: str, params: dict):
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        daemon.client.peer.on_request = allow
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("show me leak.txt")
        updates = [u async for u in turn]
        assert turn.stop_reason == "end_turn"
    return updates, server.requests


async def test_secrets_in_command_output_are_masked_before_the_model_sees_them(spawn_daemon, workspace: Path):
    updates, requests = await _leaky_turn(spawn_daemon, workspace, {})
    result = requests[1].body["messages"][-1]
    assert result["role"] == "tool"
    sent = result["content"]
    final = json.dumps([u for u in updates if u.get("status") in ("completed", "failed")])
    for secret in SECRETS:
        assert secret not in sent, sent
        assert secret not in final  # the result the editor keeps (the live output is the user's own view)
    for what in ("a GitHub token", "an AWS access key", "an OpenAI API key", "a private key"):
        assert f"[masked: looks like {what}]" in sent, sent
    assert "export GITHUB_TOKEN=[masked" in sent  # the rest of the line stays
    assert "token = get_token()" in sent and "max_tokens = 4096" in sent  # code is not masked
    notices = [json.dumps(u) for u in updates if u.get("_meta", {}).get("tether", {}).get("notice")]
    assert any("Tether masked 4 secrets" in n and "mask_secrets" in n for n in notices), notices


async def test_only_the_users_own_config_turns_masking_off(spawn_daemon, workspace: Path):
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text('mask_secrets = "off"\n')  # a repository's: refused
    _updates, requests = await _leaky_turn(spawn_daemon, workspace, {})
    assert GITHUB not in requests[1].body["messages"][-1]["content"]
    # the user's own environment does turn it off (so the check above can fail)
    _updates, requests = await _leaky_turn(spawn_daemon, workspace, {"TETHER_MASK_SECRETS": "off"})
    assert GITHUB in requests[1].body["messages"][-1]["content"]
