"""The LSP agent front over the wire (SPEC §3.33-§3.35): a real daemon driven the way a
stock LSP client drives it — `workspace/executeCommand`, `textDocument/codeAction`, and
what comes back (work-done progress, messages, the transcript, approvals, edits)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from daemon_harness import until
from tether_client import ClientError

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "lsp-agent.json"

NVIM_LIKE = {
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "window": {"showMessage": {}, "workDoneProgress": True, "showDocument": {"support": True}},
}


class Editor:
    """What the editor was sent, and how it answers Tether's requests."""

    def __init__(self, daemon, answers: dict[str, object]) -> None:
        self.daemon = daemon
        self.answers = answers
        self.requests: list[tuple[str, dict]] = []

    async def on_request(self, method: str, params: dict):
        self.requests.append((method, params))
        answer = self.answers.get(method)
        if callable(answer):
            return answer(params)
        if method == "window/workDoneProgress/create":
            return None
        if method == "window/showDocument":
            return {"success": True}
        if method == "workspace/applyEdit":
            return {"applied": True}
        return answer

    def sent(self, method: str) -> list[dict]:
        return [p for m, p in self.daemon.client.notifications if m == method]

    def asked(self, method: str) -> list[dict]:
        return [p for m, p in self.requests if m == method]

    async def command(self, command: str, *arguments):
        return await self.daemon.client.request(
            "workspace/executeCommand", {"command": command, "arguments": list(arguments)}
        )

    async def failure(self, method: str, params: dict) -> dict:
        """The error the daemon answers `method` with."""
        with pytest.raises(ClientError) as caught:
            await self.daemon.client.request(method, params)
        return {"code": caught.value.code, "message": caught.value.message}

    async def turn_ended(self, count: int = 1) -> None:
        await until(lambda: len([m for m in self.sent("window/showMessage")]) >= count)


@pytest.fixture
def editor_factory(spawn_daemon, workspace: Path):
    async def start(capabilities: dict, answers: dict[str, object] | None = None, *extra: str) -> Editor:
        daemon = await spawn_daemon(*extra, script=SCRIPT, initialize=False)
        editor = Editor(daemon, answers or {})
        daemon.client.peer.on_request = editor.on_request
        editor.init = await daemon.client.request(
            "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": capabilities}
        )
        daemon.client.peer.notify("initialized", {})
        return editor

    return start


async def test_initialize_advertises_the_commands_and_code_actions(editor_factory):
    editor = await editor_factory({})
    caps = editor.init["capabilities"]
    assert caps["executeCommandProvider"] == {
        "commands": ["tether.ask", "tether.cancel", "tether.newSession", "tether.setMode"]
    }
    assert caps["codeActionProvider"] == {"codeActionKinds": ["quickfix.tether", "refactor.tether"]}


async def test_ask_streams_progress_and_shows_the_answer_and_transcript(editor_factory, workspace, tether_home):
    editor = await editor_factory(NVIM_LIKE)
    started = await editor.command("tether.ask", "slow please")
    assert set(started) == {"sessionId", "turnId"}
    await editor.turn_ended()
    progress = editor.sent("$/progress")
    created = [p["token"] for p in editor.asked("window/workDoneProgress/create")]
    turn_token = f"tether/{started['turnId']}"
    assert created == [turn_token]
    values = [p["value"] for p in progress if p["token"] == turn_token]
    assert values[0]["kind"] == "begin" and values[0]["title"] == "Tether: slow please"
    assert values[-1] == {"kind": "end", "message": "done"}
    reports = [v["message"] for v in values if v["kind"] == "report"]
    # batched (not one per two-character chunk), each the newest words of the answer so far
    answer = next(r["text"] for r in json.loads(SCRIPT.read_text())["replies"] if r["when"].get("user") == "^slow")
    assert 1 <= len(reports) < len(answer) // 2
    assert all(r.removeprefix("…") in answer and len(r) <= 120 for r in reports)
    (shown,) = editor.sent("window/showMessage")
    assert shown["type"] == 3 and shown["message"].startswith("Tether: This answer streams slowly")
    (logged,) = [p for p in editor.sent("window/logMessage") if p["type"] == 3]
    assert "longer than any test waits for it." in logged["message"]
    assert logged["message"].endswith(".md)")  # where the transcript is
    await until(lambda: editor.asked("window/showDocument"))
    (opened,) = editor.asked("window/showDocument")
    path = Path(unquote(urlparse(opened["uri"]).path))
    assert opened["takeFocus"] is False
    assert path.is_relative_to(tether_home) and not path.is_relative_to(workspace)
    text = path.read_text()
    assert "## You\n\nslow please" in text and "longer than any test waits for it." in text


