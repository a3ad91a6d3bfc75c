"""Tether's settings: one set of keys, one documented precedence (SPEC §9), one validator.

Owns: `Settings` with `sources` and `refused`, reading and merging the layers (later wins), and validating
every value as it enters (`ConfigError` names key, layer, value and what is accepted; `api_key` is `***`).
Must not: import anything slow or outside the stdlib at import time, touch the environment or disk, or decide
defaults that belong to other components (provider, context window, data directory). Why: decision 0006.
"""

from __future__ import annotations

from .layers import apply_overrides, load_settings, user_config_path
from .settings import (
    LOG_LEVELS,
    MODES,
    PROVIDERS,
    SANDBOXES,
    SETTING_KEYS,
    SOURCE_DEFAULT,
    SOURCE_INIT_OPTIONS,
    ConfigError,
    RefusedSetting,
    Settings,
    describe,
    no_looser_mode,
    with_extra,
)

__all__ = [
    "LOG_LEVELS",
    "MODES",
    "PROVIDERS",
    "SANDBOXES",
    "SETTING_KEYS",
    "SOURCE_DEFAULT",
    "SOURCE_INIT_OPTIONS",
    "ConfigError",
    "RefusedSetting",
    "Settings",
    "apply_overrides",
    "describe",
    "load_settings",
    "no_looser_mode",
    "user_config_path",
    "with_extra",
]
