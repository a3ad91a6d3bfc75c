"""git as the rules see it: which of its options run a program, and which subcommands push.

Owns: the `git` handler (global options, each subcommand's options that run a program, long options outside
a known list, the files `archive -o` / `format-patch -o` write) and `as_deny_rules_see`.
Must not: parse shell text (`shell_grammar.py`) or match rules (`deny_match.py`).
"""

from __future__ import annotations

from .parts import CommandPart, PartFinder, brief
from .shell_grammar import Word

__all__ = ["as_deny_rules_see", "git"]

# subcommands that send commits to a remote: a `git push` deny rule covers each of them
PUSHING = frozenset({"push", "send-pack", "http-push"})
# subcommands that may push (or run anything) through programs of their own: a git deny
# rule may hit them (`git svn dcommit`, `git subtree push`, `git remote-https` reading
# `push` lines, `git p4 submit`)
UNKNOWN_EFFECT = frozenset({"svn", "subtree", "p4", "cvsexportcommit", "lfs", "annex"})


# git's own subcommands (`git --list-cmds=main`, and a few a distribution adds): any other
# word is an alias or a `git-<word>` program, which may run anything, a push included
_SUBCOMMANDS = frozenset(
    """
add add--interactive am annotate apply archimport archive backfill bisect bisect--helper blame
branch bugreport bundle cat-file check-attr check-ignore check-mailmap check-ref-format checkout
checkout--worker checkout-index cherry cherry-pick citool clean clone column commit commit-graph
commit-tree config count-objects credential credential-cache credential-cache--daemon
credential-store cvsexportcommit cvsimport cvsserver daemon describe diagnose diff diff-files
diff-index diff-tree difftool difftool--helper env--helper fast-export fast-import fetch fetch-pack
filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects
fsmonitor--daemon gc get-tar-commit-id grep gui hash-object help hook http-backend http-fetch
http-push imap-send index-pack init init-db instaweb interpret-trailers lfs log ls-files ls-remote
ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-octopus
merge-one-file merge-ours merge-recursive merge-recursive-ours merge-recursive-theirs merge-resolve
merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects
pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push quiltimport range-diff
read-tree rebase receive-pack reflog refs remote remote-ext remote-fd remote-ftp remote-ftps
remote-http remote-https repack replace replay request-pull rerere reset restore rev-list rev-parse
revert rm send-email send-pack sh-i18n--envsubst shell shortlog show show-branch show-index
show-ref sparse-checkout stage stash status stripspace submodule submodule--helper subtree svn
switch symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info
upload-archive upload-archive--writer upload-pack var verify-commit verify-pack verify-tag version
web--browse whatchanged worktree write-tree
""".split()
)


def as_deny_rules_see(subcommand: str) -> str:
    """`push` for every subcommand that pushes, "?" for one that may push through programs
    of its own (a remote helper `git remote-https` reads `push` lines) and for an alias or
    a program not part of git, else itself."""
    if subcommand in PUSHING:
        return "push"
    if subcommand in UNKNOWN_EFFECT or subcommand.startswith("remote-") or subcommand not in _SUBCOMMANDS:
        return "?"
    return subcommand


