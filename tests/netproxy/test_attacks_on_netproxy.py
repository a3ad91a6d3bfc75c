"""Attacks on `network = "allowlist"` (issue 35 item 1) through a real `tether serve`, real
bubblewrap, in a network namespace the test made (conftest.py; nothing leaves the
machine): host spellings the allowlist must not be fooled by, a proxy header that must
not travel on, a command run unasked by sandbox-aware asking that must not get the
proxy (and with it the user's injected credential), and a hostile command asking the
user about the same denied host again and again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from netns_registry import user_config

from daemon_harness import serve_command

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = "ghp_attack35_c0ffee11"
CONFIG = """
mode = "auto-edit"
sandbox = "bwrap"
network = "allowlist"
allowed_domains = ["registry.test", "*.registry.test"]
credentials = {"registry.test" = {header = "Authorization", env = "NP_TEST_TOKEN"}}
"""
# speaks to the proxy's loopback port itself
SPELLINGS = r"""
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(raw)
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except OSError:
        pass
    return got.split(b"\r\n", 1)[0].decode(errors="replace")
for name, target in [("v6-loopback", "[::1]:80"), ("v6-mapped", "[::ffff:127.0.0.1]:80"),
                     ("decimal", "2130706433:80"), ("hex", "0x7f.1:80"), ("short", "127.1:80"),
                     ("suffix", "evilregistry.test:80"), ("dotdot", "registry.test..:80"),
                     ("percent", "registry%2etest:80"), ("idna", "xn--rgistry-bya.test:80"),
                     ("zone", "[fe80::1%25lo]:80"), ("port0", "registry.test:0"),
                     ("port-big", "registry.test:65616"), ("plus", "registry.test:+80"),
                     ("space", "registry.test :80")]:
    print(name, ask(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()))
print("proxy-auth", ask(b"GET http://registry.test/proxy-auth HTTP/1.1\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
                        b"X-Probe: 1\r\n\r\n"))
print("trailing-dot", ask(b"GET http://REGISTRY.test./dot HTTP/1.1\r\n\r\n"))
import glob
for key in glob.glob("/tmp/tether-*/tls-*/*.key") + glob.glob("/run/user/*/tether/tls-*/*.key"):
    try:
        print("ca-key", key, "READ" if b"PRIVATE KEY" in open(key, "rb").read() else "empty")
    except OSError as error:
        print("ca-key", key, "refused", error.errno)
"""
FETCH = "import urllib.request\nprint(urllib.request.urlopen('http://registry.test/unasked').read().decode())\n"
FLOOD = r"""
import urllib.request
for i in range(4):
    try:
        urllib.request.urlopen("http://evil.test/flood", timeout=20)
    except Exception as exc:
        print("flood", i, type(exc).__name__)
"""
COMMANDS = {
    "spellings": "X=1 python3 spellings.py",  # an assignment: asked, then allowed once (it gets the proxy)
    "unasked": "python3 fetch.py",  # plain, fully seen: sandbox-aware asking runs it unasked
    "flood": "X=1 python3 flood.py",
}


def _script(tmp_path: Path) -> Path:
    replies: list[dict] = [
        {"when": {"step": step}, "tool_calls": [{"id": call_id, "name": "run_command", "arguments": {"command": cmd}}]}
        for step, (call_id, cmd) in enumerate(COMMANDS.items(), start=1)
    ]
    script = tmp_path / "attacks.json"
    script.write_text(json.dumps({"replies": [*replies, {"text": "done"}]}))
    return script


def _done(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def _text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


async def test_hostile_commands_against_the_allowlist_proxy(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path
) -> None:
    user_config(daemon_env, CONFIG)
    (workspace / "spellings.py").write_text(SPELLINGS)
    (workspace / "fetch.py").write_text(FETCH)
    (workspace / "flood.py").write_text(FLOOD)
    command, log = registry_namespace(serve_command(script=_script(tmp_path)))
    daemon = await spawn_daemon(command=command, env={"NP_TEST_TOKEN": f"Bearer {TOKEN}"})
    domain_asks: list[str] = []

    async def on_request(method: str, params: dict) -> dict:
        if "domain" in params.get("_meta", {}).get("tether", {}):
            domain_asks.append(params["_meta"]["tether"]["domain"])
            return {"outcome": {"outcome": "selected", "optionId": "reject_domain"}}
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("attack the proxy")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn", daemon.stderr()
    out = {call_id: _text(_done(updates, call_id)) for call_id in COMMANDS}
    requests = [json.loads(line) for line in log.read_text().splitlines()]

    lines = dict(
        line.split(" ", 1) for line in out["spellings"].splitlines() if line[:1].isalpha() and " HTTP/" in line
    )
    through = [
        name for name, status in lines.items() if " 200 " in status and name not in ("proxy-auth", "trailing-dot")
    ]
    assert not through, (through, out["spellings"])
    assert len(lines) >= 16, out["spellings"]
    seen = {r["path"]: r["headers"] for r in requests}
    assert "/proxy-auth" in seen and not any(k.lower() == "proxy-authorization" for k in seen["/proxy-auth"])
    assert "/dot" in seen  # a trailing dot and upper case are the same host (and allowed)
    assert " READ" not in out["spellings"], out["spellings"]  # the CA's key (and the host keys) stay out

    # sandbox-aware asking says "no network": the command it runs unasked must not reach
    # the allowlist (nor carry the user's credential there)
    running = [u for u in updates if u.get("toolCallId") == "unasked" and u.get("status") == "in_progress"]
    unasked = "without asking" in running[0]["_meta"]["tether"]["approvedBy"]
    assert not (unasked and "/unasked" in seen), "an unasked command used the proxy and the user's credential"

    # a denied host is asked about once per command, not once per connection
    assert domain_asks.count("evil.test") <= 1, domain_asks


async def test_allow_always_under_allowlist_says_that_its_commands_reach_the_allowed_domains(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path
) -> None:
    """The stored rule's commands get the proxy (and the credential it adds): the
    sentence the user picked must not say "no network"."""
    user_config(daemon_env, CONFIG.replace('mode = "auto-edit"', 'mode = "ask"'))
    (workspace / "fetch.py").write_text(FETCH)
    script = tmp_path / "always.json"
    call = {"name": "run_command", "arguments": {"command": "python3 fetch.py"}}
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"step": 1}, "tool_calls": [{"id": "a", **call}]},
                    {"when": {"step": 2}, "tool_calls": [{"id": "b", **call}]},
                    {"text": "done"},
                ]
            }
        )
    )
    command, _log = registry_namespace(serve_command(script=script))
    daemon = await spawn_daemon(command=command, env={"NP_TEST_TOKEN": f"Bearer {TOKEN}"})
    said: list[str] = []

    async def on_request(method: str, params: dict) -> dict:
        said.extend(o["name"] for o in params["options"] if o["optionId"] == "allow_always")
        return {"outcome": {"outcome": "selected", "optionId": "allow_always"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("fetch twice")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn", daemon.stderr()
    assert "registry ok /unasked" in _text(_done(updates, "b"))  # the rule ran it, with the proxy
    assert len(said) == 1 and "no network" not in said[0], said
    assert "allowed_domains" in said[0], said
