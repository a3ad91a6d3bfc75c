"""What building a provider's HTTP client costs the first prompt, and what it must keep.

A local model at an `http://` URL gets a client that loads no CA bundle; an `https://`
server's bundle is loaded in a worker thread from the moment the provider is built, and
verification fails closed: a server whose CA is not trusted is refused, and trusted once
`SSL_CERT_FILE` names its CA. Proxies come from the environment as httpx's did: a CONNECT
tunnel (a real one here) for https, NO_PROXY to bypass it, an https:// proxy refused by
name. The provider stack imports neither httpx nor httpcore.
"""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from loopback_server import Seen, answering, content_length, serving, sse_body
from test_wire import provider, text_of

from tether.providers.base import ProviderError

if TYPE_CHECKING:
    from pathlib import Path


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def _tls_server_context(tmp: Path) -> tuple[ssl.SSLContext, Path]:
    cert, key = _self_signed(tmp)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, cert


async def test_an_untrusted_tls_server_is_refused_and_trusted_through_ssl_cert_file(
    tmp_path: Path, stack: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    tls, cert = _tls_server_context(tmp_path)
    server, seen, port = await serving(answering(content_length(sse_body("over tls"))), tls=tls)
    stack.append(server)
    with pytest.raises(ProviderError, match="CERTIFICATE_VERIFY_FAILED") as refused:
        await text_of(provider(f"https://127.0.0.1:{port}/v1", stack))
    assert refused.value.kind == "connection" and seen.request_lines == []
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert await text_of(provider(f"https://127.0.0.1:{port}/v1", stack)) == "over tls"


async def test_a_certificate_for_another_host_name_is_refused(
    tmp_path: Path, stack: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    tls, cert = _tls_server_context(tmp_path)  # made out to 127.0.0.1, reached as localhost
    server, seen, port = await serving(answering(content_length(sse_body("x"))), tls=tls)
    stack.append(server)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with pytest.raises(ProviderError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
        await text_of(provider(f"https://localhost:{port}/v1", stack))
    assert seen.request_lines == []


async def _connect_proxy(seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """A real CONNECT proxy: records the request line, then pipes both ways."""
    head = await reader.readuntil(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode()
    seen.request_lines.append(line)
    host, _, port = line.split(" ")[1].rpartition(":")
    up_reader, up_writer = await asyncio.open_connection(host, int(port))
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()

    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        sink.close()

    try:
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)
    finally:
        up_writer.close()
    return False


async def test_https_goes_through_a_connect_tunnel_unless_no_proxy_names_the_host(
    tmp_path: Path, stack: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    tls, cert = _tls_server_context(tmp_path)
    target, target_seen, port = await serving(
        answering(content_length(sse_body("tunnelled")), content_length(sse_body("direct"))), tls=tls
    )
    proxy, proxy_seen, proxy_port = await serving(_connect_proxy)
    stack.extend([target, proxy])
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    monkeypatch.setenv("https_proxy", f"127.0.0.1:{proxy_port}")  # no scheme: http:// as httpx reads it
    assert await text_of(provider(f"https://127.0.0.1:{port}/v1", stack)) == "tunnelled"
    assert proxy_seen.request_lines == [f"CONNECT 127.0.0.1:{port} HTTP/1.1"]
    monkeypatch.setenv("NO_PROXY", "example.com, 127.0.0.1")
    assert await text_of(provider(f"https://127.0.0.1:{port}/v1", stack)) == "direct"
    assert len(proxy_seen.request_lines) == 1 and target_seen.connections == 2


async def test_http_through_a_proxy_sends_the_absolute_url(stack: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    proxy, seen, proxy_port = await serving(answering(content_length(sse_body("via proxy"))))
    stack.append(proxy)
    monkeypatch.setenv("ALL_PROXY", f"http://user:pw@127.0.0.1:{proxy_port}")
    assert await text_of(provider("http://model.invalid:8080/v1", stack)) == "via proxy"
    assert seen.request_lines == ["POST http://model.invalid:8080/v1/chat/completions HTTP/1.1"]


async def test_an_https_proxy_is_refused_naming_its_variable(stack: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "https://me:pa55word@proxy.corp:3128")
    with pytest.raises(ProviderError, match=r"HTTPS_PROXY='https://\*\*\*@proxy.corp:3128' is a https:// proxy") as e:
        await text_of(provider("https://api.example.invalid/v1", stack))
    assert "pa55word" not in str(e.value) and "set HTTPS_PROXY to the proxy's http:// address" in str(e.value)


def _in_a_fresh_process(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_http_provider_loads_no_ca_bundle_and_an_https_one_starts_loading_at_once() -> None:
    probe = (
        "import sys, threading;from tether.providers.openai import OpenAIProvider as P;"
        "P(model='m', base_url='http://127.0.0.1:9/v1');"
        "print([t.name for t in threading.enumerate()], 'certifi' in sys.modules);"
        "P(model='m', base_url='https://api.openai.com/v1');"
        "print([t.name for t in threading.enumerate()][1:])"
    )
    plain, tls = _in_a_fresh_process(probe).splitlines()
    assert plain == "['MainThread'] False"
    assert tls in ("['tether-tls']", "[]")  # (it may have finished already)


def test_the_provider_stack_imports_neither_httpx_nor_httpcore() -> None:
    probe = (
        "import sys, tether.providers.openai, tether.providers.anthropic, tether.providers.replay;"
        "print(sorted(m for m in ('httpx', 'httpcore', 'click', 'rich', 'pygments') if m in sys.modules))"
    )
    assert _in_a_fresh_process(probe) == "[]"
