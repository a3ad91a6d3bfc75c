"""The settings record and what each key accepts: the vocabulary every layer is read into.

Owns: :class:`Settings` (every key, its default, ``sources`` and ``refused``), the tables
of what each key accepts, :class:`ConfigError` and :class:`RefusedSetting`, and the wording of a bad value
or an unknown key (secrets masked).
Must not: read files or the environment, validate values, or import anything outside the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .mcp_servers import McpServerConfig

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
    "describe",
    "no_looser_mode",
    "with_extra",
]

# Declared before Settings so the default `sources` can name every key; checked
# against the dataclass fields right after the class so the two cannot drift.
SETTING_KEYS: tuple[str, ...] = (
    "provider",
    "model",
    "models",
    "reasoning_models",
    "base_url",
    "api_key",
    "script",
    "max_steps",
    "mode",
    "home",
    "log_level",
    "context_window",
    "max_output_tokens",
    "max_retries",
    "record",
    "cassette",
    "deny_commands",
    "allow_env",
    "guard",
    "keep_user_turns",
    "checkpoint_max_kib",
    "sandbox",
    "network",
    "network_commands",
    "allowed_domains",
    "credentials",
    "allow_unix_sockets",
    "deny_read",
    "allow_read",
    "mask_secrets",
    "sandbox_auto_allow",
    "memory",
    "memory_tokens",
    "reviewer",
    "reviewer_model",
    "reviewer_timeout",
    "ask_first",
    "shared",
    "shared_idle_timeout",
    "delegate",
    "delegate_max_steps",
    "delegate_tokens",
    "acp_v2",
)

PROVIDERS: tuple[str, ...] = ("scripted", "openai", "anthropic", "replay")
MODES: tuple[str, ...] = ("read-only", "ask", "auto-edit", "full-auto")
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")
# the OS sandbox commands run in: "auto" picks bubblewrap, else Landlock; "off" runs
# them unconfined (then no mode or rule ever runs a command without asking)
SANDBOXES: tuple[str, ...] = ("auto", "bwrap", "landlock", "off")

SECRET_KEYS: frozenset[str] = frozenset({"api_key"})
# `allowed_domains` when unset: the package registries of the ecosystems Tether's users
# work in (SPEC §5.13 lists the same); the proxy allows them on ports 80 and 443
DEFAULT_DOMAINS: tuple[str, ...] = (
    "registry.npmjs.org", "registry.yarnpkg.com",  # npm, yarn, pnpm
    "pypi.org", "files.pythonhosted.org",  # pip, uv, poetry
    "crates.io", "static.crates.io", "index.crates.io",  # cargo
    "proxy.golang.org", "sum.golang.org",  # go modules
    "rubygems.org", "index.rubygems.org",  # gem, bundler
    "repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org",  # maven, gradle
    "github.com", "codeload.github.com", "objects.githubusercontent.com",
    "raw.githubusercontent.com",  # git clones and release downloads
)
# Keys that hold filesystem paths: relative values are made absolute against the
# directory of the layer that supplied them, so the meaning does not depend on
# the daemon's cwd at the moment the value is used.
PATH_KEYS: frozenset[str] = frozenset({"script", "home", "record", "cassette"})
LIST_KEYS: frozenset[str] = frozenset(
    {"deny_commands", "allow_env", "allowed_domains", "allow_unix_sockets", "models", "reasoning_models",
     "deny_read", "allow_read"}
)
CHOICES: dict[str, tuple[str, ...]] = {
    "guard": ("off", "log", "warn", "block"),
    "provider": PROVIDERS,
    "mode": MODES,
    "log_level": LOG_LEVELS,
    "sandbox": SANDBOXES,
    "network": ("off", "allowlist", "on"),
    "sandbox_auto_allow": ("off", "on"),
    "memory": ("off", "on"),
    "mask_secrets": ("off", "on"),
    "reviewer": ("off", "on"),
    "ask_first": ("off", "on"),
    "delegate": ("off", "on"),
    "acp_v2": ("off", "on"),
}
# (minimum, maximum or None for unbounded)
INT_RANGES: dict[str, tuple[int, int | None]] = {
    "max_steps": (1, 1000),
    "context_window": (0, None),
    "max_output_tokens": (0, None),
    "max_retries": (0, 10),
    "keep_user_turns": (1, 100_000),
    "memory_tokens": (100, 20_000),
    "checkpoint_max_kib": (1, 1024 * 1024),
    "reviewer_timeout": (1, 600),
    "shared_idle_timeout": (1, 7 * 24 * 3600),
    "delegate_max_steps": (1, 200),
    "delegate_tokens": (1_000, 10_000_000),
}
# true/false keys (text layers also take 1/0, on/off, yes/no)
BOOL_KEYS: frozenset[str] = frozenset({"shared"})
# from loosest to strictest
MODE_STRICTNESS = ("full-auto", "auto-edit", "ask", "read-only")

MASK = "***"
SOURCE_DEFAULT = "default"
SOURCE_INIT_OPTIONS = "initializationOptions"


def no_looser_mode(mode: str, limit: str) -> str:
    """``mode``, or ``limit`` where ``mode`` is looser: the mode a session brought in from
    elsewhere (a restored snapshot) keeps, so that it cannot grant itself more than the
    settings grant a new session. Both must be mode ids (``MODES``)."""
    return mode if MODE_STRICTNESS.index(mode) >= MODE_STRICTNESS.index(limit) else limit


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


# initializationOptions come from editor extensions written in JS/TS, where
# camelCase is the norm; both spellings are accepted there.
CAMEL_TO_KEY: dict[str, str] = {camel(k): k for k in SETTING_KEYS if camel(k) != k}


class ConfigError(Exception):
    """A configuration value (or file) that Tether cannot use.

    ``key`` is the setting concerned ("" when the whole file is at fault, e.g. a TOML
    syntax error); ``source`` is the layer label, e.g. "env TETHER_MODE" or
    "workspace config /repo/.tether/config.toml". The message never contains a
    secret's value.
    """

    key: str
    source: str

    def __init__(self, message: str, *, key: str = "", source: str = "") -> None:
        super().__init__(message)
        self.key = key
        self.source = source


class RefusedSetting(NamedTuple):
    """A workspace-config key Tether refused and ignored (for logs, doctor and editors),
    or a client's option that would have loosened the user's settings (``file`` is
    ``SOURCE_INIT_OPTIONS`` then). ``key`` is "" when the whole file was refused (it could
    not be read or parsed).
    """

    key: str
    file: str
    reason: str

    def message(self) -> str:
        if self.file == SOURCE_INIT_OPTIONS:  # a client's, not a file (config/client_limits.py)
            return f"ignored {self.key!r} in the client's initializationOptions: {self.reason}"
        what = f"{self.key!r} in" if self.key else "the whole of"
        return f"ignored {what} workspace config {self.file}: {self.reason}"


def _default_sources() -> dict[str, str]:
    return dict.fromkeys(SETTING_KEYS, SOURCE_DEFAULT)


@dataclass(frozen=True, slots=True, repr=False)
class Settings:
    """The merged configuration. Build it with :func:`~tether.config.load_settings`;
    constructing it directly skips validation."""

    provider: str = ""  # "" = not configured yet; a later component picks one
    model: str = ""
    # the model ids an editor's model picker offers (session config option "model"); () = the model alone
    models: tuple[str, ...] = ()
    # OpenAI-compatible models (fnmatch patterns) that take `reasoning_effort`, besides o1/o3/o4/gpt-5
    reasoning_models: tuple[str, ...] = ()
    base_url: str = ""
    api_key: str = ""  # SECRET: masked in repr, never written anywhere
    script: str = ""  # absolute path once loaded (see PATH_KEYS)
    max_steps: int = 20
    mode: str = "ask"
    home: str = ""  # data-dir override; "" = the platform default
    log_level: str = "warning"
    context_window: int = 0  # 0 = the model's default
    max_output_tokens: int = 0  # 0 = the model's default
    max_retries: int = 2  # provider retries of a failed request, before any output
    record: str = ""  # save every model exchange to this cassette file
    cassette: str = ""  # the cassette the `replay` provider plays back
    # command prefixes never run, whatever the mode or rules say (added to built-in ones)
    deny_commands: tuple[str, ...] = ()
    # secret-looking environment variables that commands may still see
    allow_env: tuple[str, ...] = ()
    # the input guard on user messages and tool results: off | log | warn | block
    guard: str = "warn"
    # how many of the latest user turns are sent to the model (older ones stay stored)
    keep_user_turns: int = 50
    # files larger than this (KiB) are not recorded for rewind (the tool result says so)
    checkpoint_max_kib: int = 2048
    # the OS sandbox for commands (user settings only; never from a workspace file)
    sandbox: str = "auto"
    # network for sandboxed commands: "off" unless approved per call or by a rule below;
    # "allowlist": only through Tether's proxy, to `allowed_domains` (netproxy/)
    network: str = "off"
    # command prefixes whose commands get the network in the sandbox (every part covered);
    # the table form's entries ("npm install -> registry.npmjs.org") get the proxy with
    # those domains added instead (values.py writes them so)
    network_commands: tuple[str, ...] = ()
    # hosts (`name`, `*.suffix`, either with `:port`) the proxy lets commands reach
    allowed_domains: tuple[str, ...] = DEFAULT_DOMAINS
    # "host header ENV_NAME" entries: the proxy adds that header, valued from the daemon's
    # environment, to plain HTTP requests for that host (user config only)
    credentials: tuple[str, ...] = ()
    # unix sockets (absolute paths) a command with the network may connect to; without
    # one, no command connects to any (user settings only; bubblewrap only, see SPEC §11)
    allow_unix_sockets: tuple[str, ...] = ()
    # paths commands must not read besides the credential stores (sandbox/credential_stores.py;
    # a workspace config or a client may add to it), and stores the user exposes (user only)
    deny_read: tuple[str, ...] = ()
    allow_read: tuple[str, ...] = ()
    # secret-looking text in tool results is masked before the model sees it (user only)
    mask_secrets: str = "on"
    # mode auto-edit runs a command without asking when the sandbox alone keeps it in:
    # sandboxed, no network, plain and fully seen, nothing outside the workspace named
    # (approvals/sandboxed_asking.py); a workspace or a client may only turn it off
    sandbox_auto_allow: str = "on"
    # retrieved memory: earlier sessions' messages matching each prompt are given to the
    # model (user settings only: it spends the user's tokens on the user's history)
    memory: str = "off"
    memory_tokens: int = 1_500  # the most tokens retrieved memory adds to a turn
    # the approval reviewer (hooks/reviewer.py): a second model call before a prompt is
    # shown; "" = the session's model; seconds before it counts as "ask the user"
    reviewer: str = "off"
    reviewer_model: str = ""
    reviewer_timeout: int = 30
    # ask a clarifying question instead of acting on a destructive, vague prompt
    ask_first: str = "off"
    # one background daemon per user for every window (user config, env or --shared only)
    shared: bool = False
    shared_idle_timeout: int = 600  # seconds the shared daemon lives with no client and no turn
    # the `delegate` tool (agent/subagent.py): the model may hand a task to a sub-agent; its
    # tokens are spent only when the model delegates, at most `delegate_tokens` per delegation
    delegate: str = "on"
    delegate_max_steps: int = 10  # a sub-agent's step cap (the call's `max_steps` may only lower it)
    delegate_tokens: int = 200_000  # input + output tokens one delegation may spend
    # ACP v2 (Preview) for a client that asks for it; "off": every client gets v1 (SPEC §12.1)
    acp_v2: str = "on"
    # Excluded from equality/hash: two Settings with the same values are the same
    # configuration however they were assembled (and a dict is unhashable).
    sources: dict[str, str] = field(default_factory=_default_sources, compare=False)
    # Not settings: what the workspace config tried and was refused, and the
    # deny_commands it added (kept whatever a later layer sets deny_commands to).
    refused: tuple[RefusedSetting, ...] = field(default=(), compare=False)
    workspace_deny_commands: tuple[str, ...] = field(default=(), compare=False)
    workspace_deny_read: tuple[str, ...] = field(default=(), compare=False)  # the workspace config's additions
    # the user config's [mcp_servers.NAME] tables (never a workspace file's: config/mcp_servers.py)
    mcp_servers: tuple[McpServerConfig, ...] = ()

    def __repr__(self) -> str:
        parts = []
        for key in SETTING_KEYS:
            value = getattr(self, key)
            if key in SECRET_KEYS and value:
                parts.append(f"{key}={MASK!r}")
            else:
                parts.append(f"{key}={value!r}")
        return f"Settings({', '.join(parts)})"

    __str__ = __repr__


NOT_SETTINGS = ("sources", "refused", "workspace_deny_commands", "workspace_deny_read", "mcp_servers")


def _check_keys_match_fields() -> None:
    names = tuple(name for name in Settings.__dataclass_fields__ if name not in NOT_SETTINGS)
    if names != SETTING_KEYS:  # pragma: no cover - a programming error, caught by any test run
        raise AssertionError(f"SETTING_KEYS {SETTING_KEYS} != Settings fields {names}")


_check_keys_match_fields()


def with_extra(items: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    """``items`` followed by those of ``extra`` not already in it (order kept)."""
    return tuple(items) + tuple(i for i in extra if i not in items)


def describe(settings: Settings) -> list[tuple[str, str, str]]:
    """(key, value as shown to a human with secrets masked, source) for every key."""
    rows: list[tuple[str, str, str]] = []
    for key in SETTING_KEYS:
        value = getattr(settings, key)
        if key in SECRET_KEYS:
            shown = MASK if value else "(not set)"
        elif value == "":
            shown = "(not set)"
        else:
            shown = str(value)
        rows.append((key, shown, settings.sources.get(key, SOURCE_DEFAULT)))
    return rows


# --------------------------------------------------------------------------- errors


def shown(key: str, value: object) -> str:
    """How a value appears in messages: secrets masked, long values cut."""
    if key in SECRET_KEYS:
        return repr(MASK)
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def invalid(key: str, value: object, source: str, expectation: str) -> ConfigError:
    return ConfigError(
        f"{key} = {shown(key, value)} (from {source}) is not valid; {expectation}",
        key=key,
        source=source,
    )


def concealed(key: str, source: str) -> ConfigError:
    """A secret with whitespace or control characters (they would end up in an HTTP
    header), reported without echoing the value."""
    return ConfigError(
        f"{key} (from {source}) is not valid; it contains whitespace or control characters (value not shown)",
        key=key,
        source=source,
    )


def unknown_key(key: object, source: str, *, camel_ok: bool) -> ConfigError:
    # difflib is only needed to word this message; keep it off the start-up path.
    import difflib

    name = str(key)
    candidates = list(SETTING_KEYS) + (list(CAMEL_TO_KEY) if camel_ok else [])
    # "maxSteps"/"max-steps"/"MAX_STEPS" in a TOML file: same letters, other spelling.
    squashed = {c.replace("_", "").lower(): c for c in SETTING_KEYS}
    suggestion = squashed.get(name.replace("_", "").replace("-", "").lower())
    if suggestion is not None and camel_ok and any(ch.isupper() for ch in name):
        suggestion = camel(suggestion)
    if suggestion is None:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        suggestion = close[0] if close else None
    message = f"unknown setting {name!r} in {source}"
    if suggestion:
        message += f" (did you mean {suggestion!r}?)"
    message += f"; known settings: {', '.join(SETTING_KEYS)}"
    if camel_ok:
        message += " (camelCase spellings such as maxSteps are also accepted)"
    return ConfigError(message, key=name, source=source)
