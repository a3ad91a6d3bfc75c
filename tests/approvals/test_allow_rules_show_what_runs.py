"""Allow rules that would write or run more than they show (issue 30 item 4), and what
pushes under a `git push` deny rule (item 11), through the real parser and the real gate
over a real workspace: every attack is asked (or refused) with a reason naming what was
wrong, and the ordinary spellings stay allowed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
from tether.store import HistoryStore

if TYPE_CHECKING:
    from pathlib import Path

# "allow always" answers a user gave for read-looking commands (and `git`, `make`)
ALLOWED = (
    "echo",
    "printf",
    "cat",
    "sed",
    "ls",
    "sort",
    "tee",
    "uniq",
    "git",
    "zip",
    "tar",
    "rsync",
    "ssh",
    "cp",
    "mv",
    "ln",
    "install",
    "unzip",
    "scp",
    "sftp",
    "less",
    "more",
    "man",
    "make",
    "find",
)

# (command, a fragment of the reason it is asked)
WRITES = [
    ("echo 'all:; touch pwned' > Makefile", "`Makefile` configures what builds, tests or the agent run"),
    ("echo '\ttouch pwned' >> Makefile", "`Makefile` configures"),
    ('printf \'{"scripts":{"test":"touch pwned"}}\' > package.json', "`package.json` configures"),
    ("ls >| notes.txt", "`notes.txt` already exists"),
    ("echo x 1<> notes.txt", "the shell grammar cannot parse"),
    ("cat notes.txt > AGENTS.md", "`AGENTS.md` configures what builds, tests or the agent run"),
    ("echo x > CLAUDE.md", "`CLAUDE.md` configures"),
    ("echo 'touch pwned' > .envrc", "`.envrc` is a dotfile"),
    ("echo 'run touch pwned' >> .tether/MEMORY.md", "`.tether/MEMORY.md` is a dotfile"),
    ("echo x > .vscode/tasks.json", "`.vscode/tasks.json` is a dotfile"),
    ("echo x > .github/workflows/ci.yml", "is a dotfile"),
    ("echo '* diff=x' > .gitattributes", "`.gitattributes` is a dotfile"),
    ("echo x > .gitmodules", "`.gitmodules` is a dotfile"),
    ("echo x > .idea/workspace.xml", "is a dotfile"),
    ("echo x > sub/../GNUmakefile", "configures what builds"),
    ("echo x > MAKEFILE", "configures what builds"),
    ("echo x > conftest.py", "`conftest.py` configures"),
    ("echo x > pyproject.toml", "`pyproject.toml` configures"),
    ("echo x > setup.cfg", "`setup.cfg` configures"),
    ("echo x > Cargo.toml", "configures"),
    ("echo x > justfile", "`justfile` configures"),
    ("echo x > .pre-commit-config.yaml", "is a dotfile"),
    ("echo x > CMakeLists.txt", "configures"),
    ("echo 'import os' > tests/test_new.py", "`tests/test_new.py` is code or configuration"),
    ("echo x > node_modules/jest/index.js", "inside `node_modules/`"),
    ("echo x > linkdir/new.txt", "is a dotfile or inside a dot-folder"),
    ("echo x > dangling", "`dangling` already exists"),
    ("echo x > outlink/new.txt", "`outlink/new.txt` is written through a link that leaves the workspace"),
    ("ls | tee Makefile", "`Makefile` configures"),
    ("ls | tee -a notes.txt", "`notes.txt` already exists"),
    ("ls | tee fresh.txt package.json", "`package.json` configures"),
    ("sort -o Makefile notes.txt", "`Makefile` configures"),
    ("sort -oMakefile notes.txt", "`Makefile` configures"),
    ("sort --output=package.json notes.txt", "`package.json` configures"),
    ("sort --out package.json notes.txt", "`package.json` configures"),
    ("sort --o=Makefile notes.txt", "`Makefile` configures"),
    ("find . -fprint Makefile", "`Makefile` configures"),
    ("git archive -o Makefile HEAD", "`Makefile` configures"),
    ("git diff --output=notes.txt", "`notes.txt` already exists"),
    ("uniq notes.txt Makefile", "`Makefile` configures"),
    ("sed -i 's/a/b/' Makefile", "`Makefile` configures"),
    ("sed -ni.bak 's/a/b/p' notes.txt", "`notes.txt` already exists"),
    ("sed --in-place -e 's/a/b/' notes.txt", "`notes.txt` already exists"),
    ("sed -n 'w Makefile' notes.txt", "a `sed` script that writes a file"),
    ("sed 's/x/y/w justfile' notes.txt", "a `sed` script that"),
    ("sed -f script.sed notes.txt", "a `sed` script file"),
    # copiers: the destination, and what each source becomes in it (the attacker's review)
    ("cp x.txt Makefile", "`Makefile` configures"),
    ("mv x.txt package.json", "`package.json` configures"),
    ("cp -t sub Makefile", "`sub` already exists"),
    ("cp --target-directory=sub x.txt", "`sub` already exists"),
    ("ln -sf x.txt .envrc", "`.envrc` is a dotfile"),
    ("install -m 755 x.txt conftest.py", "`conftest.py` configures"),
    ("cp x.txt notes.txt", "`notes.txt` already exists"),
    ("cp -T x.txt AGENTS.md", "`AGENTS.md` configures"),
    # extractions and tree copies write names the command does not show
    ("tar -xzf a.tgz", "`tar` extracting writes the names inside the archive"),
    ("tar --extract --file a.tar", "`tar` extracting writes the names inside the archive"),
    ("tar xf a.tar", "`tar` extracting writes the names inside the archive"),
    ("unzip a.zip", "`unzip` writes the names inside the archive"),
    ("cp -r evil fresh", "`cp` copying a tree writes the names inside it"),
    ("rsync -av src/ dst/", "`rsync` copying a tree writes the names inside it"),
    # the archive or copy a tar, zip, rsync or scp rule writes where the command names it
    ("rsync x.txt Makefile", "`Makefile` configures"),
    ("rsync -a --exclude y x.txt Makefile", "`rsync` copying a tree writes the names inside it"),
    ("rsync --exclude y x.txt Makefile", "`Makefile` configures"),
    ("rsync x.txt .envrc", "`.envrc` is a dotfile"),
    ("rsync x.txt notes.txt", "`notes.txt` already exists"),
    ("scp x.txt Makefile", "`Makefile` configures"),
    ("scp -P 22 x.txt package.json", "`package.json` configures"),
    ("tar -cf Makefile x.txt", "`Makefile` configures"),
    ("tar cf Makefile x.txt", "`Makefile` configures"),
    ("tar -cvfMakefile x.txt", "`Makefile` configures"),
    ("tar cCf sub Makefile x.txt", "`Makefile` configures"),
    ("tar --create --file=Makefile x.txt", "`Makefile` configures"),
    ("tar --append --file Makefile x.txt", "`Makefile` configures"),
    ("tar -rf notes.txt x.txt", "`notes.txt` already exists"),
    ("zip Makefile x.txt", "`Makefile` configures"),
    ("zip -j -x y .envrc x.txt", "`.envrc` is a dotfile"),
]
RUNS = [
    ("git ls-remote --upload-pack='touch pwned' .", "`git ls-remote --upload-pack='touch pwned'` runs a command"),
    ("git ls-remote --upload-pa='touch pwned' .", "runs a command"),
    ("git ls-remote --up 'touch pwned' .", "runs a command"),
    ("git ls-remote -u 'touch pwned' .", "runs a command"),
    ("git ls-remote -qu'touch pwned' .", "runs a command"),
    ("git fetch --upload-pack='touch pwned' .", "runs a command"),
    ("git pull --upload-pack 'touch pwned' .", "runs a command"),
    ("git clone -u 'touch pwned' . copy", "runs a command"),
    ("git clone --template=tpl . copy", "runs a program"),
    ("git clone -c core.fsmonitor='touch pwned' . copy", "runs a program"),
    ("git difftool -x 'touch pwned' HEAD", "`git difftool` runs a diff tool"),
    ("git difftool --extcmd='touch pwned' HEAD", "`git difftool` runs a diff tool"),
    ("git mergetool --tool=x", "`git mergetool` runs a merge tool"),
    ("git grep -O'touch pwned' x", "`git grep -O'touch pwned'` runs a command"),
    ("git grep -iO'touch pwned' x", "runs a command"),
    ("git grep -O x", "runs a command"),
    ("git grep --open-files-in-pager='touch pwned' x", "runs a command"),
    ("git grep --open='touch pwned' x", "runs a command"),
    ("git archive --remote=. --exec='touch pwned' HEAD", "runs a command"),
    ("git -c core.pager='touch pwned' log", "git configuration given on the command line"),
    ("git -c alias.x='!touch pwned' x", "may be built-in rule: deny `git push`"),
    ("git --config-env=core.pager=X log", "git configuration given on the command line"),
    ("git --exec-path=. status", "git subcommands taken from another directory"),
    ("git --git-dir=planted status", "a git directory named on the command line"),
    ("git submodule foreach 'touch pwned'", "`git submodule foreach`"),
    ("git bisect run touch pwned", "`git bisect run` runs a command"),
    ("git rebase --exec 'touch pwned' HEAD~1", "runs a command"),
    ("git rebase -x 'touch pwned' HEAD~1", "runs a command"),
    ("git rebase -ix'touch pwned' HEAD~1", "runs a command"),
    ("git log --ext-diff -p", "`git log --ext-diff` runs a program"),
    ("git show --textconv HEAD:x", "`git show --textconv` runs a program"),
    ("git log --ext -p", "runs a program"),
    ("git config core.fsmonitor 'touch pwned'", "`git config` changes what later git commands run"),
    ("git help -w log", "runs a program"),
    ("git filter-branch --tree-filter 'touch pwned' HEAD", "`git filter-branch` runs filter commands"),
    ("git send-email --sendmail-cmd='touch pwned' x.patch", "runs sendmail"),
    ("git log --weird-new-option", "git option `--weird-new-option` is not known to be safe"),
    ("git log --onel", "git option `--onel` is not known to be safe"),
    ("git --frobnicate status", "not known to be safe"),
    ("zip -TT 'touch pwned' -T a.zip notes.txt", "`zip` running a program"),
    ("zip -T -TT'touch pwned' a.zip notes.txt", "`zip` running a program"),
    ("zip --unzip-command='touch pwned' -T a.zip notes.txt", "`zip` running a program"),
    ("zip --unzip-co 'touch pwned' -T a.zip notes.txt", "`zip` running a program"),
    ("zip --weird a.zip notes.txt", "`zip` option `--weird` is not known to be safe"),
    ("tar --to-command='touch pwned' -xf a.tar", "`tar` running a program"),
    ("tar --to-com='touch pwned' -xf a.tar", "`tar` running a program"),
    ("tar -I 'touch pwned' -xf a.tar", "`tar` running a program"),
    ("tar -xvIf 'touch pwned' a.tar", "`tar` running a program"),
    ("tar xIf 'touch pwned' a.tar", "`tar` running a program"),
    ("tar --use-compress-prog='touch pwned' -xf a.tar", "`tar` running a program"),
    ("tar --checkpoint=1 --checkpoint-action=exec='touch pwned' -cf a.tar notes.txt", "`tar` running a program"),
    ("tar -F 'touch pwned' -cf a.tar notes.txt", "`tar` running a program"),
    ("tar --info-script='touch pwned' -cf a.tar notes.txt", "`tar` running a program"),
    ("tar --new-volume-script='touch pwned' -cf a.tar notes.txt", "`tar` running a program"),
    ("tar --rsh-command='touch pwned' -cf h:a.tar notes.txt", "`tar` running a program"),
    ("tar --frobnicate -xf a.tar", "`tar` option `--frobnicate` is not known to be safe"),
    ("rsync -e 'sh -c \"touch pwned\"' x:y z", "`rsync` running a program"),
    ("rsync -avze 'touch pwned' x:y z", "`rsync` running a program"),
    ("rsync --rsh='touch pwned' x:y z", "`rsync` running a program"),
    ("rsync --rs='touch pwned' x:y z", "`rsync` running a program"),
    ("rsync --rsync-path='touch pwned' x:y z", "`rsync` running a program"),
    ("rsync --frobnicate a b", "`rsync` option `--frobnicate` is not known to be safe"),
    ("ssh -o ProxyCommand='touch pwned' h", "may run a local program"),
    ("ssh -oProxyCommand='touch pwned' h", "may run a local program"),
    ("ssh h -oProxyCommand='touch pwned'", "may run a local program"),
    ("scp a h:b -S 'touch pwned'", "`scp -S` may run a local program"),
    ("ssh -o 'proxycommand touch pwned' h", "may run a local program"),
    ("ssh -oLocalCommand='touch pwned' -oPermitLocalCommand=yes h", "may run a local program"),
    ("ssh -o KnownHostsCommand='touch pwned' h", "may run a local program"),
    ("ssh -o PKCS11Provider=./evil.so h", "may run a local program"),
    ("ssh -F cfg h", "`ssh -F` may run a local program"),
    ("ssh -vF cfg h", "`ssh -F` may run a local program"),
    ("ssh -I ./evil.so h", "`ssh -I` may run a local program"),
    ("scp -S 'touch pwned' a h:b", "`scp -S` may run a local program"),
    ("scp -o ProxyCommand='touch pwned' a h:b", "may run a local program"),
    ("sftp -D 'touch pwned' h", "`sftp -D` may run a local program"),
    ("sftp -b batch h", "`sftp -b` may run a local program"),
    ("less '+!touch pwned' notes.txt", "`less` option `'+!touch pwned'` may run commands"),
    ("less -k keys notes.txt", "may run commands or write a file"),
    ("less --lesskey-src=keys notes.txt", "may run commands or write a file"),
    ("more '+!touch pwned' notes.txt", "may run commands"),
    ("man -P 'touch pwned' ls", "`man` option `-P` may run commands"),
    ("man --pager='touch pwned' ls", "may run commands"),
    ("man -H'touch pwned' ls", "may run commands"),
    ("man -C evil.conf ls", "`man` option `-C` may run commands"),
    ("ls | less -o Makefile", "`less` option `-o` may run commands or write a file"),
]
# (command, a fragment of the refusal)
PUSHES = [
    ("git send-pack origin main", "refused by built-in rule: deny `git push`"),
    ("git http-push https://example.invalid/r.git main", "refused by built-in rule: deny `git push`"),
    ("git -C . send-pack --all ../r", "refused by built-in rule: deny `git push`"),
    ("timeout 5 git send-pack origin main", "refused by built-in rule: deny `git push`"),
    ("sh -c 'git send-pack origin main'", "refused by built-in rule: deny `git push`"),
    ("git push --receive-pack='touch pwned' .", "refused by built-in rule: deny `git push`"),
    ("git submodule foreach --recursive 'git push'", "refused by built-in rule: deny `git push`"),
    ("git -c x=y ls-remote --upload-pack='git push' .", "refused by built-in rule: deny `git push`"),
    ("git difftool -x 'git push' HEAD", "refused by built-in rule: deny `git push`"),
    ("git filter-branch --tree-filter 'git push' HEAD", "refused by built-in rule: deny `git push`"),
    ("git ls-remote --upload-pack='git push origin' .", "refused by built-in rule: deny `git push`"),
    ("git submodule foreach 'git push'", "refused by built-in rule: deny `git push`"),
]
# (command, asked because it may push)
MAY_PUSH = [
    ("git -c alias.p=push p origin", "may be built-in rule: deny `git push`"),
    ("git --config-env=alias.p=X p origin", "may be built-in rule: deny `git push`"),
    ("git remote-https origin https://example.invalid/r.git", "may be built-in rule: deny `git push`"),
    ("git svn dcommit", "may be built-in rule: deny `git push`"),
    ("git subtree push --prefix=x origin main", "may be built-in rule: deny `git push`"),
    ("git p origin main", "may be built-in rule: deny `git push`"),
]
SAFE = [
    "echo hi > fresh-notes.txt",
    "ls -la > listing.txt 2>&1",
    "ls | tee out.txt",
    "sort -o sorted.txt notes.txt",
    "uniq notes.txt uniq.txt",
    "sed -n 1p notes.txt",
    "sed 's/a/b/' notes.txt > changed.txt",
    "cat notes.txt",
    "echo hi > /dev/null",
    "git log --oneline -n 5",
    "git status --short",
    "git diff --stat",
    "git grep -n foo",
    "git -C sub log --oneline",
    "git ls-remote --heads .",
    "git show HEAD:notes.txt",
    "tar -czf out.tgz src",
    "zip -r a.zip src",
    "ssh -o BatchMode=yes host ls",
    "less notes.txt",
    "man ls",
    "more +10 notes.txt",
    "make test",
    "git log --format=%H --since=yesterday",
    "echo hi > logs/run.log",
    "ssh host ls -la",
    "git submodule status",
    "git rev-parse --show-toplevel",
    "git branch --show-current",
    "find . -name '*.py'",
    "git diff --output=changes.diff",
    "rsync x.txt backup.txt",
    "scp x.txt host:Makefile",
    "cp x.txt backup.txt",
    "cp x.txt fresh/",
    "mv x.txt new-name.txt",
    "unzip -l a.zip",
    "tar -tzf a.tgz",
    "tar -tf notes.txt",
    "tar -cf - sub",
    "zip -r a.zip sub",
]


class RecordingUser:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        self.asked.append(reason)
        return AskerAnswer("reject_once")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".tether").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "Makefile").write_text("test:\n\techo ok\n")
    (root / "package.json").write_text('{"scripts": {"test": "echo ok"}}\n')
    (root / "notes.txt").write_text("a\n")
    (root / "linkdir").symlink_to(".tether")
    (root / "dangling").symlink_to(tmp_path / "nowhere" / "file")
    (root / "outlink").symlink_to(tmp_path)
    return root


@pytest.fixture
async def gate(tmp_path: Path, workspace: Path):
    store = await HistoryStore.open(tmp_path / "h.sqlite3")
    gate = ApprovalGate(store.rules, workspace=workspace)
    for prefix in ALLOWED:
        await gate.add_rule("execute", prefix, "allow")
    yield gate
    await store.close()


async def decide(gate: ApprovalGate, command: str, cwd: str = ".") -> tuple[bool, str, list[str]]:
    user = RecordingUser()
    request = ApprovalRequest(
        "s",
        "c1",
        "run_command",
        "execute",
        command,
        {"command": command},
        "ask",
        command=command,
        cwd=cwd,
        sandboxed=True,
    )
    verdict = await gate.decide(request, user)
    return verdict.allowed, verdict.reason, user.asked


@pytest.mark.parametrize(("command", "why"), WRITES, ids=[c for c, _ in WRITES])
async def test_an_allow_rule_never_approves_writing_an_existing_or_configuring_file(
    gate: ApprovalGate, command: str, why: str
) -> None:
    allowed, _, asked = await decide(gate, command)
    assert not allowed and len(asked) == 1, command
    assert why in asked[0], asked[0]


@pytest.mark.parametrize(("command", "why"), RUNS, ids=[c for c, _ in RUNS])
async def test_an_allow_rule_never_approves_an_option_that_runs_a_program(
    gate: ApprovalGate, command: str, why: str
) -> None:
    allowed, _, asked = await decide(gate, command)
    assert not allowed and len(asked) == 1, command
    assert why in asked[0], asked[0]


@pytest.mark.parametrize(("command", "why"), PUSHES, ids=[c for c, _ in PUSHES])
async def test_every_subcommand_that_pushes_is_refused_by_a_git_push_rule(
    gate: ApprovalGate, command: str, why: str
) -> None:
    allowed, reason, asked = await decide(gate, command)
    assert not allowed and not asked
    assert why in reason


@pytest.mark.parametrize(("command", "why"), MAY_PUSH, ids=[c for c, _ in MAY_PUSH])
async def test_a_subcommand_that_may_push_is_asked_under_a_git_push_rule(
    gate: ApprovalGate, command: str, why: str
) -> None:
    allowed, _, asked = await decide(gate, command)
    assert not allowed and len(asked) == 1
    assert why in asked[0], asked[0]


@pytest.mark.parametrize("command", SAFE)
async def test_ordinary_spellings_stay_allowed_by_their_rules(gate: ApprovalGate, command: str) -> None:
    allowed, reason, asked = await decide(gate, command)
    assert allowed and not asked, (command, asked)
    assert reason.startswith("allowed by rule #")


@pytest.mark.parametrize(
    ("cwd", "command", "why"),
    [
        ("sub", "echo x > Makefile", "`Makefile` configures"),  # sub/Makefile: a build file wherever it is
        (".tether", "echo x > notes", "`notes` is a dotfile or inside a dot-folder"),
        ("linkdir", "echo x > notes", "`notes` is a dotfile or inside a dot-folder"),  # linkdir -> .tether
        ("sub", "echo x > ../notes.txt", "a redirection outside the workspace"),
    ],
)
async def test_a_write_is_checked_from_the_commands_directory(
    gate: ApprovalGate, cwd: str, command: str, why: str
) -> None:
    allowed, _, asked = await decide(gate, command, cwd)
    assert not allowed and len(asked) == 1 and why in asked[0], asked


async def test_a_new_inert_file_in_a_subfolder_is_still_allowed(gate: ApprovalGate) -> None:
    assert (await decide(gate, "echo x > out.txt", "sub"))[:2] == (True, "allowed by rule #1: allow `echo`")


FULL_AUTO = [
    ("git ls-remote --upload-pack='touch pwned' .", "(`git ls-remote --upload-pack='touch pwned'` runs a command)"),
    ("TAR_OPTIONS=--to-command='touch pwned' tar -xf a.tar", "(`TAR_OPTIONS` set to a command the program runs)"),
    ("RSYNC_RSH='touch pwned' rsync a h:b", "(`RSYNC_RSH` set to a command the program runs)"),
    ("LESSOPEN='|touch pwned %s' less notes.txt", "(`LESSOPEN` set to a command the program runs)"),
    ("ssh h -oProxyCommand='touch pwned'", "(`ssh -o ProxyCommand=touch pwned` may run a local program)"),
    ("git st", "(`git st` may be built-in rule: deny `git push`)"),
]


@pytest.mark.parametrize(("command", "why"), FULL_AUTO, ids=[c for c, _ in FULL_AUTO])
async def test_full_auto_asks_before_what_the_deny_rules_cannot_see(gate: ApprovalGate, command: str, why: str) -> None:
    user = RecordingUser()
    request = ApprovalRequest(
        "s",
        "c1",
        "run_command",
        "execute",
        command,
        {"command": command},
        "full-auto",
        command=command,
        cwd=".",
        sandboxed=True,
    )
    verdict = await gate.decide(request, user)
    assert not verdict.allowed
    assert user.asked == [
        f"running `{command}` cannot be fully checked against the deny rules {why}; asking instead of running"
    ]


@pytest.mark.parametrize(("mode", "reviewable"), [("ask", True), ("read-only", False)])
async def test_a_write_no_rule_may_approve_is_asked_like_any_other_command(
    gate: ApprovalGate, mode: str, reviewable: bool
) -> None:
    # the reviewer and `permission_request` hooks may answer it as for a command no rule
    # covers (it is fully seen); in read-only mode they never may
    command = "echo x > Makefile"
    request = ApprovalRequest(
        "s",
        "c1",
        "run_command",
        "execute",
        command,
        {"command": command},
        mode,
        command=command,
        cwd=".",
        sandboxed=True,
    )
    user = RecordingUser()
    assert not (await gate.decide(request, user)).allowed
    assert request.reviewable is reviewable and len(user.asked) == 1