# global options (before the subcommand) whose value is the next word
_GLOBAL_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source"}
)
# global options that change nothing a command runs
_GLOBAL_SAFE = frozenset(
    {
        "-C",
        "-P",
        "-p",
        "--no-pager",
        "--paginate",
        "--no-replace-objects",
        "--bare",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
        "--work-tree",
        "--namespace",
        "--version",
        "--help",
        "--html-path",
        "--man-path",
        "--info-path",
        "--exec-path",
    }
)
# subcommands whose work is running a program (a merge tool, a test per commit, a command
# per submodule, a browser, sendmail)
_RUNNERS = {
    "difftool": "runs a diff tool",
    "mergetool": "runs a merge tool",
    "filter-branch": "runs filter commands",
    "instaweb": "runs a web server",
    "web--browse": "runs a browser",
    "send-email": "runs sendmail",
    "credential": "runs credential helpers",
    "maintenance": "schedules and runs jobs",
    "daemon": "serves repositories",
    "shell": "runs commands",
    "upload-pack": "is the server side",
    "receive-pack": "runs hooks",
}
# per subcommand: options whose value is a command git runs (read as a script), and short
# letters that take such a value
_COMMAND_VALUE: dict[str, tuple[tuple[str, ...], str]] = {
    "ls-remote": (("--upload-pack", "--exec"), "u"),
    "fetch": (("--upload-pack",), ""),
    "pull": (("--upload-pack",), ""),
    "clone": (("--upload-pack",), "u"),
    "push": (("--receive-pack", "--exec"), ""),
    "send-pack": (("--receive-pack", "--exec"), ""),
    "archive": (("--exec",), ""),
    "rebase": (("--exec",), "x"),
    "grep": (("--open-files-in-pager",), "O"),
    "fetch-pack": (("--upload-pack", "--exec"), ""),
    "difftool": (("--extcmd",), "x"),
    "filter-branch": (
        (
            "--tree-filter",
            "--index-filter",
            "--msg-filter",
            "--env-filter",
            "--commit-filter",
            "--parent-filter",
            "--tag-name-filter",
        ),
        "",
    ),
    "send-email": (("--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server"), ""),
}
# options that make git run a program named elsewhere (configuration, a template's hooks)
_RUNS_PROGRAM = (
    "--ext-diff",
    "--textconv",
    "--template",
    "--config",
    "--tool",
    "--extcmd",
    "--sendmail-cmd",
    "--to-cmd",
    "--cc-cmd",
    "--header-cmd",
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--open-files-in-pager",
    "--separate-git-dir",
    "--web",
    "--info",
    "--man",
)
# per subcommand: options whose value is a file (or folder) git writes
_WRITE_VALUE: dict[str, tuple[tuple[str, ...], str]] = {
    "archive": (("--output",), "o"),
    "format-patch": (("--output-directory",), "o"),
    **{name: (("--output",), "") for name in ("diff", "log", "show", "diff-tree", "diff-index", "diff-files")},
}
# per subcommand: short options that make git run a program (`clone -c` sets configuration,
# `help -w|-i|-m` starts a browser, info or man)
_RUNS_SHORT = {"clone": "c", "help": "wim"}
# long options known to do only what the command shows (exact spellings: an abbreviation
# is unknown, so asked; git takes any unique prefix of a long option)
_KNOWN_LONG = frozenset(
    """
--oneline --stat --shortstat --numstat --name-only --name-status --cached --staged --graph --all
--decorate --no-decorate --abbrev-commit --abbrev --max-count --since --until --after --before --author
--committer --grep --porcelain --short --long --branch --patch --no-patch --color --no-color --word-diff
--reverse --follow --merges --no-merges --first-parent --show-current --list --verbose --quiet --tags
--heads --exit-code --ignore-case --line-number --count --files-with-matches --files-without-match
--untracked-files --ignored --show-toplevel --is-inside-work-tree --is-inside-git-dir --git-dir
--show-prefix --show-cdup --verify --symbolic-full-name --abbrev-ref --get --get-all --get-regexp
--local --format --pretty --date --relative-date --no-walk --raw --full-index --binary --diff-filter
--ignore-space-change --ignore-all-space --ignore-blank-lines --unified --function-context --minimal
--patience --histogram --summary --dirstat --check --src-prefix --dst-prefix --no-prefix --no-renames
--find-renames --find-copies --relative --text --others --exclude-standard --exclude --modified
--deleted --killed --stage --full-name --error-unmatch --with-tree --remotes --contains --no-contains
--merged --no-merged --points-at --sort --column --no-column --show-origin --show-scope --null
--name-only --heads --refs --symref --get-url --depth --dry-run --prune --force --no-tags --set-upstream
--track --no-track --keep-index --include-untracked --message --amend --no-edit --signoff --no-verify
--allow-empty --fixup --squash --continue --abort --skip --quit --ff-only --no-ff --ff --no-commit
--hard --soft --mixed --keep --source --worktree --ours --theirs --detach --orphan --create --delete
--move --copy --set-upstream-to --unset-upstream --show --blame --porcelain --line-porcelain
--incremental --root --show-email --show-name --show-number --ignore-rev --heading --break
--fixed-strings --extended-regexp --basic-regexp --perl-regexp --word-regexp --invert-match
--max-depth --and --or --not --all-match --threads --no-index --untracked --recurse-submodules
--no-recurse-submodules --simplify-by-decoration --left-right --cherry-pick --cherry-mark --boundary
--topo-order --date-order --author-date-order --children --parents --encoding --notes --no-notes
--show-signature --log-size --full-history --dense --sparse --ancestry-path --progress --no-progress
--name-rev --tags --always --dirty --candidates --exact-match --match --first-parent --long
--expand-tabs --no-expand-tabs --show-pulls --remerge-diff --diff-merges --cc --combined-all-paths
--no-optional-locks --show-stash --ahead-behind --no-ahead-behind --renames --find-object
--pickaxe-all --pickaxe-regex --ignore-submodules --submodule --ws-error-highlight --color-moved
--color-words --indent-heuristic --inter-hunk-context --output-indicator-new --output-indicator-old
--line-prefix --ita-invisible-in-index --intent-to-add --update --refresh --chmod --patch
--interactive --edit --keep-base --onto --autosquash --no-autosquash --autostash --no-autostash
--rebase --no-rebase --include --exclude --recursive --filter --sparse --mirror --bare --single-branch
--no-single-branch --origin --shared --initial-branch --object-format --type --batch --batch-check
--batch-all-objects --follow-symlinks --exists
""".split()
)


