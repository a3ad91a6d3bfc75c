"""The official ACP TypeScript SDK's v2 client is asked ask-first's question as a form (SPEC §12.8).

tests/conformance/ts/v2_elicitation.mjs declares `capabilities.elicitation.form` and runs two
prompts that ask-first stops (`TETHER_ASK_FIRST=on`): the first question is answered (the
answer joins the turn, the model answers it), the second declined (the turn ends with the
question, as today's unanswered one). Without the capability nothing is asked in a form.
Every line the daemon wrote is decoded with the v2 types.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from test_acp_v2_typescript_sdk import _validate_daemon_lines, run_v2_client

from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from pathlib import Path

ANSWER = "only build/ and the *.log files"


def _run(daemon_env: dict[str, str], workspace: Path, *flags: str) -> dict[str, Any]:
    env = {
        **daemon_env,
        "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath,
        "TETHER_ASK_FIRST": "on",
    }
    # only the answer has a reply: a model call for anything else fails the turn (-32012)
    script = workspace.parent / "v2-elicitation.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"user": "^only build/", "step": 2},
                        "text": "Deleting build/ and the logs, nothing else.",
                    },
                ]
            }
        )
    )
    return run_v2_client(env, workspace, "v2_elicitation.mjs", script, *flags)


def _states(updates: list[dict[str, Any]]) -> list[str]:
    return [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]


def _said(updates: list[dict[str, Any]]) -> dict[str, str]:
    said: dict[str, str] = {}
    for u in updates:
        if u["sessionUpdate"] == "agent_message_chunk":
            said[u["messageId"]] = said.get(u["messageId"], "") + u["content"]["text"]
    return said


def test_ask_firsts_question_is_a_form_answered_in_the_turn(daemon_env: dict[str, str], workspace: Path) -> None:
    summary = _run(daemon_env, workspace)

    asked = summary["asked"]
    assert len(asked) == 2
    for request in asked:
        convert(request, v2.CreateElicitationRequest, method="elicitation/create")
        assert request["mode"] == "form" and request["sessionId"]
        assert list(request["requestedSchema"]["properties"]) == ["answer"]
        assert request["requestedSchema"]["required"] == ["answer"]
    assert asked[0]["message"].startswith("Before I delete anything") and '"old stuff"' in asked[0]["message"]

    answered = summary["answered"]
    turn_id = answered["answer"]["messageId"].removesuffix(".0")
    updates = answered["updates"]
    assert _states(updates) == ["running", "requires_action", "running", "idle"]
    assert updates[-1]["stopReason"] == "end_turn"
    # the question is the turn's first reply; the answer joins the turn as the user's; the model answers it
    said = _said(updates)
    assert said[f"{turn_id}.1"] == asked[0]["message"]
    (joined,) = [u for u in updates if u["sessionUpdate"] == "user_message" and u["messageId"] != f"{turn_id}.0"]
    assert joined["messageId"].startswith(f"{turn_id}.s") and joined["content"] == [{"type": "text", "text": ANSWER}]
    assert said[f"{turn_id}.2"] == "Deleting build/ and the logs, nothing else."
    assert updates.index(joined) < next(i for i, u in enumerate(updates) if u.get("messageId") == f"{turn_id}.2")

    declined = summary["declined"]["updates"]
    assert _states(declined) == ["running", "requires_action", "idle"]
    assert declined[-1]["stopReason"] == "end_turn"  # no model call: the script has no reply for it
    (question,) = _said(declined).values()
    assert question == asked[1]["message"] and '"everything"' in question
    _validate_daemon_lines(summary["wire"])


def test_a_client_without_forms_gets_the_question_as_the_reply_only(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    summary = _run(daemon_env, workspace, "--no-forms")

    assert summary["asked"] == []
    for turn in (summary["answered"], summary["declined"]):
        assert _states(turn["updates"]) == ["running", "idle"]
        (question,) = _said(turn["updates"]).values()
        assert question.startswith("Before I ")
    assert '"elicitation/create"' not in json.dumps(summary["wire"])
