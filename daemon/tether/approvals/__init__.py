"""Approvals: nothing changes the user's files or runs a command without the approval its mode and rules require.

Owns: parsing shell commands into every part that may run (grammar, cross-scan, program handlers), the
verdicts plain / fully seen, rule matching, "allow always" scopes, and the decision order (`gate.py`);
the request/verdict types the agent loop uses. Map and rationale: docs/decisions/0004-approvals.md.
Must not: talk to the client directly (it gets an `Asker` from the server) or run tools.
"""

from .gate import ApprovalGate
from .requests import ApprovalRequest, Asker, AskerAnswer, Verdict

__all__ = ["ApprovalGate", "ApprovalRequest", "Asker", "AskerAnswer", "Verdict"]
