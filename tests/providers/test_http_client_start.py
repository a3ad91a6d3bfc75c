"""What building a provider's HTTP client costs the first prompt, and what it must keep.

A local model at an `http://` URL gets a client that loads no CA bundle, yet any TLS it
meets still verifies (and so fails against a certificate no CA signed); an `https://`
server or a proxy reached over TLS keeps httpx's default. The provider stack does not
import httpx's command line (click, rich, pygments), which httpx's package loads
whenever click is installed.
"""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tether.providers.http import tls_for


def test_an_http_server_gets_a_context_without_cas_that_still_verifies() -> None:
    context = tls_for("http://127.0.0.1:8080/v1", {"NO_PROXY": "localhost", "HTTP_PROXY": "http://proxy:3128"})
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0


@pytest.mark.parametrize(
    ("base_url", "env"),
    [
        ("https://api.openai.com/v1", {}),
        ("HTTPS://api.anthropic.com", {}),
        ("http://127.0.0.1:8080/v1", {"https_proxy": "https://proxy.corp:3128"}),
        ("http://127.0.0.1:8080/v1", {"ALL_PROXY": " HTTPS://proxy.corp:3128"}),
    ],
)
def test_tls_servers_and_tls_proxies_keep_httpx_s_default_verification(base_url: str, env: dict[str, str]) -> None:
    assert tls_for(base_url, env) is True


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


async def test_tls_met_with_the_plain_http_context_fails_closed(tmp_path: Path) -> None:
    """A TLS server whose certificate no CA signed: the context given to `http://` URLs refuses it."""
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(verify=tls_for("http://127.0.0.1/v1", {}), trust_env=False) as client:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(f"https://127.0.0.1:{port}/")
        trusting = ssl.create_default_context(cafile=str(cert))  # (the server does answer over TLS)
        async with httpx.AsyncClient(verify=trusting, trust_env=False) as client:
            assert (await client.get(f"https://127.0.0.1:{port}/")).text == "ok"
    finally:
        server.close()
        await server.wait_closed()


def test_the_provider_stack_does_not_import_httpx_s_command_line() -> None:
    probe = (
        "import sys, importlib.util, tether.providers.openai, tether.providers.anthropic;"
        "print(importlib.util.find_spec('click') is not None, 'httpx' in sys.modules,"
        " sorted(m for m in ('click', 'rich', 'pygments') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # click is installed (the MCP SDK's uvicorn needs it), so httpx would import it
    assert done.stdout.strip() == "True True []"
