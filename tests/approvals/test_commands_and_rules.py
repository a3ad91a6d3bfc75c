"""Commands as rules see them, and what rules cover."""

from __future__ import annotations

from tether.approvals.commands import command_prefix, parse_command
from tether.approvals.rules import Rule, allow_for_parts, builtin_rules, deny_for_command, patterns_for_always


def test_compound_commands_split_into_parts_with_prefixes():
    parsed = parse_command("npm test && git status --short | head -5; ls -la")
    assert parsed.prefixes() == ["npm test", "git status", "head", "ls"]
    assert parsed.plain and parsed.fully_seen


def test_substitution_redirection_and_background_make_a_command_not_plain():
    for command in ("echo $(cat secret)", "echo `id`", "npm test > /tmp/out.txt", "sleep 9 &", "(cd x && make)"):
        assert not parse_command(command).plain, command


def test_prefix_is_program_plus_subcommand():
    assert command_prefix(("git", "status", "--short")) == "git status"
    assert command_prefix(("ls", "-la")) == "ls"
    assert command_prefix(("/usr/bin/npm", "run", "build")) == "npm run"
    assert command_prefix(("python", "script.py")) == "python"
    assert command_prefix(("echo", "testing")) == "echo"
    assert command_prefix(("python3", "-m", "pytest", "-q")) == "python3 -m pytest"


def test_every_part_must_be_covered_by_an_allow_rule():
    rules = [Rule("execute", "npm test", "allow", id=1), Rule("execute", "git status", "allow", id=2)]
    assert allow_for_parts(rules, parse_command("npm test -- -k x && git status")) == rules
    assert allow_for_parts(rules, parse_command("npm test && rm -rf build")) is None
    assert not parse_command("npm test > ../log").plain  # so no rule approves it (the gate)


def test_deny_rules_hit_any_part_and_env_assignments_do_not_hide_the_program():
    rules = builtin_rules(("npm publish",))
    assert deny_for_command(rules, parse_command("npm test && git push origin main")).rule.pattern == "git push"
    assert deny_for_command(rules, parse_command("FOO=1 npm publish")).rule.source == "config"
    assert deny_for_command(rules, parse_command("rm -rf /")) is not None
    assert deny_for_command(rules, parse_command("git status")) is None


def test_always_answers_generalise_to_prefixes_and_folders():
    parsed = parse_command("npm test -- --watch=false && git status")
    assert patterns_for_always("execute", "x", parsed, []) == ["git status", "npm test"]
    assert patterns_for_always("edit", None, None, ["src/app.py", "README.md"]) == ["/README.md", "/src/**"]


def test_path_rules_are_globs_per_kind():
    rule = Rule("edit", "src/**", "allow", id=3)
    assert rule.covers_path("edit", "src/deep/x.py")
    assert not rule.covers_path("edit", "tests/x.py")
    assert not rule.covers_path("delete", "src/x.py")


def test_common_spellings_of_a_denied_command_are_still_denied():
    rules = builtin_rules()
    for command in (
        "git -C . push",
        "env git push",
        "sh -c 'git push origin'",
        "FOO=1 nice -n 5 git push",
        'bash -c "make && git push"',
        "git --no-pager push",
        "timeout 10 git push",
    ):
        assert deny_for_command(rules, parse_command(command)) is not None, command


def test_an_option_before_the_subcommand_keeps_the_rule_exact():
    parsed = parse_command("npm --prefix web test")
    assert patterns_for_always("execute", "x", parsed, []) == ["npm --prefix web test"]


def test_root_file_rules_are_anchored():
    assert patterns_for_always("edit", None, None, ["README.md"]) == ["/README.md"]
    rule = Rule("edit", "/README.md", "allow", id=1)
    assert rule.covers_path("edit", "README.md") and not rule.covers_path("edit", "docs/README.md")
