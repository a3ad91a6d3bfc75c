"""`session/request_permission` as a client receives it, and how its answer is read.

The params are built as `RequestPermissionParams` and written by the one converter; the
JSON text (field order included: clients and recorded sessions compare it) is the one
the daemon has always sent.
"""

from __future__ import annotations

from tether.approvals import ApprovalRequest
from tether.server.permission import permission_params, read_answer
from tether.tools.base import ChangePreview
from tether_protocol import dumps_text, unstructure


def _edit() -> ApprovalRequest:
    previews = [
        ChangePreview(path="/w/a.txt", old_text="a\nb\n", new_text="a\nc\n", unified_diff="-b\n+c"),
        ChangePreview(path="/w/new.txt", old_text=None, new_text="new\n", unified_diff="+new"),
        ChangePreview(path="/w/d", old_text=None, new_text=None, unified_diff="", move_to="/w/e"),
    ]
    return ApprovalRequest("s1", "c1", "edit_file", "edit", "Edit a.txt", {"path": "a.txt"}, "ask",
                           rel_paths=["a.txt", "new.txt", "d"], previews=previews)


def test_an_edit_is_asked_about_with_its_diffs_options_and_hunks_in_the_wire_order() -> None:
    sent = dumps_text(unstructure(permission_params(_edit(), "asked by the mode")))
    assert sent == (
        '{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"Edit a.txt","kind":"edit","status":"pending",'
        '"content":[{"type":"diff","path":"/w/a.txt","newText":"a\\nc\\n","oldText":"a\\nb\\n"},'
        '{"type":"diff","path":"/w/new.txt","newText":"new\\n"},'
        '{"type":"content","content":{"type":"text","text":"move to /w/e: /w/d\\n"}}],'
        '"rawInput":{"path":"a.txt"}},'
        '"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},'
        '{"optionId":"allow_always","name":"Allow always","kind":"allow_always"},'
        '{"optionId":"reject_once","name":"Reject","kind":"reject_once"},'
        '{"optionId":"reject_always","name":"Reject always","kind":"reject_always"}],'
        '"_meta":{"tether":{"reason":"asked by the mode",'
        '"hunks":[{"path":"/w/a.txt","index":0,"header":"@@ -1,2 +1,2 @@"}]}}}'
    )


def test_a_sandboxed_command_is_shown_as_it_runs_with_the_network_option_last() -> None:
    request = ApprovalRequest("s1", "c2", "run_command", "execute", "Run `curl x`", {"command": "curl x"}, "ask",
                              command="curl x", cwd="sub", sandboxed=True)
    sent = unstructure(permission_params(request, "network", by_name=True))
    assert [o["kind"] for o in unstructure(permission_params(request, "network"))["options"]] == [
        "allow_once", "allow_always", "reject_once", "reject_always"]  # by kind: one option per kind
    shown = {"type": "content", "content": {"type": "text", "text": "$ curl x\n(in sub)"}}
    assert sent["toolCall"]["content"] == [shown]
    assert sent["options"][-1] == {"optionId": "allow_once_network", "name": "Allow once, with network",
                                   "kind": "allow_once"}
    assert sent["_meta"] == {"tether": {"reason": "network", "hunks": []}}


def test_the_answer_picks_an_option_or_counts_as_cancelled() -> None:
    selected = read_answer({"outcome": {"outcome": "selected", "optionId": "allow_always"}})
    assert (selected.option, selected.accepted_hunks) == ("allow_always", None)
    assert read_answer({"outcome": {"outcome": "cancelled"}}).option == "cancelled"
    for odd in (None, [], {"outcome": "selected"}, {"outcome": {"optionId": 3, "outcome": "selected"}}):
        assert read_answer(odd).option == "cancelled"
    # an option that was not offered is a "no", even one Tether offers other clients
    network = {"outcome": {"outcome": "selected", "optionId": "allow_once_network"}}
    assert read_answer(network, {"allow_once", "allow_always", "reject_once", "reject_always"}).option == "reject_once"
    unknown = read_answer({"outcome": {"outcome": "selected", "optionId": "allow_forever"}})
    assert unknown.option == "reject_once" and "allow_forever" in unknown.detail


def test_accepted_hunks_are_read_from_the_outcome_or_the_result() -> None:
    hunks = {"_meta": {"tether": {"acceptedHunks": {"/w/a.txt": [1]}}}}
    on_outcome = read_answer({"outcome": {"outcome": "selected", "optionId": "allow_once", **hunks}})
    on_result = read_answer({"outcome": {"outcome": "selected", "optionId": "allow_once"}, **hunks})
    assert on_outcome.accepted_hunks == on_result.accepted_hunks == {"/w/a.txt": [1]}