async def test_a_fix_code_action_asks_approves_and_edits_through_the_editor(editor_factory, workspace):
    editor = await editor_factory(NVIM_LIKE, {"window/showMessageRequest": {"title": "Allow once"}})
    uri = (workspace / "src" / "app.py").as_uri()
    editor.daemon.client.peer.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 3, "text": "def main():\n    return 42\n"}},
    )
    diagnostic = {
        "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 13}},
        "message": "should return 43",
        "severity": 1,
        "source": "lint",
    }
    actions = await editor.daemon.client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    assert [a["title"] for a in actions] == ["Ask Tether about this", "Explain (Tether)", "Fix this with Tether"]
    fix = actions[2]
    assert fix["kind"] == "quickfix.tether" and fix["diagnostics"] == [diagnostic]
    await editor.command(fix["command"]["command"], *fix["command"]["arguments"])
    await editor.turn_ended()
    (approval,) = editor.asked("window/showMessageRequest")
    assert approval["message"].startswith("Tether: Edit src/app.py")
    (edit,) = editor.asked("workspace/applyEdit")
    (change,) = edit["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 3}
    assert change["edits"][0]["newText"] == "def main():\n    return 43\n"
    tokens = {p["token"] for p in editor.sent("$/progress")}
    assert any(t.endswith("/call_edit") for t in tokens) and any(t.endswith("/call_read") for t in tokens)
    ends = [
        p["value"]["message"]
        for p in editor.sent("$/progress")
        if p["token"].endswith("/call_edit") and p["value"]["kind"] == "end"
    ]
    assert ends == ["Edit src/app.py: done"]
    assert editor.sent("window/showMessage")[-1]["message"] == "Tether: Fixed: it returns 43 now."


async def test_ask_without_a_question_offers_preset_questions(editor_factory, workspace):
    editor = await editor_factory(NVIM_LIKE, {"window/showMessageRequest": {"title": "What does this do?"}})
    uri = (workspace / "src" / "app.py").as_uri()
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
    await editor.command("tether.ask", {"uri": uri, "range": whole})
    await editor.turn_ended()
    (question,) = editor.asked("window/showMessageRequest")
    assert question["message"] == "Tether: what should I ask about `src/app.py` lines 1-2?"
    assert question["actions"][0] == {"title": "What does this do?"}
    assert editor.sent("window/showMessage")[-1]["message"] == "Tether: It returns 42."


async def test_without_work_done_progress_the_steps_go_to_the_log(editor_factory, workspace):
    editor = await editor_factory(
        {"workspace": {"applyEdit": True}}, {"window/showMessageRequest": {"title": "Allow once"}}
    )
    await editor.command("tether.ask", "edit the readme")
    await editor.turn_ended()
    assert editor.asked("window/workDoneProgress/create") == [] and editor.sent("$/progress") == []
    assert editor.asked("window/showDocument") == []
    log = [p["message"] for p in editor.sent("window/logMessage") if p["type"] == 4]
    assert log == [
        "Tether: edit the readme",
        "Tether: Read README.md: done",
        "Tether: Edit README.md: done",
        "Tether: done",
    ]
    # asked although it declared no window.showMessage: the request is LSP's own (SPEC §3.23)
    assert len(editor.asked("window/showMessageRequest")) == 1
    assert len(editor.asked("workspace/applyEdit")) == 1


async def test_cancel_stops_the_running_turn(editor_factory):
    editor = await editor_factory(NVIM_LIKE)
    started = await editor.command("tether.ask", "slow please")
    busy = await editor.failure("workspace/executeCommand", {"command": "tether.ask", "arguments": ["another"]})
    assert busy["code"] == -32010 and "tether.cancel" in busy["message"]
    cancelled = await editor.command("tether.cancel")
    assert cancelled == {"sessionId": started["sessionId"], "cancelled": True}
    await editor.turn_ended()
    assert "(the turn ended: cancelled)" in editor.sent("window/showMessage")[-1]["message"]
    ends = [p["value"] for p in editor.sent("$/progress") if p["value"]["kind"] == "end"]
    assert ends[-1] == {"kind": "end", "message": "cancelled"}
    assert (await editor.command("tether.cancel"))["cancelled"] is False


async def test_new_session_and_set_mode(editor_factory):
    editor = await editor_factory(NVIM_LIKE, {"window/showMessageRequest": {"title": "Full auto"}})
    first = await editor.command("tether.setMode", "auto-edit")
    assert first["modeId"] == "auto-edit"
    fresh = await editor.command("tether.newSession")
    assert fresh["sessionId"] != first["sessionId"]
    chosen = await editor.command("tether.setMode")
    assert chosen == {"sessionId": fresh["sessionId"], "modeId": "full-auto"}
    (asked,) = editor.asked("window/showMessageRequest")
    assert [a["title"] for a in asked["actions"]] == ["Read-only", "Ask", "Auto-edit", "Full auto"]


@pytest.mark.parametrize(
    ("command", "arguments", "says"),
    [
        ("tether.ask", [], "no arguments; send arguments"),
        ("tether.ask", [""], "the prompt is empty"),
        ("tether.ask", [42], "the argument is int, not a string or an object"),
        ("tether.ask", [{"uri": "file:///x", "range": {"start": {"line": -1, "character": 0}}}], "range must be"),
        ("tether.ask", [{"kind": "poem", "prompt": "x"}], 'kind \'poem\' is unknown; use "ask", "explain" or "fix"'),
        (
            "tether.ask",
            [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}],
            "neither a prompt nor a uri",
        ),
        ("tether.ask", [{"uri": "http://example.com/x"}], "is not a file:// URI"),
        ("tether.ask", ["a", "b", "c", "d"], "4 arguments (it takes one, or a prompt, a uri and a range)"),
        ("tether.ask", [{"prompt": "x"}, "file:///x"], "2 arguments"),
        ("tether.ask", ["x", 3], "uri must be a string (a file:// URI)"),
        (
            "tether.setMode",
            ["turbo"],
            "unknown mode 'turbo'; send one of ['read-only', 'ask', 'auto-edit', 'full-auto']",
        ),
        ("tether.setMode", [1], "the argument must be one mode id"),
        ("tether.fly", [], "unknown command 'tether.fly'; Tether's commands are"),
    ],
)
async def test_bad_arguments_get_invalid_params_saying_what_to_send(editor_factory, command, arguments, says):
    editor = await editor_factory(NVIM_LIKE)
    error = await editor.failure("workspace/executeCommand", {"command": command, "arguments": arguments})
    assert error["code"] == -32602
    assert says in error["message"], error["message"]
    assert editor.sent("$/progress") == []


