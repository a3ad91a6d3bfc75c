"""A hook command for the tests: `python3 hook_script.py <behaviour> [log file or -] [path]`.

It reads the event on stdin, appends it to the log file (one JSON line) when one is
named, then answers as <behaviour> says."""

import json
import sys
import time

event = json.load(sys.stdin)
behaviour = sys.argv[1]
if len(sys.argv) > 2 and sys.argv[2] != "-":  # "-": no log
    with open(sys.argv[2], "a") as log:
        log.write(json.dumps(event) + "\n")

ANSWERS = {
    "none": None,
    "allow": {"decision": "allow", "reason": "the hook trusts echo"},
    "deny": {"decision": "deny", "reason": "no pushing on Fridays"},
    "ask": {"decision": "ask", "reason": "the hook wants a human"},
    "modify": {"decision": "modify", "arguments": {"command": "echo modified by the hook"}},
    "context": {"context": "The user's favourite colour is teal."},
    "deny_prompt": {"decision": "deny", "reason": "prompts about secrets are refused"},
    "claude_approve": {"decision": "approve", "reason": "claude says fine"},
    "claude_block": {"decision": "block", "reason": "claude says no"},
    "claude_deny": {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "denied the Claude Code way",
        }
    },
    "claude_ask": {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "claude asks"}},
    "claude_permission_allow": {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "message": "ok by policy"},
        }
    },
    "claude_permission_deny": {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "policy says no"},
        }
    },
    "claude_context": {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "claude context for the model"}
    },
}
if behaviour == "probe":  # what the hook may see and do: the answer goes in the log, as context
    import os

    outside = sys.argv[3]
    try:
        with open(outside, "w") as handle:
            handle.write("escaped")
        wrote = "wrote outside"
    except OSError as error:
        wrote = f"could not write outside: {error.strerror}"
    print(json.dumps({"context": json.dumps({"wrote": wrote, "env": sorted(os.environ)})}))
    sys.exit(0)
if behaviour == "exit2":
    print("blocked through exit code 2", file=sys.stderr)
    sys.exit(2)
if behaviour == "crash":
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(1)
if behaviour == "garbage":
    print("this is not json {")
    sys.exit(0)
if behaviour == "huge":
    sys.stdout.write("x" * (200 * 1024))
    sys.exit(0)
if behaviour == "slow":
    time.sleep(30)
answer = ANSWERS[behaviour]
if answer is not None:
    print(json.dumps(answer))
