"""The settings record and what each key accepts: the vocabulary every layer is read into.

Owns: :class:`Settings` (every key, its default and what it accepts: ``setting()`` on its field, read
back as ``SETTING_KEYS``, ``ACCEPTS``, ...), :class:`ConfigError`, :class:`RefusedSetting`, and the
wording of a bad value or an unknown key (secrets masked).
Must not: read files or the environment, validate values, or import anything outside the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .mcp_servers import McpServerConfig

__all__ = [
    "LOG_LEVELS",
    "MODES",
    "MODE_CHOICES",
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

PROVIDERS: tuple[str, ...] = ("scripted", "openai", "anthropic", "replay")
# each mode's id, its name and what it allows, as a client shows them (`modes`, the config option)
MODE_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("read-only", "Read-only", "Reads and searches only; nothing is changed."),
    ("ask", "Ask", "Reads are free; every edit and command asks first."),
    ("auto-edit", "Auto-edit", "Edits inside the workspace are free; commands ask."),
    ("full-auto", "Full auto", "Everything is free, still confined to the workspace."),
)
MODES: tuple[str, ...] = tuple(mode_id for mode_id, _name, _about in MODE_CHOICES)
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")
# the OS sandbox commands run in: "auto" picks bubblewrap, else Landlock; "off" runs
# them unconfined (then no mode or rule ever runs a command without asking)
SANDBOXES: tuple[str, ...] = ("auto", "bwrap", "landlock", "off")
OFF_ON: tuple[str, ...] = ("off", "on")

# `allowed_domains` when unset: the package registries of the ecosystems Tether's users
# work in (SPEC §5.13 lists the same); the proxy allows them on ports 80 and 443
DEFAULT_DOMAINS: tuple[str, ...] = (
    "registry.npmjs.org",
    "registry.yarnpkg.com",  # npm, yarn, pnpm
    "pypi.org",
    "files.pythonhosted.org",  # pip, uv, poetry
    "crates.io",
    "static.crates.io",
    "index.crates.io",  # cargo
    "proxy.golang.org",
    "sum.golang.org",  # go modules
    "rubygems.org",
    "index.rubygems.org",  # gem, bundler
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "services.gradle.org",  # maven, gradle
    "github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",  # git clones and release downloads
)
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


@dataclass(frozen=True, slots=True)
class Accepts:
    """What a setting accepts beyond its type (`bool`, `int`, `str`, `tuple[str, ...]`: a
    list, or text layers' comma-separated string), declared once on its field with
    `setting()`; `config/values.py` checks and canonicalises every layer's values by it."""

    low: int = 0  # an integer's range (`high` None: unbounded)
    high: int | None = None
    choices: tuple[str, ...] = ()  # a string's choices (any case; kept lower-case)
    blank_ok: bool = False  # "" too: let Tether choose
    # a path: a relative one is made absolute against the directory of the layer that
    # supplied it, so its meaning does not depend on the daemon's cwd when it is used
    path: bool = False
    secret: bool = False  # masked wherever it is shown, never written anywhere


def setting(
    default: Any,
    *,
    low: int = 0,
    high: int | None = None,
    choices: tuple[str, ...] = (),
    blank_ok: bool = False,
    path: bool = False,
    secret: bool = False,
) -> Any:
    """A field of :class:`Settings` that is a setting, with what it accepts."""
    return field(default=default, metadata={"accepts": Accepts(low, high, choices, blank_ok, path, secret)})


def _default_sources() -> dict[str, str]:
    return dict.fromkeys(SETTING_KEYS, SOURCE_DEFAULT)


@dataclass(frozen=True, slots=True, repr=False)
class Settings:
    """The merged configuration. Build it with :func:`~tether.config.load_settings`;
    constructing it directly skips validation."""

    # "" = not configured yet; a later component picks one
    provider: str = setting("", choices=PROVIDERS, blank_ok=True)
    model: str = setting("")
    # the model ids an editor's model picker offers (session config option "model"); () = the model alone
    models: tuple[str, ...] = setting(())
    # OpenAI-compatible models (fnmatch patterns) that take `reasoning_effort`, besides o1/o3/o4/gpt-5
    reasoning_models: tuple[str, ...] = setting(())
    base_url: str = setting("")
    api_key: str = setting("", secret=True)  # SECRET: masked in repr, never written anywhere
    script: str = setting("", path=True)  # absolute path once loaded (`path=True`)
    max_steps: int = setting(20, low=1, high=1000)
    mode: str = setting("ask", choices=MODES)
    home: str = setting("", path=True)  # data-dir override; "" = the platform default
    log_level: str = setting("warning", choices=LOG_LEVELS)
    context_window: int = setting(0, low=0)  # 0 = the model's default
    max_output_tokens: int = setting(0, low=0)  # 0 = the model's default
    max_retries: int = setting(2, low=0, high=10)  # provider retries of a failed request, before any output
    record: str = setting("", path=True)  # save every model exchange to this cassette file
    cassette: str = setting("", path=True)  # the cassette the `replay` provider plays back
    # command prefixes never run, whatever the mode or rules say (added to built-in ones)
    deny_commands: tuple[str, ...] = setting(())
    # secret-looking environment variables that commands may still see
    allow_env: tuple[str, ...] = setting(())
    # the input guard on user messages and tool results: off | log | warn | block
    guard: str = setting("warn", choices=("off", "log", "warn", "block"))
    # how many of the latest user turns are sent to the model (older ones stay stored)
    keep_user_turns: int = setting(50, low=1, high=100_000)
    # files larger than this (KiB) are not recorded for rewind (the tool result says so)
    checkpoint_max_kib: int = setting(2048, low=1, high=1024 * 1024)
    # the OS sandbox for commands (user settings only; never from a workspace file)
    sandbox: str = setting("auto", choices=SANDBOXES)
    # network for sandboxed commands: "off" unless approved per call or by a rule below;
    # "allowlist": only through Tether's proxy, to `allowed_domains` (netproxy/)
    network: str = setting("off", choices=("off", "allowlist", "on"))
    # command prefixes whose commands get the network in the sandbox (every part covered);
    # the table form's entries ("npm install -> registry.npmjs.org") get the proxy with
    # those domains added instead (values.py writes them so)
    network_commands: tuple[str, ...] = setting(())
    # hosts (`name`, `*.suffix`, either with `:port`) the proxy lets commands reach
    allowed_domains: tuple[str, ...] = setting(DEFAULT_DOMAINS)
    # "host header ENV_NAME" entries: the proxy adds that header, valued from the daemon's
    # environment, to plain HTTP requests for that host (user config only)
    credentials: tuple[str, ...] = setting(())
    # unix sockets (absolute paths) a command with the network may connect to; without
    # one, no command connects to any (user settings only; bubblewrap only, see SPEC §11)
    allow_unix_sockets: tuple[str, ...] = setting(())
    # paths commands must not read besides the credential stores (sandbox/credential_stores.py;
    # a workspace config or a client may add to it), and stores the user exposes (user only)
    deny_read: tuple[str, ...] = setting(())
    allow_read: tuple[str, ...] = setting(())
    # secret-looking text in tool results is masked before the model sees it (user only)
    mask_secrets: str = setting("on", choices=OFF_ON)
    # mode auto-edit runs a command without asking when the sandbox alone keeps it in:
    # sandboxed, no network, plain and fully seen, nothing outside the workspace named
    # (approvals/sandboxed_asking.py); a workspace or a client may only turn it off
    sandbox_auto_allow: str = setting("on", choices=OFF_ON)
    # retrieved memory: earlier sessions' messages matching each prompt are given to the
    # model (user settings only: it spends the user's tokens on the user's history)
    memory: str = setting("off", choices=OFF_ON)
    memory_tokens: int = setting(1_500, low=100, high=20_000)  # the most tokens retrieved memory adds to a turn
    # the approval reviewer (hooks/reviewer.py): a second model call before a prompt is
    # shown; "" = the session's model; seconds before it counts as "ask the user"
    reviewer: str = setting("off", choices=OFF_ON)
    reviewer_model: str = setting("")
    reviewer_timeout: int = setting(30, low=1, high=600)
    # ask a clarifying question instead of acting on a destructive, vague prompt
    ask_first: str = setting("off", choices=OFF_ON)
    # one background daemon per user for every window (user config, env or --shared only)
    shared: bool = setting(False)
    # seconds the shared daemon lives with no client and no turn
    shared_idle_timeout: int = setting(600, low=1, high=7 * 24 * 3600)
    # the `delegate` tool (agent/subagent.py): the model may hand a task to a sub-agent; its
    # tokens are spent only when the model delegates, at most `delegate_tokens` per delegation
    delegate: str = setting("on", choices=OFF_ON)
    # a sub-agent's step cap (the call's `max_steps` may only lower it)
    delegate_max_steps: int = setting(10, low=1, high=200)
    # input + output tokens one delegation may spend
    delegate_tokens: int = setting(200_000, low=1_000, high=10_000_000)
    # ACP v2 (Preview) for a client that asks for it; "off": every client gets v1 (SPEC §12.1)
    acp_v2: str = setting("on", choices=OFF_ON)
    # the most text (MiB, UTF-8) one message the user sends may hold: a prompt, a steered
    # message, an answer to a question (SPEC §3.8); more is refused before it is stored.
    # 8 MiB is twice what the largest context window (1M tokens) takes; user settings only
    max_message_mib: int = setting(8, low=1, high=256)
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


# every setting, in the order of its field (environment variables are read in this order)
SETTING_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if "accepts" in f.metadata)
ACCEPTS: dict[str, Accepts] = {f.name: f.metadata["accepts"] for f in fields(Settings) if f.name in SETTING_KEYS}
# a setting's type as its field declares it ("int", "tuple[str, ...]", ...)
TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(Settings) if f.name in SETTING_KEYS}
SECRET_KEYS: frozenset[str] = frozenset(key for key, accepts in ACCEPTS.items() if accepts.secret)
PATH_KEYS: frozenset[str] = frozenset(key for key, accepts in ACCEPTS.items() if accepts.path)
# initializationOptions come from editor extensions written in JS/TS, where
# camelCase is the norm; both spellings are accepted there.
CAMEL_TO_KEY: dict[str, str] = {camel(k): k for k in SETTING_KEYS if camel(k) != k}


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
