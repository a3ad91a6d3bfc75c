"""Options of read-looking tools that run a program: tar, zip, rsync, ssh, scp, sftp, pagers.

Owns: one handler per such tool (an option that runs a program: not fully seen; an unknown long option: not
plain), and the files `tee`, `sort -o`, `uniq`, `tar -cf`, `zip`, `rsync`, `scp` write (`writes_to`).
Must not: parse shell text (`shell_grammar.py`) or match rules (`rules.py`).
"""

from __future__ import annotations

from .copiers import unseen_tree_or_archive
from .copy_targets import written_file
from .parts import CommandPart, PartFinder, brief
from .shell_grammar import Word

__all__ = ["TOOL_OPTIONS", "WRITERS"]

# per tool: long options that run a program; short letters that do; long options known to
# do only what the command shows (exact: an abbreviation is unknown)
_RUNS: dict[str, tuple[tuple[str, ...], str, frozenset[str]]] = {
    "tar": (
        (
            "--checkpoint-action",
            "--to-command",
            "--use-compress-program",
            "--rsh-command",
            "--rmt-command",
            "--info-script",
            "--new-volume-script",
            "--index-file",
        ),
        "IF",
        frozenset(
            """
--create --extract --get --list --file --gzip --gunzip --ungzip --bzip2 --xz --zstd --lzma --lzip --lzop
--verbose --directory --exclude --exclude-from --strip-components --no-same-owner --same-owner
--same-permissions --preserve-permissions --no-same-permissions --one-file-system --totals --checkpoint
--keep-old-files --overwrite --skip-old-files --wildcards --no-wildcards --anchored --numeric-owner
--owner --group --mode --mtime --sort --auto-compress --to-stdout --transform --xform --append --update
--diff --compare --delete --concatenate --dereference --hard-dereference --show-transformed-names
--absolute-names --null --files-from --exclude-vcs --exclude-vcs-ignores --exclude-caches
--ignore-failed-read --warning --label --format --posix --no-recursion --recursion --occurrence --touch
--blocking-factor --record-size --help --version --usage --acls --xattrs --no-acls --no-xattrs --sparse
--remove-files --unlink-first --keep-newer-files --keep-directory-symlink --no-overwrite-dir
--ignore-zeros --verify --interactive --confirmation --preserve-order --same-order --utc --full-time
--check-links --show-defaults --show-omitted-dirs --restrict --no-auto-compress""".split()
        ),
    ),
    "zip": (
        ("--unzip-command",),
        "",
        frozenset(
            """
--recurse-paths --recurse-patterns --quiet --verbose --test --junk-paths --symlinks --update --freshen
--move --delete --exclude --include --filesync --grow --no-extra --help --version --compression-method
--copy-entries --out --display-bytes --display-counts --display-dots --display-globaldots --dif
--fix --fixfix --adjust-sfx --latest-time --no-dir-entries --split-size --temp-path
--archive-clear --archive-set --must-match --entry-comments --archive-comment --dot-version""".split()
        ),
    ),
    "rsync": (
        ("--rsh", "--rsync-path", "--remote-option", "--config", "--daemon", "--early-input"),
        "eM",
        frozenset(
            """
--archive --verbose --recursive --delete --delete-after --delete-before --delete-during --delete-excluded
--exclude --include --exclude-from --include-from --files-from --dry-run --progress --compress
--checksum --human-readable --stats --partial --partial-dir --times --perms --links --copy-links
--hard-links --update --ignore-existing --existing --size-only --itemize-changes --list-only --backup
--backup-dir --suffix --quiet --owner --group --devices --specials --executability --acls --xattrs
--one-file-system --relative --no-implied-dirs --prune-empty-dirs --filter --cvs-exclude --whole-file
--inplace --append --append-verify --min-size --max-size --modify-window --timeout --contimeout
--info --debug --out-format --numeric-ids --safe-links --copy-unsafe-links --keep-dirlinks
--omit-dir-times --omit-link-times --sparse --preallocate --mkpath --help --version --8-bit-output
--ignore-times --chmod --chown --usermap --groupmap --compare-dest --copy-dest --link-dest --bwlimit
--protect-args --secluded-args --old-args --ignore-errors --force --max-delete --dirs --no-motd
--outbuf --iconv --ipv4 --ipv6 --port""".split()
        ),
    ),
}
# ssh's `-o` keys that change nothing run locally (case-insensitive)
_SSH_SAFE_KEYS = frozenset(
    k.lower()
    for k in """
BatchMode ConnectTimeout ConnectionAttempts StrictHostKeyChecking UserKnownHostsFile
GlobalKnownHostsFile Port User HostName IdentityFile IdentitiesOnly LogLevel ServerAliveInterval
ServerAliveCountMax Compression PasswordAuthentication PubkeyAuthentication PreferredAuthentications
AddressFamily CheckHostIP HashKnownHosts NumberOfPasswordPrompts TCPKeepAlive UpdateHostKeys
VisualHostKey RequestTTY KbdInteractiveAuthentication""".split()
)
# per ssh-family tool: letters taking a value, and which of those run a program or read a
# configuration that may (`-F`), load a library (`-I`), or name a program (`scp -S`, `sftp -D`)
_SSH_VALUES = {"ssh": ("BbcDEeFIiJLlmOoPpQRSWw", "FIE"), "scp": ("cFiJloPSX", "FS"), "sftp": ("BbcDFiJloPRSs", "FSDb")}
# per pager: short letters that run a program, read a key or configuration file that may,
# or write a log file (`less -o Makefile`)
_PAGERS = {"less": "koO", "more": "", "most": "", "pg": "", "man": "PHC"}
_PAGER_LONG = (
    "--lesskey-file",
    "--lesskey-src",
    "--lesskey-content",
    "--log-file",
    "--LOG-FILE",
    "--pager",
    "--html",
    "--browser",
    "--config-file",
)


