"""Approvals: nothing changes the user's files or runs a command without the approval
the session's mode and rules require.

Owns: parsing shell commands with a real grammar (`shell_grammar.py`, tree-sitter, loaded
on the first command; cross-checked by `shell_scan.py`) into every part that may run,
looking through programs that run other code (`runners.py`, `inline_code.py`, options that
run programs: `git_options.py`, `tool_options.py`), whether the command is plain and fully
seen (`commands.py`) and which files it writes that no rule may approve (`write_targets.py`);
what rules match (`rules.py`, `deny_match.py`); what "allow always" stores and the
sentence saying what it allows (`scope.py`); which commands mode auto-edit runs unasked
because the sandbox confines them (`sandboxed_asking.py`); the autorun paths that work
done without asking may not change (`autoruns.py`); the
decision order — deny rules, hooks' deny, read-only, no sandbox, mode, hooks' allow,
allow rules, then the user (`gate.py`; the hooks' answers come from `tether.hooks`) — and the request/verdict types the agent loop uses (`requests.py`). Must not: talk to the
client directly (it gets an `Asker` from the server) or run tools.
"""

from .gate import ApprovalGate
from .requests import ApprovalRequest, Asker, AskerAnswer, Verdict

__all__ = ["ApprovalGate", "ApprovalRequest", "Asker", "AskerAnswer", "Verdict"]