def git(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    at = _global_options(found, words)
    if at is None or at >= len(words):
        return
    sub = words[at]
    if sub.value is None or not sub.literal:
        return  # `git $CMD`: in command position for the deny rules (deny_match: "?")
    name = sub.value
    rest = words[at + 1 :]
    if name in _RUNNERS or as_deny_rules_see(name) == "?":
        what = (
            "runs programs of its own" if name in _SUBCOMMANDS else "is an alias or a program that is not part of git"
        )
        found.cannot_see(f"`git {name}` {_RUNNERS.get(name, what)}")
    if name == "config":
        _config(found, rest)
    elif name == "submodule" and any(w.value == "foreach" for w in rest):
        _script_after(found, rest, "foreach", "a `git submodule foreach` command", depth)
    elif name == "bisect" and rest and rest[0].value == "run":
        found.cannot_see("`git bisect run` runs a command for each commit")
        found.expand(list(rest[1:]), depth + 1)
        return
    _options(found, name, rest, depth)


def _global_options(found: PartFinder, words: list[Word]) -> int | None:
    """The index of the subcommand, after git's global options (None: stop looking)."""
    i = 1
    while i < len(words):
        w = words[i]
        value = w.value
        if value is None or not w.literal:
            found.cannot_see(f"a git option only running it can tell (`{brief(w.source)}`)")
            return None
        if not value.startswith("-"):
            return i
        name = value.split("=", 1)[0]
        if name in ("-c", "--config-env") or value.startswith("-c"):
            # `-c core.fsmonitor=…`, `-c alias.x='!cmd'`: configuration runs commands
            found.cannot_see(f"git configuration given on the command line (`{brief(w.source)}`)")
        elif name == "--exec-path" and "=" in value:
            found.cannot_see(f"git subcommands taken from another directory (`{brief(w.source)}`)")
        elif name == "--git-dir":
            found.not_simple(
                f"a git directory named on the command line (its configuration runs commands: `{brief(w.source)}`)"
            )
        elif name not in _GLOBAL_SAFE:
            found.not_simple(f"git option `{brief(w.source)}` is not known to be safe")
        i += 2 if value in _GLOBAL_VALUE else 1
    return i


def _config(found: PartFinder, rest: list[Word]) -> None:
    reading = {
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "get",
        "list",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
    }
    if not any(w.value in reading for w in rest):
        found.not_simple("`git config` changes what later git commands run")


def _script_after(found: PartFinder, rest: list[Word], marker: str, what: str, depth: int) -> None:
    at = next(i for i, w in enumerate(rest) if w.value == marker) + 1
    while at < len(rest) and (rest[at].value or "").startswith("-"):  # `foreach --recursive`
        at += 1
    found.cannot_see(f"{what} runs a command in each submodule")
    script = _joined(rest[at:])
    found.read_literal(script, what, depth)


def _joined(words: list[Word]) -> Word | None:
    if not words:
        return None
    if any(w.value is None or not w.literal for w in words):
        return Word(" ".join(w.source for w in words), None, False)
    return Word(" ".join(w.source for w in words), " ".join(w.value or "" for w in words), True)


def _options(found: PartFinder, name: str, rest: list[Word], depth: int) -> None:
    """The subcommand's options: a command given to one is read as a script (and asked);
    an option that runs a program, or one not known to be safe, is asked."""
    longs, letters = _COMMAND_VALUE.get(name, ((), ""))
    for i, w in enumerate(rest):
        value = w.value
        if value is None or not value.startswith("-") or value == "-":
            continue
        if value == "--":
            return
        command = _command_value(rest, i, longs, letters)
        if command is not None:
            found.cannot_see(f"`git {name} {brief(w.source)}` runs a command")
            found.read_literal(command, f"a command `git {name}` runs", depth)
            continue
        written = _command_value(rest, i, *_WRITE_VALUE.get(name, ((), "")))
        if written is not None:
            found.writes_to(written, f"git {name}")
            continue
        given = value.split("=", 1)[0]
        if given in _KNOWN_LONG:
            continue  # git takes an exact name before any abbreviation
        if given.startswith("--") and _abbreviates(given, _RUNS_PROGRAM):
            found.cannot_see(f"`git {name} {brief(w.source)}` runs a program")
        elif given.startswith("--") and not given.startswith("--no-"):
            found.not_simple(f"git option `{brief(w.source)}` is not known to be safe")
        elif not given.startswith("--") and any(c in _RUNS_SHORT.get(name, "") for c in given[1:]):
            found.cannot_see(f"`git {name} {brief(w.source)}` runs a program")


def _command_value(rest: list[Word], i: int, longs: tuple[str, ...], letters: str) -> Word | None:
    """The value `rest[i]` gives git, if it is one of these options: the command to run
    (`--upload-pack=x`, `--upload-pack x`, `--up x` (a prefix), `-u x`, `-qux`, `-O` with
    nothing attached), or the file to write (`-o x`, `--output=x`)."""
    value = rest[i].value or ""
    following = rest[i + 1] if i + 1 < len(rest) else Word("", "", True)
    if value.startswith("--"):
        given, eq, attached = value.partition("=")
        if given in _KNOWN_LONG or not _abbreviates(given, longs):
            return None
        if eq:
            return Word(attached, attached, rest[i].literal)
        # `--open-files-in-pager` takes its value only attached; the pager then is the default
        return following if given != "--open-files-in-pager"[: len(given)] else Word("less", "less", True)
    for k, letter in enumerate(value[1:], 1):
        if letter in letters:
            attached = value[k + 1 :]
            if attached:
                return Word(attached, attached, rest[i].literal)
            return Word("less", "less", True) if letter == "O" else following
    return None


def _abbreviates(given: str, names: tuple[str, ...]) -> bool:
    """`--up` is `--upload-pack` to git when no other option starts so: any prefix
    counts (over-approximates; exact known names are checked first)."""
    return len(given) > 2 and any(name.startswith(given) for name in names)
