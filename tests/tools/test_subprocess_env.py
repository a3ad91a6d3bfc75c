"""Secrets never reach a tool's subprocess."""

from __future__ import annotations

from tether.tools.subprocess_env import command_env, is_secret, scrubbed_env


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


def test_common_secret_names_are_recognised():
    for name in (
        "API_KEY",
        "SECRET_KEY",
        "PRIVATE_KEY",
        "SSH_PRIVATE_KEY",
        "DB_PASS",
        "DATABASE_URL",
        "GH_PAT",
        "NPM_AUTH",
        "NPM_AUTH_TOKEN",
        "STRIPE_KEY",
        "TOKEN",
        "token",
        "MYSQL_PWD",
        "SENTRY_DSN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        assert is_secret(name), name
    for name in ("PATH", "HOME", "LANG", "TERM", "EDITOR", "KEYBOARD_LAYOUT", "PWD", "TOKENIZERS_PARALLELISM"):
        assert not is_secret(name), name


def test_commands_get_the_core_set_and_only_what_allow_env_names():
    env = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "USER": "u",
        "LOGNAME": "u",
        "SHELL": "/bin/zsh",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "TERM": "xterm-256color",
        "OPENAI_API_KEY": "sk-1",
        "EDITOR": "vim",
        "DEPLOY_TOKEN": "t",
        "JAVA_HOME": "/opt/java",
        "LD_PRELOAD": "/evil.so",
        "TMPDIR": "/var/folders/x",
    }
    got = command_env(("DEPLOY_TOKEN", "JAVA_*"), "/tmp/private", env)
    assert got == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "USER": "u",
        "LOGNAME": "u",
        "SHELL": "/bin/zsh",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "DEPLOY_TOKEN": "t",
        "JAVA_HOME": "/opt/java",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "NO_COLOR": "1",
        "TMPDIR": "/tmp/private",
    }
    assert command_env(env={})["PATH"]  # a shell always finds the usual binaries
