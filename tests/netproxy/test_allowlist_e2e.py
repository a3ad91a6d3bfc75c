"""`network = "allowlist"` through a real `tether serve`, real bubblewrap, in a network
namespace the test made (conftest.py): an allowed domain works through the proxy (curl
plain and CONNECT, Python's urllib), an unlisted one is refused and reported to the model
and the user, names resolving to loopback, metadata and private addresses are refused
before any connection, direct TCP/UDP/DNS and unix sockets fail, a hostile command
talking to the proxy itself gets nothing more, and a credential reaches the registry
without the command ever seeing it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from netns_registry import make_certificates, user_config

from daemon_harness import serve_command

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = "ghp_np_e2e_6b1f0c9d"
CONFIG = """
mode = "full-auto"
sandbox = "bwrap"
network = "allowlist"
allowed_domains = ["registry.test", "loopback.test", "metadata.test", "lan.test", "mapped.test"]
network_commands = {"python3 fetch_other.py" = ["other.test"]}
credentials = {"registry.test" = {header = "Authorization", env = "NP_TEST_TOKEN"}}
"""
# a hostile command speaking to the proxy's loopback port itself
ATTACK = r"""
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(raw)
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except OSError:
        pass
    return got.split(b"\r\n", 1)[0].decode() + " | " + got.rsplit(b"\n", 2)[-2].decode(errors="replace")
print("forged", ask(b"GET http://registry.test/forged HTTP/1.1\r\nHost: evil.test\r\n\r\n"))
print("origin", ask(b"GET /origin HTTP/1.1\r\nHost: registry.test\r\n\r\n"))
print("literal", ask(b"CONNECT 93.184.216.34:80 HTTP/1.1\r\nHost: x\r\n\r\n"))
print("port22", ask(b"CONNECT registry.test:22 HTTP/1.1\r\n\r\n"))
print("literal-again", ask(b"CONNECT 93.184.216.34:80 HTTP/1.1\r\n\r\n"))  # its own reason, not the last one
print("smuggle", ask(b"GET http://registry.test/s HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"))
print("bare-lf", ask(b"GET http://registry.test/lf HTTP/1.1\nHost: evil.test\r\n\r\n"))
print("long", ask(b"GET http://registry.test/" + b"a" * 40000 + b" HTTP/1.1\r\n\r\n"))
print("userinfo", ask(b"GET http://registry.test@evil.test/ HTTP/1.1\r\n\r\n"))
try:
    socket.socket(socket.AF_UNIX).connect("/proc/1/root/x")
except OSError as error:
    print("unix", error.errno)
slow = socket.create_connection(("127.0.0.1", port), timeout=30)
slow.sendall(b"GET http://registry.test/slow HTTP/1.1\r\nHost: registry.test\r\n")  # and never the end
print("slowloris", slow.recv(4096).split(b"\r\n", 1)[0].decode())
try:  # the bridge (this process's parent) holds unix sockets: it must not be traceable
    open(f"/proc/{os.getppid()}/mem", "rb").close()
    print("bridge-mem", "opened")
except OSError as error:
    print("bridge-mem", error.errno)
