"""What a hook answered: Tether's JSON or Claude Code's, read into one `HookAnswer` (shapes: SPEC §5.20).

Owns: that reading (exit code 2 is deny with stderr as the reason; empty stdout with exit 0 is no opinion),
and the fail-closed rule: a hook that timed out, crashed or answered another shape has `problem` set.
Must not: run hooks or decide the call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tether_protocol import JsonObject

from .runner import OUTPUT_CAP, HookRun

__all__ = ["HookAnswer", "read_answer"]

_DECISIONS = {
    "allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask", "modify": "modify",
}


@dataclass(frozen=True, slots=True)
class HookAnswer:
    decision: str | None = None  # allow | deny | ask | modify; None: no opinion
    reason: str = ""
    arguments: JsonObject | None = None
    context: str = ""
    problem: str = ""  # why the hook gave no usable answer (a notice; fail closed)


def read_answer(run: HookRun) -> HookAnswer:
    if run.problem:
        return HookAnswer(problem=run.problem)
    if run.over_cap:
        return HookAnswer(problem=f"answered more than {OUTPUT_CAP // 1024} KiB on stdout; its answer was ignored")
    if run.exit_code == 2:  # Claude Code: block, stderr is the reason
        return HookAnswer("deny", run.stderr.strip()[:2000] or "blocked by the hook (exit code 2)")
    if run.exit_code != 0:
        tail = run.stderr.strip()[-300:]
        return HookAnswer(problem=f"exited with code {run.exit_code}" + (f": {tail}" if tail else ""))
    text = run.stdout.strip()
    if not text:
        return HookAnswer()
    try:
        data = json.loads(text)
    except ValueError:
        return HookAnswer(problem=f"answered what is not JSON ({text[:80]!r})")
    if not isinstance(data, dict):
        return HookAnswer(problem="answered JSON that is not an object")
    return _from_object(data)


def _from_object(data: JsonObject) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    nested = specific.get("decision")  # Claude Code's PermissionRequest: {behavior, message}
    if isinstance(nested, dict):
        specific = {"permissionDecision": nested.get("behavior"), "permissionDecisionReason": nested.get("message", ""),
                    **({"updatedInput": nested["updatedInput"]} if "updatedInput" in nested else {})}
    raw = specific.get("permissionDecision", data.get("decision"))
    reason = specific.get("permissionDecisionReason", data.get("reason", ""))
    if data.get("continue") is False and raw is None:
        raw, reason = "deny", data.get("stopReason", reason)
    decision = _DECISIONS.get(raw) if isinstance(raw, str) else None
    if raw is not None and decision is None:
        return HookAnswer(problem=f"answered decision {raw!r}; use allow, deny, ask or modify")
    arguments = data.get("arguments", specific.get("updatedInput"))
    if arguments is not None and not isinstance(arguments, dict):
        return HookAnswer(problem="answered `arguments` that are not a JSON object")
    if arguments is not None and decision in (None, "allow"):
        decision = "modify"
    context = data.get("context", specific.get("additionalContext", ""))
    if not isinstance(reason, str) or not isinstance(context, str):
        return HookAnswer(problem="answered a `reason` or `context` that is not a string")
    if decision == "modify" and arguments is None:
        return HookAnswer(problem="answered decision modify without `arguments`")
    return HookAnswer(decision, reason.strip(), arguments, context.strip())
