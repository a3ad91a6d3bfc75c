"""A daemon's start from command-line flags.

Owns: the flags that set settings (`add_setting_flags`, `setting_flags`: `tether_cli`'s and the shared
daemon's), `start_daemon` (what every daemon in a process of its own applies first: the hardening, the
settings, the log on stderr) and `serve_stdio` (`initialize` answered early, then the log and the server).
Must not: import a client or the CLI, or the server or `logging` before `initialize` is answered.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`'s: the start path does not import it
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from pathlib import Path

    from .config import Settings

# the settings a command line may set, as `argparse` names them (`--base-url`: base_url)
SETTING_FLAGS = (
    "provider",
    "model",
    "base_url",
    "script",
    "max_steps",
    "mode",
    "home",
    "log_level",
    "max_retries",
    "record",
    "cassette",
)


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    from .config.settings import LOG_LEVELS, MODES, PROVIDERS  # what the settings accept, named once

    parser.add_argument("--workspace", "-w", help="workspace root (default: current directory)")
    parser.add_argument(
        "--provider",
        help=f"{' | '.join(PROVIDERS)} (default: found from the environment; `tether doctor` says which)",
    )
    parser.add_argument("--model", help="model name for the provider")
    parser.add_argument("--base-url", dest="base_url", help="provider base URL")
    parser.add_argument("--script", help="script file for the scripted provider")
    parser.add_argument("--max-steps", dest="max_steps", type=int, help="model steps per turn (default 20)")
    parser.add_argument("--mode", help=" | ".join(MODES))
    parser.add_argument("--home", help="data directory (default: the user data dir; env TETHER_HOME)")
    parser.add_argument("--log-level", dest="log_level", help=" | ".join(LOG_LEVELS))
    parser.add_argument("--max-retries", dest="max_retries", type=int, help="provider retries (default 2)")
    parser.add_argument("--record", help="save each model exchange to this cassette file")
    parser.add_argument("--cassette", help="cassette for --provider replay")


def setting_flags(args: argparse.Namespace) -> dict[str, object]:
    """The settings the parsed flags set (None: not given), as `load_settings` takes them."""
    return {key: getattr(args, key, None) for key in SETTING_FLAGS}


def start_daemon(workspace: str, flags: Mapping[str, object], *, log: bool = True) -> tuple[Settings, Path]:
    """Hardening, the settings and (``log``) the log for a daemon on ``workspace``; raises
    `ConfigError` (its message names the setting) when the flags or config files are wrong."""
    from pathlib import Path

    from .config import load_settings
    from .sandbox.hardening import harden_process

    # First: not dumpable (same-user processes cannot read our environ or memory), no
    # core files, no loader variables for anything we start.
    harden_process()
    root = Path(os.path.realpath(workspace))
    settings = load_settings(root, flags=flags, env=os.environ)  # (a refused key starts the log)
    if log:
        from .daemon_log import start_log

        start_log(settings.log_level)
    return settings, root


def serve_stdio(workspace: str, flags: Mapping[str, object], framing_flag: str) -> int:
    """`tether serve` (``framing_flag`` auto, lsp or ndjson) and `tether acp` (ndjson) on
    this process's stdio until the client goes; the exit code (2: the settings are wrong)."""
    from .class_code_cache import cache_dir
    from .start_up import pause_collector

    # the collector waits until the first session is answered (`server.app`: ~8 ms less)
    home = flags.get("home")
    pause_collector(cache_dir(home if isinstance(home, str) else None, workspace))

    from .config import ConfigError
    from .transport.first_message import read_first_message
    from .transport.stdio import take_stdio

    try:
        settings, root = start_daemon(workspace, flags, log=False)  # the log: once answered
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    fds = take_stdio()
    framing = None if framing_flag == "auto" else framing_flag
    # `initialize` is answered before the server stack is imported: an editor's first
    # wait is Python's start-up and the settings, not the whole daemon's imports.
    first = read_first_message(fds.read_fd, framing)  # type: ignore[arg-type]
    if first.eof and not first.raw:
        return 0
    from .server.early import answer_initialize

    accepted, leftover = answer_initialize(fds.write_fd, first, settings, root)
    from .daemon_log import start_log

    start_log(settings.log_level)  # (`logging` is not needed before the answer)
    import asyncio  # not before `initialize` is answered (~20 ms with what it imports)

    from .server.app import serve

    try:
        return asyncio.run(serve(fds, settings, root, framing=first.framing, accepted=accepted, leftover=leftover))
    except KeyboardInterrupt:
        return 130