"""
COMMANDS = {
    "plain": "curl -sS -m 10 http://registry.test/plain",
    "tunnel": "curl -sS -m 10 -p http://registry.test/tunnel",
    "urllib": "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://registry.test/urllib').read().decode())\"",
    "pip": '/usr/bin/python3 -m pip --isolated download --no-cache-dir --no-deps -d "$TMPDIR/dl" --index-url '
    'http://registry.test/simple --trusted-host registry.test demo && ls "$TMPDIR/dl"',
    "blocked": "curl -sS -m 10 http://evil.test/",
    "rebind": "for h in loopback.test metadata.test lan.test mapped.test; do curl -sS -m 10 http://$h/; done",
    "direct": (
        "curl -sS -m 3 --noproxy '*' http://93.184.216.34/direct; "
        "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('93.184.216.34', 53))\"; "
        "getent hosts example.com || echo no-dns"
    ),
    "attack": "exec python3 attack.py",  # its parent is then the bridge
    "table": "python3 fetch_other.py",
    "outside-table": "curl -sS -m 10 http://other.test/not-for-curl",
    "cred": "curl -sS -v -m 10 http://registry.test/cred 2>&1; env",
}


def _script(tmp_path: Path) -> Path:
    replies: list[dict] = [
        {"when": {"step": step}, "tool_calls": [{"id": call_id, "name": "run_command", "arguments": {"command": cmd}}]}
        for step, (call_id, cmd) in enumerate(COMMANDS.items(), start=1)
    ]
    script = tmp_path / "net.json"
    script.write_text(json.dumps({"replies": [*replies, {"text": "done"}]}))
    return script


def _tool_text(updates: list[dict], call_id: str) -> str:
    done = [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]
    return "".join(b.get("content", {}).get("text", "") for b in done.get("content") or [])


async def test_allowlist_through_the_real_sandbox(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path
) -> None:
    user_config(daemon_env, CONFIG)
    (workspace / "attack.py").write_text(ATTACK)
    (workspace / "fetch_other.py").write_text(
        "import urllib.request\nprint(urllib.request.urlopen('http://other.test/table').read().decode())\n"
    )
    command, log = registry_namespace(serve_command(script=_script(tmp_path)))
    daemon = await spawn_daemon(command=command, env={"NP_TEST_TOKEN": f"Bearer {TOKEN}"})

    asked: list[dict] = []

    async def on_request(method: str, params: dict) -> dict:  # commands the parser cannot see whole
        asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("fetch things")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn", daemon.stderr()
    out = {call_id: _tool_text(updates, call_id) for call_id in COMMANDS}
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    paths = [r["path"] for r in requests]

    assert "registry ok /plain" in out["plain"] and "registry ok /tunnel" in out["tunnel"], out
    assert "registry ok /urllib" in out["urllib"], out["urllib"]
    assert "demo-1.0-py3-none-any.whl" in out["pip"].split("Saved")[-1] and "exit code 0" in out["pip"], out["pip"]
    assert "network: blocked evil.test:80 (host not in allowed_domains)" in out["blocked"]
    notices = json.dumps([u for u in updates if u.get("sessionUpdate") == "agent_message_chunk"])
    assert "network: blocked evil.test:80" in notices
    assert not [p for p in asked if "Reach" in p["toolCall"]["title"]]  # full-auto: refused, never asked

    rebind = out["rebind"]
    assert "blocked loopback.test:80 (resolves to 127.0.0.1 is a loopback address)" in rebind, rebind
    assert "blocked metadata.test:80 (resolves to 169.254.169.254 is a link-local (cloud metadata) address)" in rebind
    assert "blocked lan.test:80 (resolves to 10.1.2.3 is a private address)" in rebind
    assert "blocked mapped.test:80" in rebind and "IPv4 127.0.0.1 inside IPv6" in rebind
    assert "could not connect" not in rebind  # refused before any connection was tried

    direct = out["direct"]
    assert "registry ok" not in direct and "no-dns" in direct and "Network is unreachable" in direct, direct
    assert "/direct" not in paths

    attack = dict(
        line.split(" ", 1)
        for line in out["attack"].splitlines()
        if " " in line
        and line.split(" ")[0]
        in (
            "forged",
            "origin",
            "literal",
            "port22",
            "smuggle",
            "bare-lf",
            "long",
            "userinfo",
            "unix",
            "slowloris",
            "bridge-mem",
            "literal-again",
        )
    )
    assert (
        "200" in attack["forged"]
        and next(r for r in requests if r["path"] == "/forged")["headers"]["Host"] == "registry.test"
    )  # the URI's host, never the forged Host header
    assert "400" in attack["origin"] and "/origin" not in paths
    assert "403" in attack["literal"] and "IP address not in allowed_domains" in attack["literal"]
    assert "403" in attack["port22"] and "port 22 not allowed" in attack["port22"]
    assert "403" in attack["literal-again"] and "IP address not in allowed_domains" in attack["literal-again"]
    assert "400" in attack["smuggle"] and "/s" not in paths
    assert "400" in attack["bare-lf"] and "400" in attack["long"] and "400" in attack["userinfo"]
    assert attack["unix"] == "1"  # EPERM: the command itself has no unix sockets
    assert attack["slowloris"] == "HTTP/1.1 400 Bad Request" and "/slow" not in paths  # cut after 10 s
    assert attack["bridge-mem"] in ("1", "13"), attack  # EPERM/EACCES: the bridge is not dumpable

    assert "registry ok /table" in out["table"]  # the table form adds other.test for that command only
    assert "blocked other.test:80 (host not in allowed_domains)" in out["outside-table"]

    cred = next(r for r in requests if r["path"] == "/cred")
    assert cred["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert "registry ok /cred" in out["cred"] and "HTTP_PROXY=http://127.0.0.1:" in out["cred"]
    assert TOKEN not in json.dumps(updates)  # not in its env, nor in the request curl built (-v)
    # a tunnel (CONNECT) to port 80 is passed through untouched (only 443 is intercepted)
    assert "Authorization" not in next(r for r in requests if r["path"] == "/tunnel")["headers"]
    assert "Authorization" not in next(r for r in requests if r["path"] == "/table")["headers"]  # other.test


async def test_a_client_cannot_widen_the_network(spawn_daemon, daemon_env, workspace: Path) -> None:
    user_config(daemon_env, 'network = "allowlist"\nallowed_domains = ["registry.test"]\n')
    daemon = await spawn_daemon(initialize=False)
    reply = await daemon.client.initialize(
        initializationOptions={
            "network": "on",
            "allowedDomains": ["registry.test", "evil.test"],
            "networkCommands": {"curl": ["evil.test"]},
            "credentials": {"evil.test": {"header": "Authorization", "env": "HOME"}},
        }
    )
    refused = {item["key"]: item["reason"] for item in reply["_meta"]["tether"]["configRefused"]}
    assert set(refused) >= {"network", "allowed_domains", "network_commands", "credentials"}, refused
    assert all("a client may only make Tether stricter" in reason for reason in refused.values())


ASKED = {
    "first": "curl -sS -m 30 http://other.test/first",
    "again": "curl -sS -m 30 http://other.test/again",
    "always": "curl -sS -m 30 http://always.test/always",
    "denied": "curl -sS -m 30 http://registry.test/denied",
}


async def test_a_held_connection_asks_and_the_answer_sticks(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path, tether_home: Path
) -> None:
    user_config(daemon_env, 'mode = "auto-edit"\nsandbox = "bwrap"\nnetwork = "allowlist"\nallowed_domains = []\n')
    script = tmp_path / "ask.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    *(
                        {
                            "when": {"step": step},
                            "tool_calls": [{"id": cid, "name": "run_command", "arguments": {"command": cmd}}],
                        }
                        for step, (cid, cmd) in enumerate(ASKED.items(), start=1)
                    ),
                    {"text": "done"},
                ]
            }
        )
    )
    command, _log = registry_namespace(serve_command(script=script))
    daemon = await spawn_daemon(command=command)
    domains: list[dict] = []
    answers = {"other.test": "allow_domain_session", "always.test": "allow_domain_always"}

    async def on_request(method: str, params: dict) -> dict:
        title = params["toolCall"]["title"]
        if not title.startswith("Reach "):
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        domains.append(params)
        host = title.split()[1].split(":")[0]
        return {"outcome": {"outcome": "selected", "optionId": answers.get(host, "reject_domain")}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("fetch")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn", daemon.stderr()
    out = {call_id: _tool_text(updates, call_id) for call_id in ASKED}
    assert [p["toolCall"]["title"].split()[1] for p in domains] == [
        "other.test:80",
        "always.test:80",
        "registry.test:80",
    ]
    first = domains[0]
    assert [o["name"] for o in first["options"]] == [
        "Allow other.test for this session",
        "Always allow other.test",
        "Deny",
    ]
    assert [o["kind"] for o in first["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert "registry ok /first" in out["first"] and "registry ok /again" in out["again"]  # asked once only
    assert "registry ok /always" in out["always"]
    assert "blocked registry.test:80 (not in allowed_domains; the user denied it)" in out["denied"]
    # "always" is the user's, in Tether's data directory, never the workspace's
    assert (tether_home / "allowed_domains").read_text() == "always.test\n"
    assert "always.test" not in "".join(p.read_text(errors="replace") for p in workspace.rglob("*") if p.is_file())


async def test_landlock_allowlist_means_no_network_and_says_so(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path
) -> None:
    user_config(
        daemon_env,
        'mode = "full-auto"\nsandbox = "landlock"\nnetwork = "allowlist"\nallowed_domains = ["registry.test"]\n',
    )
    script = tmp_path / "ll.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {
                                "id": "ll",
                                "name": "run_command",
                                "arguments": {
                                    "command": "curl -sS -m 5 http://registry.test/landlock; echo proxy=${HTTP_PROXY:-none}"
                                },
                            }
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    command, log = registry_namespace(serve_command(script=script))
    daemon = await spawn_daemon(command=command)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("fetch")
    updates = [u async for u in turn]
    text = _tool_text(updates, "ll")
    assert "proxy=none" in text and "registry ok" not in text, text
    assert "allowlist mode needs bubblewrap" in text and "ran without the network" in text
    assert not log.exists() or "/landlock" not in log.read_text()


def test_doctor_shows_the_network(daemon_env, workspace: Path) -> None:
    user_config(daemon_env, CONFIG)
    env = {**daemon_env, "NP_TEST_TOKEN": TOKEN}
    text = subprocess.run(
        [sys.executable, "-m", "tether", "doctor"], env=env, cwd=workspace, capture_output=True, text=True, timeout=60
    ).stdout
    assert "network: allowlist · no direct network (own network namespace" in text, text
    assert "  allowed domains: registry.test, loopback.test" in text
    assert "  python3 fetch_other.py: proxy, plus other.test" in text
    assert (
        "  credential for registry.test: Authorization from $NP_TEST_TOKEN (set; http, and https through Tether's CA)"
        in text
    )
    assert TOKEN not in text  # never the value


async def test_an_https_credential_is_added_inside_the_tunnel_only_for_its_host(
    spawn_daemon, daemon_env, registry_namespace, workspace: Path, tmp_path: Path
) -> None:
    ca, cert, key = make_certificates(tmp_path)
    user_config(
        daemon_env,
        'mode = "full-auto"\nsandbox = "bwrap"\nnetwork = "allowlist"\n'
        'allowed_domains = ["registry.test", "other.test"]\n'
        'credentials = {"registry.test" = {header = "Authorization", env = "NP_TEST_TOKEN"}}\n',
    )
    calls = {
        "secure": "curl -sS -m 20 https://registry.test/secure; env",
        "urllib": "python3 -c \"import urllib.request; print(urllib.request.urlopen('https://registry.test/py').read())\"",
        "passthrough": f"curl -sS -m 20 --cacert {ca} https://other.test/passthrough",
    }
    script = tmp_path / "tls.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    *(
                        {
                            "when": {"step": step},
                            "tool_calls": [{"id": cid, "name": "run_command", "arguments": {"command": cmd}}],
                        }
                        for step, (cid, cmd) in enumerate(calls.items(), start=1)
                    ),
                    {"text": "done"},
                ]
            }
        )
    )
    command, log = registry_namespace(serve_command(script=script), (cert, key))
    # the daemon (the proxy's own TLS client) trusts the test registry's CA; commands do not
    daemon = await spawn_daemon(command=command, env={"NP_TEST_TOKEN": f"Bearer {TOKEN}", "SSL_CERT_FILE": str(ca)})

    async def on_request(method: str, params: dict) -> dict:
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("fetch")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn", daemon.stderr()
    out = {cid: _tool_text(updates, cid) for cid in calls}
    requests = {json.loads(line)["path"]: json.loads(line)["headers"] for line in log.read_text().splitlines()}
    assert "registry ok /secure" in out["secure"] and "SSL_CERT_FILE=" in out["secure"], out["secure"]
    assert requests["/secure"]["Authorization"] == f"Bearer {TOKEN}"
    assert "registry ok /py" in out["urllib"] and requests["/py"]["Authorization"] == f"Bearer {TOKEN}"
    # another host's tunnel is untouched: the registry's own certificate, no header
    assert "registry ok /passthrough" in out["passthrough"], out["passthrough"]
    assert "Authorization" not in requests["/passthrough"]
    assert TOKEN not in json.dumps(updates)
