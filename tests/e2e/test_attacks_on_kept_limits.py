"""The read limits are kept between turns (path32: `sandbox/credential_stores.py` builds them
once per set of inputs): a hostile model's second prompt, after the user's credential stores
appeared in HOME since the first, must still find every one of them hidden (real bubblewrap
and Landlock, masking off so that the sandbox alone keeps them out)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

AWS, GH, NPM = "AWSCRED-LATE-51d0", "GHHOSTS-LATE-0c3e", "NPMTOKEN-LATE-a9f2"


def _plant_stores(home: Path) -> None:
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS}\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n  oauth_token: {GH}\n")
    (home / ".npmrc").write_text(f"registry=https://r.example.test/\n//r.example.test/:_authToken={NPM}\n")
    (home / "notes.txt").write_text("ordinary notes made late\n")  # not a store: the command reads it


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_stores_made_between_two_prompts_are_hidden_from_the_second(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
    backend: str,
) -> None:
    home = tmp_path / "home-user"
    home.mkdir()
    peek = "cat ~/notes.txt ~/.aws/credentials ~/.config/gh/hosts.yml ~/.npmrc; ls -a ~ ~/.config"
    script = tmp_path / "two.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"step": 2}, "text": "done"},
                    {
                        "when": {"user": "^first"},
                        "tool_calls": [{"id": "one", "name": "run_command", "arguments": {"command": peek}}],
                    },
                    {
                        "when": {"user": "^second"},
                        "tool_calls": [{"id": "two", "name": "run_command", "arguments": {"command": peek}}],
                    },
                ]
            }
        )
    )
    daemon = await spawn_daemon(
        "--mode",
        "full-auto",
        script=script,
        env={"TETHER_MASK_SECRETS": "off", "HOME": str(home), "TETHER_SANDBOX": backend},
    )

    async def allow(method: str, params: dict):
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = allow
    session = await daemon.client.new_session(workspace)
    first = [u async for u in session.prompt("first")]
    assert any(u.get("toolCallId") == "one" and u.get("status") in ("completed", "failed") for u in first), json.dumps(
        first
    )[-800:]
    _plant_stores(home)
    second = [u async for u in session.prompt("second")]
    shown = json.dumps(second)
    assert any(u.get("toolCallId") == "two" and u.get("status") in ("completed", "failed") for u in second), shown[
        -800:
    ]
    output = [b for u in second if u.get("toolCallId") == "two" for b in u.get("content") or []]
    assert "ordinary notes made late" in json.dumps(output)  # it ran, and read what it may
    for marker in (AWS, GH, NPM):
        assert marker not in shown, marker