def _options_runner(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    if (target := written_file(program, words)) is not None:  # `tar -cf`'s archive, `rsync`'s destination
        found.writes_to(target, program)
    longs, letters, known = _RUNS[program]
    for i, w in enumerate(words[1:], 1):
        value = w.value
        if value is None:
            continue
        if value == "--":
            break
        given = value.split("=", 1)[0]
        # tar's first word may be an old-style cluster without a dash (`tar xIf prog a.tar`)
        short = (value.startswith("-") and not value.startswith("--")) or (program == "tar" and i == 1)
        if value.startswith("--") and given not in known and _abbreviates(given, longs):
            found.cannot_see(f"`{program}` running a program given in `{brief(w.source)}`")
        elif value.startswith("--") and given not in known:
            found.not_simple(f"`{program}` option `{brief(w.source)}` is not known to be safe")
        elif short and (any(c in value for c in letters) or (program == "zip" and "TT" in value)):
            found.cannot_see(f"`{program}` running a program given in `{brief(w.source)}`")
    if unseen := unseen_tree_or_archive(program, words):  # `tar -x`, `rsync -a`: names not shown
        found.not_simple(unseen)


def _ssh(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    if program == "scp" and (target := written_file(program, words)) is not None:
        found.writes_to(target, program)
    takes_value, runs = _SSH_VALUES[program]
    i = 1
    while i < len(words):
        value = words[i].value or ""
        i += 1
        if value == "--":
            return
        if not value.startswith("-"):
            # the host, or the remote command: ssh reads options after the host too, and
            # scp/sftp's getopt takes them anywhere, so every later word is looked at
            continue
        if value.startswith("--"):
            found.not_simple(f"`{program}` option `{brief(value)}` is not known to be safe")
            continue
        for k, letter in enumerate(value[1:], 1):
            if letter not in takes_value:
                continue
            given = value[k + 1 :]
            if not given and i < len(words):
                given, i = words[i].value or "$?", i + 1
            if letter in runs:
                found.cannot_see(f"`{program} -{letter}` may run a local program (`{brief(given)}`)")
            elif letter == "o" and _ssh_key(given) not in _SSH_SAFE_KEYS:
                found.cannot_see(f"`{program} -o {brief(given)}` may run a local program")
            break


def _ssh_key(option: str) -> str:
    return option.replace("=", " ").split(" ", 1)[0].strip().lower()


def _pager(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    letters = _PAGERS[program]
    for w in words[1:]:
        value = w.value
        if value is None or value == "--":
            return
        given = value.split("=", 1)[0]
        # `less +!cmd`, `more '+!cmd'`: commands run at start (`+<line>` is only a line)
        starts = value.startswith("+") and not value[1:].isdigit()
        runs = value.startswith("--") and _abbreviates(given, _PAGER_LONG)
        if starts or runs or (value[:1] == "-" and value[1:2] != "-" and any(c in value for c in letters)):
            found.cannot_see(f"`{program}` option `{brief(w.source)}` may run commands or write a file")
            return


def _abbreviates(given: str, names: tuple[str, ...]) -> bool:
    """Any prefix (GNU takes a unique one): over-approximates; exact known names are checked first."""
    return len(given) > 2 and any(name.startswith(given) for name in names)


TOOL_OPTIONS = {
    **{name: _options_runner for name in _RUNS},
    **{name: _ssh for name in _SSH_VALUES},
    **{name: _pager for name in _PAGERS},
}


def _tee(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    options_done = False
    for w in words[1:]:
        value = w.value
        if not options_done and value == "--":
            options_done = True
        elif options_done or value is None or not value.startswith("-") or value == "-":
            found.writes_to(w, program)


def _sort(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """`sort -o FILE` writes FILE; `--compress-program` runs a program."""
    found.parts.append(CommandPart(tuple(words)))
    for i, w in enumerate(words[1:], 1):
        value = w.value or ""
        following = words[i + 1] if i + 1 < len(words) else Word("", "", True)
        given, eq, attached = value.partition("=")
        if value.startswith("--") and _abbreviates(given, ("--compress-program",)):
            found.cannot_see(f"`{program}` running a program given in `{brief(w.source)}`")
        elif value.startswith("--") and _abbreviates(given, ("--output",)):
            found.writes_to(Word(attached, attached, w.literal) if eq else following, program)
        elif value.startswith("-") and not value.startswith("--") and "o" in value:
            rest = value[value.index("o") + 1 :]
            found.writes_to(Word(rest, rest, w.literal) if rest else following, program)


def _uniq(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """`uniq IN OUT` writes OUT."""
    found.parts.append(CommandPart(tuple(words)))
    with_value = {"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}
    operands: list[Word] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if value.startswith("-") and value != "-":
            i += 2 if value in with_value else 1
            continue
        operands.append(words[i])
        i += 1
    if len(operands) > 1:
        found.writes_to(operands[1], program)


WRITERS = {"tee": _tee, "sort": _sort, "uniq": _uniq}