async def test_code_actions_follow_only_and_missing_fields(editor_factory, workspace):
    editor = await editor_factory({})
    uri = (workspace / "README.md").as_uri()
    here = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    only_fix = await editor.daemon.client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": here, "context": {"diagnostics": [], "only": ["quickfix"]}},
    )
    assert only_fix == []  # no diagnostic: nothing to fix
    error = await editor.failure("textDocument/codeAction", {"textDocument": {"uri": uri}})
    assert error["code"] == -32602 and "range ({start, end}) is required" in error["message"]


async def test_positional_arguments_give_the_prompt_its_place(editor_factory, workspace, tether_home):
    """`["<question>", uri, range]`: what Sublime LSP's `$selection`/`$file_uri`/`$range` give."""
    editor = await editor_factory(NVIM_LIKE)
    uri = (workspace / "src" / "app.py").as_uri()
    line_two = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 13}}
    started = await editor.command("tether.ask", "What does this do?", uri, line_two)
    await editor.turn_ended()
    assert editor.sent("window/showMessage")[-1]["message"] == "Tether: It returns 42."
    logged = [p["message"] for p in editor.sent("window/logMessage") if p["type"] == 3]
    assert logged and started["turnId"]
    progress = [p["value"] for p in editor.sent("$/progress") if p["value"]["kind"] == "begin"]
    assert progress[0]["title"].startswith("Tether: What does this do? About `src/app.py` line 2")
    (transcript,) = (tether_home / "workspaces").glob("*/transcripts/*.md")
    assert "What does this do?\n\nAbout `src/app.py` line 2:\n\n```py\n    return 42\n```" in transcript.read_text()


