"""Which proxy a provider's request takes, read from the environment as httpx's trust_env read it.

The CONNECT tunnel, the absolute-form request and NO_PROXY's bypass are driven over real
sockets in test_http_client_start.py; here the rules for the names and values themselves.
"""

from __future__ import annotations

import pytest

from tether.providers.proxies import ProxyRefused, ProxyRoutes


@pytest.mark.parametrize(
    ("no_proxy", "host", "proxied"),
    [
        ("example.com", "example.com", False),
        ("example.com", "api.example.com", False),
        ("example.com", "notexample.com", True),
        (".example.com", "example.com", True),
        (".example.com", "api.example.com", False),
        ("localhost, 10.0.0.7", "10.0.0.7", False),
        ("localhost, 10.0.0.7", "10.0.0.70", True),
        ("*", "anything.invalid", False),
        ("", "api.openai.com", True),
    ],
)
def test_no_proxy_names_hosts_their_subdomains_addresses_or_everything(no_proxy: str, host: str, proxied: bool) -> None:
    routes = ProxyRoutes({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": no_proxy})
    assert (routes.proxy_for("https", host) is not None) == proxied


def test_the_scheme_s_own_variable_first_then_all_proxy_and_lower_case_wins() -> None:
    routes = ProxyRoutes(
        {"ALL_PROXY": "http://all:1", "HTTPS_PROXY": "http://upper:2", "https_proxy": "http://lower:3"}
    )
    https, http = routes.proxy_for("https", "api.example.com"), routes.proxy_for("http", "api.example.com")
    assert https is not None and (https.host, https.port, https.variable) == ("lower", 3, "https_proxy")
    assert http is not None and (http.host, http.variable) == ("all", "ALL_PROXY")


def test_http_proxy_is_ignored_under_cgi_and_a_value_without_scheme_is_http() -> None:
    assert ProxyRoutes({"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}).proxy_for("http", "h") is None
    proxy = ProxyRoutes({"http_proxy": "user:s%40cret@p:8080"}).proxy_for("http", "h")
    assert proxy is not None and (proxy.host, proxy.port) == ("p", 8080)
    assert proxy.authorization == "Basic dXNlcjpzQGNyZXQ="  # user:s@cret


def test_a_socks_proxy_is_refused_naming_the_variable() -> None:
    with pytest.raises(ProxyRefused, match="ALL_PROXY='socks5://p:1080' is a socks5:// proxy"):
        ProxyRoutes({"ALL_PROXY": "socks5://p:1080"}).proxy_for("https", "api.example.com")
