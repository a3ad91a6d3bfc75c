"""Commands through the real shell grammar: the parts found, plain or not, fully seen or
not, and how deny rules normalise flags and paths."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tether.approvals.commands import parse_command
from tether.approvals.deny_match import deny_match, normalise_path
from tether.approvals.rules import builtin_rules, deny_for_command
from tether.approvals.shell_grammar import Word


def texts(command: str) -> list[tuple[str, ...]]:
    return [p.texts for p in parse_command(command).parts]


PLAIN = [
    "ls",
    "npm test && git status --short | head -5; ls -la",
    "ls *.py",  # a glob is a literal word (it only lists files)
    "grep -n 'a b' \"c d\" e\\ f",
    "echo x#; ls",  # `#` inside a word is not a comment
    "ls # a comment",
    "pytest -q > out.txt 2>&1",  # a relative path inside the workspace
    "make 2> /dev/null",
    "ls sub/../x > logs/run.txt",
    "bash -lc 'npm test && ls'",  # a literal script, itself plain
    "timeout 10 npm test",
    "find . -name '*.py'",
]
NOT_PLAIN = {
    "echo $HOME": "variable expansion",
    "echo ${x:-y}": "variable expansion",
    "echo $(id)": "command substitution",
    "echo `id`": "command substitution",
    "echo $((1 + 2))": "arithmetic expansion",
    "diff <(ls) <(ls -a)": "process substitution",
    "echo $'\\x41'": "`$'...'` quoting",
    "echo {a,b}": "not a literal word",
    "for f in *; do ls $f; done": "a loop",
    "while true; do ls; done": "a loop",
    "if true; then ls; fi": "a conditional",
    "case x in x) ls;; esac": "a conditional",
    "{ ls; }": "group",
    "(cd x && make)": "a subshell",
    "f() { ls; }; f": "a function definition",
    "! ls": "`!`",
    "[[ -f x ]] && ls": "test",
    "cat <<EOF\nhi\nEOF": "a here-document",
    "cat <<< hi": "a here-string",
    "sleep 9 &": "a background job",
    "FOO=1 npm test": "a variable assignment",
    "export FOO=1; ls": "`export`",
    "env A=1 ls": "environment set by env",
    "eval ls": "`eval`",
    "source env.sh": "`source`",
    ". env.sh": "`.`",
    "exec ls": "`exec`",
    "python -c 'print(1)'": "inline python code",
    "python3 -Ic 'print(1)'": "inline python3 code",
    "node -e 'x'": "inline node code",
    "perl -ne 'print'": "inline perl code",
    "ruby -e 'x'": "inline ruby code",
    'sh -c "$X"': "not a literal string",
    "ls > /tmp/out": "outside the workspace",
    "ls > ../out": "outside the workspace",
    "ls >> ~/out": "outside the workspace",
    "ls > $OUT": "a redirection to `$OUT`",
    'echo "unterminated': "cannot parse",
}


@pytest.mark.parametrize("command", PLAIN)
def test_plain_commands(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.plain, (command, parsed.not_plain)
    assert parsed.fully_seen, (command, parsed.unseen)


@pytest.mark.parametrize("command", list(NOT_PLAIN))
def test_not_plain_commands_say_why(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.plain, command
    assert any(NOT_PLAIN[command] in why for why in parsed.not_plain), (command, parsed.not_plain)


NOT_FULLY_SEEN = {
    "$G push": "`$G` in command position",
    "S=sudo; $S id": "`$S` in command position",
    "for s in sudo; do $s id; done": "`$s` in command position",
    '"$(echo git)" push': "in command position",
    "/usr/bin/g?t push": "`/usr/bin/g?t` in command position",
    'eval "$CMD"': "an `eval` string that is not a literal string",
    'bash -lc "$SCRIPT"': "not a literal string",
    "python -c 'import os'": "inline python code",
    "awk 'BEGIN { system(\"id\") }'": "awk program that can run commands",
    'source "$F"': "`source` of",
    "ls; ;": "cannot parse",
    "nice $OPTS git push": "in command position",
}


@pytest.mark.parametrize("command", list(NOT_FULLY_SEEN))
def test_what_the_deny_rules_cannot_see(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.fully_seen and not parsed.plain, command
    assert any(NOT_FULLY_SEEN[command] in why for why in parsed.unseen), (command, parsed.unseen)


def test_every_simple_command_the_grammar_exposes_is_a_part() -> None:
    found = texts(
        "for i in 1; do a; done; if b; then c; else d; fi; while e; do f; done; { g; }; (h); ! i;"
        " echo $(j) `k` <(l) >(m); n() { o; }; p | q && r || s; case x in x) t;; esac"
    )
    programs = {t[0] for t in found}
    assert set("abcdefghijklmopqrst") <= programs, programs  # `n` is only defined


def test_wrappers_and_inner_scripts_are_looked_through() -> None:
    assert ("git", "push") in texts("env -u X git push")
    assert ("git", "push") in texts("command git push")
    assert ("git", "push") in texts("builtin eval 'git push'")
    assert ("git", "push") in texts("nice -n 5 ionice -c 2 nohup time git push")
    assert ("git", "push") in texts("timeout -s KILL 10 stdbuf -oL git push")
    assert ("git", "push") in texts("sudo -u root git push")
    assert ("git", "push") in texts("doas git push")
    assert ("git", "push") in texts("sh -c 'bash -lc \"eval git push\"'")
    assert ("git", "push") in texts("zsh -l -c 'git push'")
    assert ("git", "push") in texts("env -S 'git push'")
    assert ("git", "push", "<input>") in texts("echo main | xargs -n1 git push")
    assert ("rm", "-rf", "<input>") in texts("find / -name x -exec rm -rf {} \\;")
    assert ("rm", "-rf", "<input>") in texts("find / -execdir rm -rf {} +")
    assert ("git", "push") in texts("git pu\\\nsh")  # /bin/sh joins a backslash-newline
    assert ("git", "push") in texts("ls\ngit push")
    assert ("git", "push") in texts("e'c'ho; \\g\"it\" push")


def test_allow_rules_see_the_parts_a_rule_must_cover() -> None:
    # wrappers are covered through what they run; the prefixes are what "always" stores
    assert parse_command("timeout 10 npm test && git status").prefixes() == ["npm test", "git status"]
    assert parse_command("bash -lc 'ls -la'").prefixes() == ["ls"]


@pytest.mark.parametrize(
    "spelling",
    [
        "rm -rf /",
        "rm -r -f /",
        "rm -fr /",
        "rm -Rf /",
        "rm -f -R /",
        "rm --recursive --force /",
        "rm --rec --force /",
        "rm -rf //",
        "rm -rf /.",
        "rm -rf /./",
        "rm -rf /tmp/..",
        "rm -rf -- /",
        "rm -rfv --one-file-system /",
        "/bin/rm -rf /",
        "rm -rf '/'",
        'rm -rf "/"',
    ],
)
def test_rm_flags_and_paths_are_normalised(spelling: str) -> None:
    hit = deny_for_command(builtin_rules(), parse_command(spelling))
    assert hit is not None and hit.definite, spelling


@pytest.mark.parametrize(
    "spelling",
    [
        "rm -rf ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        "rm -rf ${HOME}",
        'rm -rf "$HOME"',
        'rm -rf "${HOME}/"',
        "rm -rf ~/.",
        "rm -rf ~/x/..",
        "rm -rf ~/*",
        "rm -rf $HOME/*",
    ],
)
def test_home_spellings_are_the_same_home(spelling: str) -> None:
    hit = deny_for_command(builtin_rules(), parse_command(spelling))
    assert hit is not None and hit.definite, spelling


def test_deny_rules_do_not_hit_what_they_do_not_name() -> None:
    rules = builtin_rules()
    for command in (
        "rm -rf build",
        "rm -r /tmp/x",
        "rm -f /",
        "git status",
        "git log --grep push",
        "echo git push",
        "grep -rn sudo .",
        "git ls-files | xargs grep sudo",
        "rm -rf *",
        "ls ~",
        "pushd x",
    ):
        assert deny_for_command(rules, parse_command(command)) is None, command


def test_words_only_running_can_tell_are_a_possible_hit() -> None:
    rules = builtin_rules()
    for command in ("rm -rf $DIR", "git $CMD", "git push${IFS}origin", "rm $FLAGS /", "rm -rf {/,x}"):
        hit = deny_for_command(rules, parse_command(command))
        assert hit is not None and not hit.definite, command
    assert deny_for_command(rules, parse_command("git status $X")) is None


def test_git_global_options_are_skipped() -> None:
    spellings = ("git -C x push", "git --no-pager push", "git -c a.b=c push origin", "/usr/bin/git --git-dir=.git push")
    for command in spellings:
        assert deny_match("git push", parse_command(command).parts[0].words) == "definite", command
    assert deny_match("git push", parse_command("git commit -m push").parts[0].words) is None


def test_path_normalisation() -> None:
    assert [normalise_path(p) for p in ("/", "//", "/.", "/./", "///x//y/", "/tmp/..", "/*", "//*")] == [
        "/",
        "/",
        "/",
        "/",
        "/x/y",
        "/",
        "/*",
        "/*",
    ]
    assert [normalise_path(p) for p in ("~", "~/", "~/.", "~/a/..", "~/a/", "~root", "./x", "x/")] == [
        "~",
        "~",
        "~",
        "~",
        "~/a",
        "~root",
        "./x",
        "x/",
    ]


def test_a_rule_word_is_literal() -> None:
    assert deny_match("npm publish", [Word("npm", "npm", True), Word("publish", "publish", True)]) == "definite"
    assert deny_match("npm publish", [Word("npm", "npm", True), Word("$X", None, False)]) == "possible"


def test_the_grammar_is_not_imported_at_daemon_start() -> None:
    code = "import sys, tether.server.app, tether.approvals; print('tree_sitter' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_pathological_commands_fail_closed_without_crashing() -> None:
    deep = parse_command("nice " * 5000 + "git push")
    assert not deep.fully_seen and any("nested more than" in why for why in deep.unseen)
    nested = parse_command("$(" * 2000 + "ls" + ")" * 2000)
    assert not nested.fully_seen and all(len(why) < 120 for why in nested.unseen)
    many = parse_command("; ".join(f"echo {i}" for i in range(5000)) + "; git push")
    assert deny_for_command(builtin_rules(), many) is not None


# ---- the November 2026 audit ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sed -n '1,5p' f",
        "sed 's/a/b/g' f",
        "sed -i 's/x/y/' f",
        "sed -e 's/x/y/' -e '/foo/d' f",
        "sed '/^$/d' f",
        "sed -n '$p' f",
        "sed '1i hello' f",
        "git -C x status",
        "tar -czf a.tgz dir",
        "ssh host ls",
        "python -m pytest -q",
        "make -f Makefile.ci test",
        "awk -F: '{print $1}' f",
        "grep 'x$' f",
        "find . -name '*.py' -exec wc -l {} +",
        "env -u X ls",
        "env - ls",
        "script -q -c 'ls' /dev/null",
        "echo hi > .gitignore",
        "echo hi > .github/x",
    ],
)
def test_ordinary_commands_stay_plain_and_fully_seen(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.plain and parsed.fully_seen, (command, parsed.not_plain)


@pytest.mark.parametrize("command", ["tar xzf x.tgz", "unzip a.zip", "cp -r a b", "rsync -a a/ b/"])
def test_extractions_and_tree_copies_are_seen_but_no_rule_approves_them(command: str) -> None:
    """What they write is named inside the archive or the tree, not by the command: full-auto
    sees all of it (no deny rule is hidden), but an allow rule cannot vouch for the names."""
    parsed = parse_command(command)
    assert parsed.fully_seen and not parsed.plain, command
    assert "the names inside" in " ".join(parsed.not_plain), parsed.not_plain


@pytest.mark.parametrize(
    "command",
    [
        "ls &>/dev/null",
        "echo $'x'",
        'echo "$\'"',
        "cat <<EOF\n`ls`\nEOF",
        "cat <<-EOF\n\t$(ls)\n\tEOF",
        "awk -f - <<'EOF'\nBEGIN{}\nEOF",  # the grammar loses the `-`
        "sed 's/x/y/e' f",
        "sed -n '1e ls' f",
        "sed --expression='1e ls' f",
        "sed -f - f",
        "gsed -ne '$e ls' f",
        "make -E 'x: ; ls' x",
        "make --ev='x: ; ls' x",
        "tar -I 'ls' -xf x.tar",
        "tar --to-c='ls' -xf x",
        "rsync -e 'ls' a b:c",
        "ssh -oProxyCommand=ls x",
        "git -c a.b=c status",
        "git --config-env=a.b=C status",
        "python3 -m cProfile -s time x.py",
        "su root",
        "script -q /dev/null",
        "echo x > .GIT/config",
    ],
)
def test_what_dash_or_a_program_may_run_unseen_is_not_fully_seen(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.fully_seen and not parsed.plain, command


def test_a_guessed_part_is_only_a_possible_hit_and_needs_no_allow_rule() -> None:
    rules = builtin_rules()
    parsed = parse_command("taskset -c 0 git push")
    hit = deny_for_command(rules, parsed)
    assert hit is not None and not hit.definite and hit.part.maybe
    assert not parsed.plain and [p.texts for p in parsed.own_parts] == [("taskset", "-c", "0", "git", "push")]
    assert deny_for_command(rules, parse_command("sg root 'git push origin'")) is not None
    assert deny_for_command(rules, parse_command("taskset -c 0 git status")) is None


def test_attached_and_clustered_option_values_are_read() -> None:
    for command in (
        "env -S'git push'",
        "env -iS 'git push'",
        "env --spl='git push'",
        "sh -c'git push'",
        "script -qc'git push' /dev/null",
        "su --command='git push'",
        "trap -- 'git push' EXIT",
    ):
        assert ("git", "push") in texts(command), command
    # `+` ends `-exec` only right after `{}`
    assert ("xargs", "-E", "+", "git", "push") in texts("find . -exec xargs -E + git push \\;")


def test_rm_rules_name_recursive_only() -> None:
    for command in ("rm -r ~", "rm -R /", "rm --recursive ~/*", "rm -r /*", "rm -rf ~"):
        hit = deny_for_command(builtin_rules(), parse_command(command))
        assert hit is not None and hit.definite, command
