"""What the proxy decides before it connects: whether a window is shared, and which daemon."""

from __future__ import annotations

from pathlib import Path

from tether.config import load_settings, user_config_path
from tether.shared.proxy import daemon_key, preamble, read_preamble, split_args, user_config_file, wanted


def test_the_proxy_finds_the_user_config_where_the_settings_do(tmp_path: Path):
    for env in (
        {"HOME": str(tmp_path)},
        {"HOME": "/x", "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        {"HOME": "/x", "XDG_CONFIG_HOME": "relative"},
        {"TETHER_CONFIG": str(tmp_path / "t.toml")},
    ):
        assert user_config_file(env) == str(user_config_path(env)[0])


def test_shared_comes_from_the_flag_the_environment_or_the_user_config_only(tmp_path: Path):
    config = tmp_path / "config.toml"
    env = {"TETHER_CONFIG": str(config)}
    assert not wanted(["acp"], env)
    assert wanted(["acp", "--shared"], env) and not wanted(["acp", "--shared", "--no-shared"], env)
    assert wanted(["serve"], {**env, "TETHER_SHARED": "1"}) and not wanted(["serve"], {**env, "TETHER_SHARED": "off"})
    config.write_text("shared = true\n")
    assert wanted(["serve"], env) and not wanted(["run"], env) and not wanted(["serve", "--no-shared"], env)
    assert load_settings(None, env=env).shared is True  # a key the daemon's own settings accept
    config.write_text('shared = "yes"\n')  # not a boolean: not shared (the daemon's start names the error)
    assert not wanted(["serve"], env)


def test_windows_with_other_settings_get_other_daemons(tmp_path: Path):
    env = {"HOME": str(tmp_path)}
    flags, root, framing = split_args(["acp", "--provider", "scripted", "--script", "s.json", "-w", str(tmp_path)])
    assert flags == ["--provider", "scripted", "--script", str(Path.cwd() / "s.json")] and framing == "ndjson"
    assert root == str(tmp_path.resolve())
    key = daemon_key(flags, env)
    assert daemon_key(flags, dict(env)) == key
    assert daemon_key(flags, {**env, "OPENAI_API_KEY": "sk-other"}) != key  # never another window's key
    assert daemon_key(flags, {**env, "TETHER_MODEL": "m"}) != key
    assert daemon_key([*flags, "--model", "m"], env) != key
    assert daemon_key(flags, {**env, "TETHER_SHARED": "1"}) == key
    assert "sk-other" not in key


def test_the_preamble_carries_any_workspace_path():
    for path in ("/tmp/ws", "/tmp/with space/и ünïcode", "/tmp/\udcff-not-utf8"):
        assert read_preamble(preamble(path, "lsp").rstrip(b"\n")) == (path, "lsp")
    assert read_preamble(preamble("/tmp", None).rstrip(b"\n")) == ("/tmp", None)
    assert read_preamble(b'{"jsonrpc":"2.0"}') is None
    assert read_preamble(b"TETHER-SHARED/1 zz lsp") is None
