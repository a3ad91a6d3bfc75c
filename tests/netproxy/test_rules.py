"""What the proxy's rules refuse: every non-public address (also hidden in IPv6 forms),
domain patterns and the port rule, and host spellings that are not hosts."""

from __future__ import annotations

import ipaddress

import pytest

from tether.netproxy.rules import address_refusal, domain_refusal, host_text


@pytest.mark.parametrize(
    "address,kind",
    [
        ("127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fd00:ec2::254", "private"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("100.64.1.1", "CGNAT"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("fe80::1", "link-local"),
        ("240.0.0.1", "is a"),
        ("::ffff:127.0.0.1", "inside IPv6"),
        ("::ffff:169.254.169.254", "inside IPv6"),
        ("2002:7f00:1::", "inside IPv6"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "inside IPv6"),  # NAT64 of 169.254.169.254
        ("192.0.2.1", "private"),  # documentation range
    ],
)
def test_non_public_addresses_are_refused(address: str, kind: str) -> None:
    reason = address_refusal(ipaddress.ip_address(address))
    assert reason is not None and kind in reason, reason


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"]
)
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) is None


def test_domain_patterns_and_ports() -> None:
    listed = ["registry.npmjs.org", "*.pypi.org", "git.example:2222", "93.184.216.34"]
    assert domain_refusal("registry.npmjs.org", 443, listed) is None
    assert domain_refusal("registry.npmjs.org", 80, listed) is None
    assert "port 22 not allowed" in (domain_refusal("registry.npmjs.org", 22, listed) or "")
    assert domain_refusal("files.pypi.org", 443, listed) is None
    assert domain_refusal("pypi.org", 443, listed) == "host not in allowed_domains"  # *.x is not x
    assert domain_refusal("evilpypi.org", 443, listed) == "host not in allowed_domains"
    assert domain_refusal("registry.npmjs.org.evil.test", 443, listed) == "host not in allowed_domains"
    assert domain_refusal("git.example", 2222, listed) is None
    assert "port 443" in (domain_refusal("git.example", 443, listed) or "")
    assert domain_refusal("93.184.216.34", 443, listed) is None
    assert domain_refusal("93.184.216.35", 443, ["*.216.35", "*.35"]) == "IP address not in allowed_domains"


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("Registry.NPMJS.org.", "registry.npmjs.org"),
        ("[::1]", "::1"),
        ("93.184.216.34", "93.184.216.34"),
        ("evil.test\r\nx", None),
        ("a b", None),
        ("user@host", None),
        ("-bad.test", None),
        ("a" * 300, None),
        ("[not-an-ip]", None),
    ],
)
def test_host_spellings(raw: str, expected: str | None) -> None:
    assert host_text(raw) == expected