async def test_a_failed_turn_is_an_error_message_and_its_progress_ends(editor_factory):
    editor = await editor_factory(NVIM_LIKE)
    await editor.command("tether.ask", "fail please")
    await editor.turn_ended()
    (shown,) = editor.sent("window/showMessage")
    assert shown["type"] == 1
    assert shown["message"].startswith("Tether: the model provider failed: scripted outage: upstream returned 503")
    ends = [p["value"] for p in editor.sent("$/progress") if p["value"]["kind"] == "end"]
    assert ends == [{"kind": "end", "message": "failed"}]
    # the session is free again
    await editor.command("tether.ask", "What does this do? nothing")
    await editor.turn_ended(2)
    assert editor.sent("window/showMessage")[-1]["message"] == "Tether: It returns 42."


async def test_cancel_from_the_progress_stops_the_turn(editor_factory):
    editor = await editor_factory(NVIM_LIKE)
    started = await editor.command("tether.ask", "slow please")
    token = f"tether/{started['turnId']}"
    await until(lambda: any(p["token"] == token for p in editor.sent("$/progress")))
    (begin,) = [p["value"] for p in editor.sent("$/progress") if p["token"] == token and p["value"]["kind"] == "begin"]
    assert begin["cancellable"] is True
    editor.daemon.client.peer.notify("window/workDoneProgress/cancel", {"token": "tether/some-other-turn"})
    editor.daemon.client.peer.notify("window/workDoneProgress/cancel", {"token": token})
    await editor.turn_ended()
    assert "(the turn ended: cancelled)" in editor.sent("window/showMessage")[-1]["message"]
    assert [p["value"] for p in editor.sent("$/progress") if p["token"] == token][-1] == {
        "kind": "end",
        "message": "cancelled",
    }


async def test_an_ask_over_the_message_cap_is_refused_before_a_turn(editor_factory):
    """`tether.ask` with a prompt over `max_message_mib` (8 MiB; SPEC §3.12): -32602 naming
    the command, the size and the limit; no turn starts, and the editor can ask again."""
    editor = await editor_factory(NVIM_LIKE)
    error = await editor.failure("workspace/executeCommand", {"command": "tether.ask", "arguments": ["y" * (9 << 20)]})
    assert error["code"] == -32602
    assert (
        "invalid params for tether.ask: prompt holds 9.0 MiB of text (the largest part, prompt, 9.0 MiB), "
        "over the limit of 8 MiB per message" in error["message"]
    )
    assert editor.sent("$/progress") == [] and editor.asked("window/workDoneProgress/create") == []
    started = await editor.command("tether.ask", "slow please")
    assert set(started) == {"sessionId", "turnId"}
    await editor.turn_ended()
