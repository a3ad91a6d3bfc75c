"""Tether's settings: one set of keys, one documented precedence, one validator.

This package owns:

* :class:`Settings`, the frozen record of every configuration key, together with
  ``sources`` (which layer set each key, for ``tether doctor``) and ``refused``
  (the workspace-config keys that were ignored, as :class:`RefusedSetting`)
  (``settings.py``);
* reading the two TOML config files, the ``TETHER_*`` environment variables,
  already-parsed command-line flags and the editor's ``initializationOptions``,
  and merging them in this order (later wins) (``layers.py``)::

      defaults
        < user config       $TETHER_CONFIG, else $XDG_CONFIG_HOME/tether/config.toml,
                            else ~/.config/tether/config.toml
        < workspace config  <workspace>/.tether/config.toml (allowlisted keys only,
                            see tether.workspace_config)
        < environment       TETHER_PROVIDER, TETHER_MODEL, ... (TETHER_<KEY>)
        < flags             {"max_steps": 5, ...}; None means "not given"
        < initializationOptions   camelCase ("maxSteps") or snake_case keys

* validating every value as it enters, so that a bad value is reported with the
  key, the layer it came from, the value and what would have been accepted
  (:class:`ConfigError`): one structure of :class:`Settings`, a hook per key, for
  every layer (``values.py``).

Security rules:

* ``api_key`` is a secret. ``repr()``/``str()`` of :class:`Settings`, :func:`describe`
  and every :class:`ConfigError` show ``***`` instead of it. Nothing here writes
  it anywhere. (``dataclasses.asdict`` would still expose it; do not use that to
  log or persist settings.)
* The workspace config is someone else's file (often a cloned repository), so it may
  set only the keys on an explicit allowlist (``tether.workspace_config``): nothing
  that moves data out (``record``, ``base_url``, ``home``, ``allow_env``, the sandbox
  and network keys) or changes who answers (``provider``, ``script``, ``cassette``,
  ``api_key``). Any other key, an invalid value or a looser ``mode``/``guard`` is
  refused and ignored, listed on ``Settings.refused`` and logged as a warning; the
  rest of the file still applies and start-up goes on. A workspace's
  ``deny_commands`` add to the user's, whatever later layer sets them.

What this package must NOT do:

* import anything outside the standard library, or anything slow, when it is imported:
  the daemon's start-up path imports it (``tomllib`` and ``difflib`` are imported
  lazily, only when a file exists or an error is being worded; the values' hooks only
  when a layer has a value to validate);
* mutate ``os.environ``, create directories, or write files;
* decide defaults that belong to other components (which provider to pick when
  ``provider`` is "", the model's context window when ``context_window`` is 0,
  where the data directory lives when ``home`` is "").
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
