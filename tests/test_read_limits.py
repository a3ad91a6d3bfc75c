"""What commands cannot read (sandbox/credential_stores.py), who may change it (settings,
workspace config, a client's initializationOptions), the token-file filter and the
secret masker's choices (what is masked, what code is left alone)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from tether.agent.secret_mask import mask_secrets
from tether.config import ConfigError, Settings, load_settings
from tether.config.client_limits import keep_user_limits
from tether.sandbox.credential_stores import read_limits
from tether.sandbox.token_files import without_credentials

if TYPE_CHECKING:
    from pathlib import Path

ENV = {"HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg/config", "XDG_DATA_HOME": "/xdg/data"}


def test_the_defaults_cover_both_spellings_of_the_xdg_directories() -> None:
    hidden = {h.path: h.why for h in read_limits(ENV).hidden}
    assert hidden["/home/u/.ssh"] == "SSH keys"
    assert "/home/u/.config/gh" in hidden and "/xdg/config/gh" in hidden
    assert "/home/u/.local/share/keyrings" in hidden and "/xdg/data/keyrings" in hidden
    assert "/home/u/.config/google-chrome" in hidden and "/home/u/.mozilla" in hidden
    assert "/home/u/.npmrc" in read_limits(ENV).filtered


def test_allow_read_exposes_and_deny_read_wins() -> None:
    limits = read_limits(ENV, deny_read=["~/work/secrets", "/home/u/.npmrc"], allow_read=["~/.aws", "~/.npmrc"])
    hidden = {h.path: h.why for h in limits.hidden}
    assert "/home/u/.aws" not in hidden and limits.exposed == ("/home/u/.aws",)
    assert hidden["/home/u/work/secrets"] == "your deny_read"
    # allowed and denied: denied (hidden whole, not even the filtered copy)
    assert hidden["/home/u/.npmrc"] == "your deny_read" and "/home/u/.npmrc" not in limits.filtered
    # exposing `~` exposes every store under it: the user's explicit choice
    assert not [h for h in read_limits(ENV, allow_read=["~"]).hidden if h.path.startswith("/home/u/")]


def test_the_kept_limits_follow_each_input_that_names_a_path() -> None:
    """`read_limits` keeps its answer per inputs (each turn asks): a changed HOME, XDG
    directory or list is a new answer, never the one kept for the previous inputs."""
    before = read_limits(ENV, deny_read=["~/a"])
    assert read_limits(ENV, deny_read=["~/a"]) is before  # kept: the same inputs
    moved = {h.path for h in read_limits({**ENV, "HOME": "/home/v"}, deny_read=["~/a"]).hidden}
    assert "/home/v/.ssh" in moved and "/home/v/a" in moved and "/home/u/.ssh" not in moved
    xdg = {h.path for h in read_limits({**ENV, "XDG_CONFIG_HOME": "/elsewhere"}, deny_read=["~/a"]).hidden}
    assert "/elsewhere/gh" in xdg and "/xdg/config/gh" not in xdg
    denied = {h.path for h in read_limits(ENV, deny_read=["~/a", "~/b"]).hidden}
    assert "/home/u/b" in denied
    assert "/home/u/.aws" not in {h.path for h in read_limits(ENV, deny_read=["~/a"], allow_read=["~/.aws"]).hidden}


def test_read_paths_must_be_absolute_or_start_with_a_tilde(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('deny_read = ["secrets"]\n')
    with pytest.raises(ConfigError, match=r"deny_read .*absolute paths or paths starting with ~/ \('secrets'"):
        load_settings(None, env={}, user_config=config)
    config.write_text('deny_read = ["~/secrets", "/srv/keys/"]\nallow_read = ["~/.aws"]\n')
    settings = load_settings(None, env={}, user_config=config)
    assert settings.deny_read == ("~/secrets", "/srv/keys") and settings.allow_read == ("~/.aws",)


def test_a_client_may_add_to_deny_read_but_not_expose_or_unmask() -> None:
    mine = Settings(deny_read=("~/a",), allow_read=("~/.aws",))
    theirs = replace(mine, deny_read=("~/b",), allow_read=("~/.aws", "~/.ssh"), mask_secrets="off")
    kept = keep_user_limits(mine, theirs, "/u/config.toml")
    assert kept.deny_read == ("~/a", "~/b")  # added to the user's, never in their place
    assert kept.allow_read == ("~/.aws",) and kept.mask_secrets == "on"
    reasons = {item.key: item.reason for item in kept.refused}
    assert "read more of your credential stores" in reasons["allow_read"]
    assert "reach the model unmasked" in reasons["mask_secrets"]


@pytest.mark.parametrize(
    ("text", "kept", "removed"),
    [
        (
            "registry=https://r.example/\n//r.example/:_authToken=abc\n_auth=xyz\nalways-auth=true\n",
            ["registry=https://r.example/"],
            ["abc", "xyz"],
        ),
        ("[pypi]\nusername = __token__\npassword = pypi-AgEN\n", ["[pypi]", "username = __token__"], ["pypi-AgEN"]),
        (
            "[pypi]\npassword =\n    continued-s3cret\nrepository = https://upload.example/\n",
            ["[pypi]", "repository = https://upload.example/"],
            ["continued-s3cret"],
        ),
        (
            "[global]\nindex-url = https://user:hunter2@pkgs.example/simple\ntimeout = 60\n",
            ["timeout = 60"],
            ["hunter2"],
        ),
        (
            'npmRegistryServer: "https://r.example"\nnpmAuthToken: "tok"\n',
            ['npmRegistryServer: "https://r.example"'],
            ['"tok"'],
        ),
    ],
)
def test_token_files_keep_settings_and_lose_credential_lines(text: str, kept: list[str], removed: list[str]) -> None:
    filtered = without_credentials(text)
    assert all(line in filtered.splitlines() for line in kept), filtered
    assert not any(secret in filtered for secret in removed), filtered
    assert "removed by Tether's sandbox" in filtered and filtered.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("AKIA" + "Z" * 16, "an AWS access key"),
        ("aws_secret_access_key=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE1", "an AWS secret key"),
        ("ghs_" + "a1" * 18, "a GitHub token"),
        ("github_pat_" + "11AB" * 8, "a GitHub token"),
        ("sk-ant-api03-" + "x9" * 12, "an Anthropic API key"),
        ("sk-" + "Ab3" * 16, "an OpenAI API key"),
        ("xoxb-1234567890-abcdef", "a Slack token"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + "A" * 64, "a private key"),  # cut off by a head limit
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "a JWT"),
        ('"password": "Tr0ub4dor&3-horse-battery"', "a password or token"),
        ("DB_PASSWORD=c0rrectHorseBatteryStaple9", "a password or token"),
        ("DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app", "a password in a URL"),
    ],
)
def test_each_kind_of_secret_is_masked(text: str, what: str) -> None:
    masked = mask_secrets(f"before {text} after\n")
    assert f"[masked: looks like {what}]" in masked.text, masked.text
    assert masked.count == 1 and masked.masked == (what,)


@pytest.mark.parametrize(
    "code",
    [
        "token = get_token(request)",
        'password = os.environ["DB_PASSWORD"]',
        "self.auth_token = self.auth_token_provider_v2",
        "max_tokens=4096",
        'api_key: str = "${OPENAI_API_KEY}"',
        "api_key = 'xxxxxxxxxxxxxxxxxxxxxxxx'",
        "import sklearn  # sk-learn-is-a-library-name",
        "secret_sauce = compute_secret_sauce_for_everyone",
        "KEY_TOKEN_COUNT: 12345",
        "MAKIAIOSFODNN7EXAMPLEX",  # inside a longer word
        "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        "GOOGLE_APPLICATION_CREDENTIALS=/home/u/project-2024/sa.json",
        "token_url = https://auth.example.com/oauth2/token",
        "see http://localhost:8080/docs and git@github.com:org/repo.git",
    ],
)
def test_code_that_only_talks_about_secrets_is_left_alone(code: str) -> None:
    assert mask_secrets(code).text == code
