"""Approvals: nothing changes the user's files or runs a command without the approval
the session's mode and rules require.

Owns: splitting shell commands into the parts a rule must cover (`commands.py`), what
rules match (`rules.py`), the decision order — deny rules, mode, allow rules, then the
user (`gate.py`) — and the request/verdict types the agent loop uses. Must not: talk to
the client directly (it gets an `Asker` from the server) or run tools.
"""

from .gate import ApprovalGate, ApprovalRequest, Asker, AskerAnswer, Verdict

__all__ = ["ApprovalGate", "ApprovalRequest", "Asker", "AskerAnswer", "Verdict"]
