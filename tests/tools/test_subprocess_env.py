"""Secrets never reach a tool's subprocess."""

from __future__ import annotations

from tether.tools.subprocess_env import scrubbed_env


def test_secret_looking_variables_are_removed_and_the_rest_kept():
    env = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "OPENAI_API_KEY": "sk-1",
        "ANTHROPIC_API_KEY": "sk-2",
        "TETHER_API_KEY": "k",
        "GITHUB_TOKEN": "t",
        "MY_CLIENT_SECRET_VALUE": "s",
        "DB_PASSWORD": "p",
        "AWS_ACCESS_KEY_ID": "a",
        "LANG": "C.UTF-8",
    }
    assert scrubbed_env(env) == {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8"}


def test_an_allowlisted_variable_is_kept():
    assert scrubbed_env({"GITHUB_TOKEN": "t"}, allow=["GITHUB_TOKEN"]) == {"GITHUB_TOKEN": "t"}
