"""Tests for tether.config: layer precedence, validation messages, secret handling.

Every test passes ``env=`` and ``user_config=`` explicitly so the real environment
and the real ~/.config never leak in.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.config import (
    SETTING_KEYS,
    ConfigError,
    Settings,
    apply_overrides,
    describe,
    load_settings,
    user_config_path,
)
from tether.config.settings import DEFAULT_DOMAINS

SECRET = "sk-test-0123456789abcdef"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def user_cfg(tmp_path: Path) -> Path:
    """Path of a user config file (not created until a test writes it)."""
    return tmp_path / "xdg" / "tether" / "config.toml"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def ws_cfg(workspace: Path) -> Path:
    return workspace / ".tether" / "config.toml"


def load(workspace: Path | None, user_cfg: Path, **kwargs: Any) -> Settings:
    kwargs.setdefault("env", {})
    return load_settings(workspace, user_config=user_cfg, **kwargs)


# ----------------------------------------------------------------------- defaults


def test_defaults_when_nothing_is_configured(workspace: Path, user_cfg: Path) -> None:
    settings = load(workspace, user_cfg)
    assert settings == Settings()
    assert settings.max_steps == 20
    assert settings.mode == "ask"
    assert settings.log_level == "warning"
    assert settings.provider == ""
    assert settings.sources == dict.fromkeys(SETTING_KEYS, "default")


def test_setting_keys_match_dataclass_fields() -> None:
    not_settings = ("sources", "refused", "workspace_deny_commands", "workspace_deny_read", "mcp_servers")
    fields = [f.name for f in dataclasses.fields(Settings) if f.name not in not_settings]
    assert tuple(fields) == SETTING_KEYS


def test_what_a_field_declares_is_what_every_layer_is_held_to(user_cfg: Path) -> None:
    # one declaration per key: its field's type and `setting(...)` (no table beside it)
    from tether.config.settings import ACCEPTS

    assert ACCEPTS["max_steps"].low == 1 and ACCEPTS["max_steps"].high == 1000
    with pytest.raises(ConfigError, match=r"max_steps = '1001' .* is not valid; expected an integer from 1 to 1000"):
        load(None, user_cfg, env={"TETHER_MAX_STEPS": "1001"})
    with pytest.raises(ConfigError, match=r"max_steps = 1001 .* is not valid; expected an integer from 1 to 1000"):
        load(None, user_cfg, flags={"max_steps": 1001})
    assert load(None, user_cfg, env={"TETHER_MODE": "FULL-AUTO"}).mode == "full-auto"
    with pytest.raises(ConfigError, match=r"use one of: read-only, ask, auto-edit, full-auto$"):
        load(None, user_cfg, flags={"mode": "yolo"})
    # every setting has a type a layer can write, and a rule for it
    from tether.config.values import validate

    defaults = {key: getattr(Settings(), key) for key in SETTING_KEYS}
    defaults["credentials"] = {}  # written as a table, held as "host header ENV" entries
    assert (
        validate(defaults, dict.fromkeys(defaults, "test"), strings_ok=False, base_dir=None).keys() == defaults.keys()
    )


def test_settings_is_frozen_and_hashable() -> None:
    settings = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.mode = "full-auto"  # type: ignore[misc]
    assert hash(settings) == hash(Settings())


# --------------------------------------------------------------------- precedence


def test_each_layer_overrides_the_previous(workspace: Path, user_cfg: Path) -> None:
    write(user_cfg, 'model = "from-user"\n')
    settings = load(workspace, user_cfg)
    assert (settings.model, settings.sources["model"]) == ("from-user", f"user config {user_cfg}")

    write(ws_cfg(workspace), 'model = "from-workspace"\n')
    settings = load(workspace, user_cfg)
    assert (settings.model, settings.sources["model"]) == (
        "from-workspace",
        f"workspace config {ws_cfg(workspace)}",
    )

    env = {"TETHER_MODEL": "from-env"}
    settings = load(workspace, user_cfg, env=env)
    assert (settings.model, settings.sources["model"]) == ("from-env", "env TETHER_MODEL")

    flags = {"model": "from-flag"}
    settings = load(workspace, user_cfg, env=env, flags=flags)
    assert (settings.model, settings.sources["model"]) == ("from-flag", "flag --model")

    settings = load(workspace, user_cfg, env=env, flags=flags, init_options={"model": "from-editor"})
    assert (settings.model, settings.sources["model"]) == ("from-editor", "initializationOptions")


def test_sources_track_each_key_independently(workspace: Path, user_cfg: Path) -> None:
    write(user_cfg, f'provider = "openai"\nmodel = "gpt-x"\nmax_steps = 50\napi_key = "{SECRET}"\n')
    write(ws_cfg(workspace), 'model = "ws-model"\nmode = "read-only"\n')
    settings = load(
        workspace,
        user_cfg,
        env={"TETHER_MAX_STEPS": "40", "TETHER_LOG_LEVEL": "info"},
        flags={"log_level": "debug", "mode": None, "workspace": "/ignored", "max_output_tokens": 123},
        init_options={"contextWindow": 9000, "keepUserTurns": 8},
    )
    expected = {
        "provider": ("openai", f"user config {user_cfg}"),
        "api_key": (SECRET, f"user config {user_cfg}"),
        "model": ("ws-model", f"workspace config {ws_cfg(workspace)}"),
        "mode": ("read-only", f"workspace config {ws_cfg(workspace)}"),
        "max_steps": (40, "env TETHER_MAX_STEPS"),
        "log_level": ("debug", "flag --log-level"),
        "max_output_tokens": (123, "flag --max-output-tokens"),
        "context_window": (9000, "initializationOptions"),
        "base_url": ("", "default"),
        "script": ("", "default"),
        "home": ("", "default"),
        "max_retries": (2, "default"),
        "record": ("", "default"),
        "cassette": ("", "default"),
        "deny_commands": ((), "default"),
        "allow_env": ((), "default"),
        "guard": ("warn", "default"),
        "keep_user_turns": (8, "initializationOptions"),
        "checkpoint_max_kib": (2048, "default"),
        "sandbox": ("auto", "default"),
        "network": ("off", "default"),
        "network_commands": ((), "default"),
        "allowed_domains": (DEFAULT_DOMAINS, "default"),
        "credentials": ((), "default"),
        "allow_unix_sockets": ((), "default"),
        "deny_read": ((), "default"),
        "allow_read": ((), "default"),
        "mask_secrets": ("on", "default"),
        "sandbox_auto_allow": ("on", "default"),
        "models": ((), "default"),
        "memory": ("off", "default"),
        "memory_tokens": (1_500, "default"),
        "reasoning_models": ((), "default"),
        "reviewer": ("off", "default"),
        "reviewer_model": ("", "default"),
        "reviewer_timeout": (30, "default"),
        "ask_first": ("off", "default"),
        "shared": (False, "default"),
        "shared_idle_timeout": (600, "default"),
        "delegate": ("on", "default"),
        "delegate_max_steps": (10, "default"),
        "delegate_tokens": (200_000, "default"),
        "acp_v2": ("on", "default"),
        "max_message_mib": (8, "default"),
    }
    assert {k: (getattr(settings, k), settings.sources[k]) for k in SETTING_KEYS} == expected


def test_user_config_found_via_xdg_config_home(tmp_path: Path) -> None:
    cfg = write(tmp_path / "xdg" / "tether" / "config.toml", 'model = "xdg"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    assert user_config_path(env) == (cfg, False)
    settings = load_settings(None, env=env)
    assert settings.model == "xdg"
    assert settings.sources["model"] == f"user config {cfg}"


def test_user_config_defaults_to_home_dot_config(tmp_path: Path) -> None:
    cfg = write(tmp_path / "home" / ".config" / "tether" / "config.toml", 'model = "home"\n')
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": "relative/ignored"}
    assert load_settings(None, env=env).model == "home"
    assert user_config_path(env) == (cfg, False)


def test_tether_config_env_names_the_user_config(tmp_path: Path) -> None:
    cfg = write(tmp_path / "elsewhere.toml", 'model = "named"\n')
    write(tmp_path / "xdg" / "tether" / "config.toml", 'model = "xdg"\n')
    env = {"TETHER_CONFIG": str(cfg), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    settings = load_settings(None, env=env)
    assert settings.model == "named"
    assert settings.sources["model"] == f"user config {cfg}"


def test_missing_config_files_are_fine(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "no-such-ws", env={}, user_config=tmp_path / "nope.toml")
    assert settings == Settings()


def test_missing_file_named_by_tether_config_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "typo.toml"
    with pytest.raises(ConfigError) as info:
        load_settings(None, env={"TETHER_CONFIG": str(missing)})
    assert str(missing) in str(info.value)
    assert "TETHER_CONFIG" in str(info.value)


# -------------------------------------------------------- env, flags, init options


def test_env_integers_are_parsed_and_choices_are_case_insensitive(user_cfg: Path) -> None:
    settings = load(
        None,
        user_cfg,
        env={
            "TETHER_MAX_STEPS": " 7 ",
            "TETHER_CONTEXT_WINDOW": "128000",
            "TETHER_MAX_OUTPUT_TOKENS": "0",
            "TETHER_MODE": "Full-Auto",
            "TETHER_LOG_LEVEL": "DEBUG",
            "TETHER_PROVIDER": "scripted",
        },
    )
    assert (settings.max_steps, settings.context_window, settings.max_output_tokens) == (7, 128000, 0)
    assert (settings.mode, settings.log_level, settings.provider) == ("full-auto", "debug", "scripted")


def test_empty_env_vars_count_as_unset(user_cfg: Path) -> None:
    write(user_cfg, "max_steps = 9\n")
    settings = load(None, user_cfg, env={"TETHER_MAX_STEPS": "", "TETHER_MODE": "  "})
    assert settings.max_steps == 9
    assert settings.sources["mode"] == "default"


def test_flags_accept_strings_or_ints_and_ignore_none(user_cfg: Path) -> None:
    settings = load(None, user_cfg, flags={"max_steps": "12", "context_window": 5, "model": None})
    assert (settings.max_steps, settings.context_window) == (12, 5)
    assert settings.sources["model"] == "default"


def test_init_options_accept_camel_and_snake_case(user_cfg: Path) -> None:
    settings = load(
        None,
        user_cfg,
        init_options={
            "maxSteps": 3,
            "baseUrl": "https://llm.example/v1",
            "max_output_tokens": 256,
            "logLevel": "error",
            "model": None,  # JSON null = not given
        },
    )
    assert settings.max_steps == 3
    assert settings.base_url == "https://llm.example/v1"
    assert settings.max_output_tokens == 256
    assert settings.log_level == "error"
    assert settings.sources["max_steps"] == "initializationOptions"
    assert settings.sources["model"] == "default"


def test_init_options_with_both_spellings_of_a_key_is_an_error(user_cfg: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg, init_options={"maxSteps": 3, "max_steps": 4})
    assert info.value.key == "max_steps"
    assert "maxSteps" in str(info.value) and "twice" in str(info.value)


def test_apply_overrides_adds_a_layer_after_start(user_cfg: Path) -> None:
    base = load(None, user_cfg, env={"TETHER_MODE": "read-only"})
    updated = apply_overrides(base, {"mode": "auto-edit", "maxSteps": 99}, "initializationOptions")
    assert (updated.mode, updated.max_steps) == ("auto-edit", 99)
    assert updated.sources["mode"] == "initializationOptions"
    # the original is untouched
    assert base.mode == "read-only"
    assert base.sources["mode"] == "env TETHER_MODE"
    assert apply_overrides(base, {}, "initializationOptions") == base


def test_apply_overrides_rejects_non_mapping() -> None:
    with pytest.raises(ConfigError, match="initializationOptions must be an object"):
        apply_overrides(Settings(), ["mode"], "initializationOptions")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- validation


ALL_MODES = "read-only, ask, auto-edit, full-auto"


@pytest.mark.parametrize(
    ("layer", "key", "raw", "source_label", "accepted"),
    [
        ("env", "mode", "yolo", "env TETHER_MODE", ALL_MODES),
        ("env", "max_steps", "ten", "env TETHER_MAX_STEPS", "integer from 1 to 1000"),
        ("env", "max_steps", "1001", "env TETHER_MAX_STEPS", "integer from 1 to 1000"),
        ("env", "log_level", "verbose", "env TETHER_LOG_LEVEL", "debug, info, warning, error"),
        ("user", "max_steps", "ten", "user config", "integer from 1 to 1000"),
        ("user", "max_steps", "10", "user config", "integer from 1 to 1000"),  # TOML string, not int
        ("user", "max_steps", True, "user config", "integer from 1 to 1000"),
        ("user", "provider", "gpt", "user config", "scripted, openai, anthropic, replay"),
        ("user", "model", 5, "user config", "expected a string"),
        ("user", "context_window", -1, "user config", "integer >= 0"),
        ("flags", "max_steps", 0, "flag --max-steps", "integer from 1 to 1000"),
        ("flags", "base_url", "ftp://x", "flag --base-url", "http:// or https://"),
        ("init", "maxOutputTokens", -5, "initializationOptions", "integer >= 0"),
        ("init", "mode", "yolo", "initializationOptions", ALL_MODES),
        ("init", "maxSteps", "20", "initializationOptions", "integer from 1 to 1000"),
        ("env", "keep_user_turns", "0", "env TETHER_KEEP_USER_TURNS", "integer from 1 to 100000"),
    ],
)
def test_invalid_value_message_names_key_source_value_and_accepted(
    workspace: Path, user_cfg: Path, layer: str, key: str, raw: Any, source_label: str, accepted: str
) -> None:
    snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
    kwargs: dict[str, Any] = {}
    if layer == "env":
        kwargs["env"] = {f"TETHER_{snake.upper()}": raw}
    elif layer == "user":
        toml_value = {True: "true"}.get(raw, f'"{raw}"' if isinstance(raw, str) else str(raw))
        write(user_cfg, f"{key} = {toml_value}\n")
    elif layer == "workspace":
        toml_value = f'"{raw}"' if isinstance(raw, str) else str(raw)
        write(ws_cfg(workspace), f"{key} = {toml_value}\n")
    elif layer == "flags":
        kwargs["flags"] = {key: raw}
    else:
        kwargs["init_options"] = {key: raw}

    with pytest.raises(ConfigError) as info:
        load(workspace, user_cfg, **kwargs)
    message = str(info.value)
    assert info.value.key == snake
    assert source_label in info.value.source
    assert message.startswith(f"{snake} = {raw!r} (from {info.value.source}) is not valid; ")
    assert accepted in message


def test_mode_error_message_matches_documented_wording(user_cfg: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg, env={"TETHER_MODE": "yolo"})
    assert str(info.value) == (
        "mode = 'yolo' (from env TETHER_MODE) is not valid; use one of: read-only, ask, auto-edit, full-auto"
    )
    assert (info.value.key, info.value.source) == ("mode", "env TETHER_MODE")


def test_unknown_key_in_config_file_suggests_closest_and_lists_known(user_cfg: Path) -> None:
    write(user_cfg, "max_step = 5\n")
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg)
    message = str(info.value)
    assert info.value.key == "max_step"
    assert info.value.source == f"user config {user_cfg}"
    assert "did you mean 'max_steps'?" in message
    for key in SETTING_KEYS:
        assert key in message


def test_camel_case_in_config_file_is_unknown_but_suggests_snake(workspace: Path, user_cfg: Path) -> None:
    write(user_cfg, "maxSteps = 5\n")
    with pytest.raises(ConfigError, match="did you mean 'max_steps'"):
        load(workspace, user_cfg)


def test_unknown_key_in_init_options(user_cfg: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg, init_options={"maxStep": 5})
    assert info.value.source == "initializationOptions"
    assert "did you mean 'maxSteps'?" in str(info.value)
    assert "known settings: provider, model" in str(info.value)

    with pytest.raises(ConfigError, match="unknown setting 'completely_unrelated'"):
        load(None, user_cfg, init_options={"completely_unrelated": 1})


def test_the_first_mistake_in_a_layer_is_the_one_reported(user_cfg: Path) -> None:
    # in the order the layer gives them: a bad value before an unknown key, and after it
    write(user_cfg, 'max_steps = "ten"\nmax_step = 5\nmode = "yolo"\n')
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg)
    assert info.value.key == "max_steps"
    write(user_cfg, 'mode = "ask"\nmax_step = 5\nmax_steps = "ten"\n')
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg)
    assert info.value.key == "max_step"
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg.with_name("none.toml"), init_options={"mode": "yolo", "maxSteps": 0, "max_steps": 3})
    assert info.value.key == "mode"
    with pytest.raises(ConfigError, match="max_steps is given twice"):
        load(None, user_cfg.with_name("none.toml"), init_options={"maxSteps": 3, "max_steps": 0, "mode": "yolo"})
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg.with_name("none.toml"), env={"TETHER_MODE": "yolo", "TETHER_MAX_STEPS": "ten"})
    assert info.value.key == "max_steps"  # environment variables are read in the order of SETTING_KEYS


def test_toml_syntax_error_names_the_file_and_line(workspace: Path, user_cfg: Path) -> None:
    path = write(user_cfg, 'model = "ok"\nmode = \n')
    with pytest.raises(ConfigError) as info:
        load(workspace, user_cfg)
    assert str(path) in str(info.value)
    assert "line 2" in str(info.value)
    assert info.value.source == f"user config {path}"


def test_unreadable_config_is_an_error_not_a_crash(user_cfg: Path) -> None:
    user_cfg.mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(ConfigError, match="cannot read user config"):
        load(None, user_cfg)


# -------------------------------------------------------------------------- secrets


@pytest.mark.parametrize("where", ["user", "env", "flags", "init"])
def test_api_key_accepted_outside_the_workspace(user_cfg: Path, where: str) -> None:
    kwargs: dict[str, Any] = {}
    if where == "user":
        write(user_cfg, f'api_key = "{SECRET}"\n')
    elif where == "env":
        kwargs["env"] = {"TETHER_API_KEY": SECRET}
    elif where == "flags":
        kwargs["flags"] = {"api_key": SECRET}
    else:
        kwargs["init_options"] = {"apiKey": SECRET}
    assert load(None, user_cfg, **kwargs).api_key == SECRET


def test_api_key_masked_in_repr_str_and_describe(user_cfg: Path) -> None:
    settings = load(None, user_cfg, env={"TETHER_API_KEY": SECRET})
    for text in (repr(settings), str(settings), f"{settings}", repr([settings])):
        assert SECRET not in text
        assert "api_key='***'" in text
    rows = {key: (shown, source) for key, shown, source in describe(settings)}
    assert rows["api_key"] == ("***", "env TETHER_API_KEY")
    assert SECRET not in repr(describe(settings))


def test_unset_api_key_is_shown_as_unset() -> None:
    assert "api_key=''" in repr(Settings())
    rows = {key: shown for key, shown, _ in describe(Settings())}
    assert rows["api_key"] == "(not set)"
    assert rows["max_steps"] == "20"
    assert rows["model"] == "(not set)"


def test_bad_api_key_error_does_not_echo_the_value(user_cfg: Path) -> None:
    write(user_cfg, "api_key = 12345678\n")
    with pytest.raises(ConfigError) as info:
        load(None, user_cfg)
    assert "12345678" not in str(info.value)
    assert info.value.key == "api_key"

    with pytest.raises(ConfigError) as info:
        load(None, user_cfg.with_name("none.toml"), env={"TETHER_API_KEY": SECRET + "\n"})
    assert SECRET not in str(info.value)
    assert "whitespace" in str(info.value)


def test_describe_lists_every_key_in_order(user_cfg: Path) -> None:
    settings = load(None, user_cfg, flags={"mode": "full-auto"})
    rows = describe(settings)
    assert [key for key, _, _ in rows] == list(SETTING_KEYS)
    assert ("mode", "full-auto", "flag --mode") in rows


# ---------------------------------------------------------------------------- paths


def test_relative_script_in_user_config_resolves_against_its_directory(user_cfg: Path) -> None:
    write(user_cfg, 'script = "scripts/demo.txt"\n')
    settings = load(None, user_cfg)
    assert settings.script == str(user_cfg.parent / "scripts" / "demo.txt")


def test_relative_script_from_env_and_flags_resolves_against_cwd(
    tmp_path: Path, user_cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert load(None, user_cfg, env={"TETHER_SCRIPT": "a.txt"}).script == str(cwd / "a.txt")
    assert load(None, user_cfg, flags={"script": Path("b/c.txt")}).script == str(cwd / "b" / "c.txt")


def test_relative_script_from_init_options_resolves_against_workspace(workspace: Path, user_cfg: Path) -> None:
    settings = load(workspace, user_cfg, init_options={"script": "s.txt"})
    assert settings.script == str(workspace / "s.txt")


def test_absolute_script_is_kept(tmp_path: Path, user_cfg: Path) -> None:
    target = tmp_path / "abs" / "x.txt"
    write(user_cfg, f"script = '{target}'\n")
    assert load(None, user_cfg).script == str(target)


# ------------------------------------------------------------------------ start-up


def test_import_pulls_in_no_third_party_or_lazy_modules() -> None:
    code = (
        "import sys, tether.config; "
        "print(' '.join(m for m in ('attrs', 'cattrs', 'pydantic', 'tomllib', 'difflib') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "daemon")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=root,
    )
    assert out.stdout.strip() == ""


def test_list_settings_come_from_toml_lists_or_comma_separated_env(workspace: Path, user_cfg: Path) -> None:
    write(user_cfg, 'deny_commands = ["git push", "npm publish"]\n')
    settings = load(workspace, user_cfg, env={"TETHER_ALLOW_ENV": "GITHUB_TOKEN, NPM_TOKEN"})
    assert settings.deny_commands == ("git push", "npm publish")
    assert settings.allow_env == ("GITHUB_TOKEN", "NPM_TOKEN")
    write(user_cfg, 'deny_commands = "git push"\n')
    with pytest.raises(ConfigError) as info:
        load(workspace, user_cfg)
    assert "list of strings" in str(info.value) and info.value.key == "deny_commands"


def test_a_workspace_may_make_tether_more_careful(workspace: Path, user_cfg: Path) -> None:
    write(user_cfg, 'mode = "full-auto"\n')
    write(ws_cfg(workspace), 'mode = "read-only"\ndeny_commands = ["make deploy"]\n')
    settings = load(workspace, user_cfg)
    assert settings.mode == "read-only" and settings.deny_commands == ("make deploy",)
