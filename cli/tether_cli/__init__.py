"""`tether`: the command line (its commands: README and SPEC §10-11; why it is shaped so:
docs/decisions/0014-clients.md).

Owns: parsing the command line and handing each command to the daemon or a client.
Must not: serve or run a turn itself, or import more than one module of it for a shared
window's start; `serve` reaches its first read with the standard library only.
"""

from __future__ import annotations

import os
import sys

from tether import __version__

TYPE_CHECKING = False  # not `typing`'s: importing typing costs a shared window ~15-30 ms
if TYPE_CHECKING:
    import argparse
    from pathlib import Path

_RUN_EXIT_CODES = """exit codes (SPEC §10):
  0    the turn ended (end_turn)
  1    an error (the provider failed, the daemon could not start...)
  2    a configuration or usage error
  3    max_tokens or max_turn_requests
  4    refusal
  5    the turn ended, but an approval was rejected (no terminal to ask on, or you
       said no): what it asked was not done; use --mode auto-edit or full-auto
  130  cancelled (Ctrl-C)
  141  the reader of stdout went away (| head -1)"""

# the commands whose parsers are built only when named (or for `tether --help`)
_OTHER_COMMANDS = ("chat", "run", "doctor", "demo", "sessions", "daemon", "hooks")


def build_parser(*, daemon_only: bool = False, only: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``daemon_only``: just `serve` and `acp` (the daemon's start path
    does not import the other commands' parsers); ``only``: the command the user named, whose
    parser alone is built besides those two (`tether run` does not import the chat's or the
    shared daemon's modules for parsers it will not use: ~5 ms of its start)."""
    import argparse

    from tether.daemon_start import add_setting_flags

    from .help_width import HelpFormatter

    parser = argparse.ArgumentParser(
        prog="tether",
        description="A coding-agent daemon for editors.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    # `prog` given: argparse would format a usage line to find it (and ask the terminal's width)
    commands = parser.add_subparsers(dest="command", required=True, prog="tether")
    serve = commands.add_parser(
        "serve",
        help="run the daemon on stdio (LSP framing by default)",
        formatter_class=HelpFormatter,
    )
    serve.add_argument("--framing", choices=("auto", "lsp", "ndjson"), default="auto")
    acp = commands.add_parser(
        "acp",
        help="run the daemon on stdio with newline-delimited JSON (ACP)",
        formatter_class=HelpFormatter,
    )
    for daemon in (serve, acp):
        add_setting_flags(daemon)
        daemon.add_argument("--shared", action="store_true", help="a thin proxy to the user's shared daemon")
        daemon.add_argument("--no-shared", dest="no_shared", action="store_true", help="a daemon of its own")
    if not daemon_only:
        _add_other_commands(commands, only)
    return parser


def _add_other_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser], only: str | None) -> None:
    from tether.daemon_start import add_setting_flags

    if only in (None, "chat"):
        from tether_chat import add_chat_arguments  # standard library only

        chat = commands.add_parser("chat", help="chat with the agent in this terminal (its own daemon)")
        add_chat_arguments(chat)
        add_setting_flags(chat)
    if only in (None, "run"):
        import argparse  # (loaded by build_parser already)

        run = commands.add_parser(
            "run",
            help="run one headless turn and print it",
            epilog=_RUN_EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        run.add_argument("prompt", help="what to ask")
        run.add_argument("--json", action="store_true", help="one JSON object per event line")
        run.add_argument("--attach", action="store_true", help="run the turn in the shared daemon (started if needed)")
        add_setting_flags(run)
    if only in (None, "doctor"):
        doctor = commands.add_parser("doctor", help="show the settings, the provider Tether would use, and why")
        doctor.add_argument("--json", action="store_true", help="one JSON object (for editor health checks)")
        add_setting_flags(doctor)
    if only in (None, "demo"):
        demo = commands.add_parser("demo", help="a scripted turn on a copy of the example workspace")
        demo.add_argument("--json", action="store_true", help="one JSON object per event line")
    if only in (None, "sessions"):
        from .sessions import add_sessions_parser  # standard library only

        add_sessions_parser(commands)
    if only in (None, "daemon"):
        from .daemon_command import add_daemon_parser  # standard library and the daemons' finder

        add_daemon_parser(commands)
    if only in (None, "hooks"):
        hooks = commands.add_parser("hooks", help="the workspace's hooks (run when your user config trusts them)")
        action = hooks.add_subparsers(dest="hooks_action", required=True)
        trust = action.add_parser("trust", help="trust the workspace's [hooks] as they are now (after reading them)")
        trust.add_argument("--workspace", "-w", help="workspace root (default: current directory)")
        trust.add_argument("--home", help="data directory (default: the user data dir; env TETHER_HOME)")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words and words[0] in ("serve", "acp"):
        from tether.shared.proxy import wanted  # standard library only

        if wanted(words, os.environ):
            from tether.shared.proxy import main as proxy_main

            code = proxy_main(words)
            if code is not None:
                return code  # else: no shared daemon here (the proxy said why): its own
    if argv is None:  # not before the proxy: it imports neither pathlib nor platformdirs
        _serve_modules_from_cache(words)
    first = words[0] if words else None
    only = first if first in _OTHER_COMMANDS else None
    args = build_parser(daemon_only=first in ("serve", "acp"), only=only).parse_args(words)
    if args.command in ("serve", "acp"):
        return _serve(args, "ndjson" if args.command == "acp" else args.framing)
    try:
        code = _command(args)
    except BrokenPipeError:
        # the reader went away (`tether sessions list | head -1`): stop quietly, as a
        # command killed by SIGPIPE does, and let nothing else write to the closed pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE
    if argv is None and args.command in ("run", "demo"):
        _exit_at_once(code)
    return code


def _serve_modules_from_cache(words: list[str]) -> None:
    """A process of its own imports the modules earlier starts imported from one file
    (`module_cache.py`: ~75 us less per module, ~500 modules on a first turn), from the
    data directory the command line names: read before the parser, which imports them too."""
    from tether.class_code_cache import cache_dir
    from tether.module_cache import install

    def flag(*names: str) -> str | None:
        for i, word in enumerate(words):
            name, eq, value = word.partition("=")
            if name in names:
                return value if eq else (words[i + 1] if i + 1 < len(words) else None)
        return None

    directory = cache_dir(flag("--home"), flag("--workspace", "-w"))
    if directory is not None:
        install(directory)


def _exit_at_once(code: int) -> None:
    """End the process without the interpreter's teardown of its ~450 modules (~30-40 ms
    of CPU): `run`/`demo` have printed, and their daemon has closed its history store and
    stopped its commands, before they return. The class code cache is saved first (for the
    next start: what the turn compiled too)."""
    from tether.class_code_cache import save
    from tether.module_cache import save as save_modules

    save()
    save_modules()
    for stream in (sys.stdout, sys.stderr):
        # not contextlib.suppress: contextlib would load collections and functools on the CLI's start
        try:  # noqa: SIM105
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _command(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.command == "doctor":
        from tether.daemon_start import setting_flags
        from tether.doctor import doctor_main

        workspace = Path(os.path.realpath(args.workspace or os.getcwd()))
        return doctor_main(workspace, setting_flags(args), as_json=args.json)
    if args.command == "chat":
        from tether_chat import chat_main  # a client of `tether serve`, like the editor plugins

        return chat_main(args)
    if args.command == "sessions":
        from .sessions import sessions_main

        return sessions_main(args)
    if args.command == "daemon":
        from .daemon_command import daemon_main

        return daemon_main(args)
    if args.command == "hooks":
        from tether.hooks.trust import hooks_trust_main
        from tether.store.paths import tether_home

        workspace = Path(os.path.realpath(args.workspace or os.getcwd()))
        return hooks_trust_main(workspace, tether_home(Path(args.home) if args.home else None))
    return _one_turn(args)


def _one_turn(args: argparse.Namespace) -> int:
    """`run` and `demo`: they serve their daemon in this process (`inprocess.py`)."""
    from tether.class_code_cache import cache_dir
    from tether.start_up import pause_collector, resume_collector

    # Start-up makes ~30,000 objects the collector tracks, and no garbage: it waits until it
    # is done (`connect_in_process` resumes it, with what start-up made frozen out of its passes).
    pause_collector(cache_dir(getattr(args, "home", None), getattr(args, "workspace", None)))
    try:
        from tether_client.cli import demo_main, run_main

        if getattr(args, "attach", False):
            resume_collector()  # the turn runs in the shared daemon
            from .attach import connect_shared

            return run_main(args, connect_shared)
        from .inprocess import connect_in_process

        if args.command == "run":
            return run_main(args, connect_in_process)
        return demo_main(args, examples_dir(), connect_in_process)
    except KeyboardInterrupt:  # Ctrl-C before the turn began (during it, it cancels the turn)
        return 130


def examples_dir() -> Path:
    """`tether demo`'s script and workspace: in the wheel (`tether_cli/_examples`), else the
    checkout's `examples/`."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for candidate in (here / "_examples", here.parent.parent / "examples"):
        if (candidate / "demo.json").is_file():
            return candidate
    raise SystemExit("tether: the examples directory is missing from this installation")


def _serve(args: argparse.Namespace, framing_flag: str) -> int:
    from tether.daemon_start import serve_stdio, setting_flags

    return serve_stdio(args.workspace or os.getcwd(), setting_flags(args), framing_flag)
