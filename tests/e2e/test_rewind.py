"""Checkpoints and rewind through a real `tether serve` (scripted model, real files, real SQLite)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon_harness import until
from tether_client import ClientError

SCRIPT = Path(__file__).with_name("rewind-script.json")
README = "# Sample\n\nHello from the sample workspace.\n"
EDITED = "# Sample\n\nHello, edited by Tether.\n"


class Allow:
    """Allows every call it is asked about (commands ask when no OS sandbox confines them)."""

    def __init__(self, never: bool = False) -> None:
        self.asked = 0
        self.never = never

    async def on_request(self, method: str, params: dict):
        import asyncio

        self.asked += 1
        if self.never:
            await asyncio.Event().wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


async def _daemon(spawn_daemon, user: Allow | None = None, framing: str = "lsp"):
    daemon = await spawn_daemon("--mode", "full-auto", script=SCRIPT, framing=framing)
    daemon.client.peer.on_request = (user or Allow()).on_request
    return daemon


async def _prompt(session, text: str) -> None:
    turn = session.prompt(text)
    await turn.wait()
    assert turn.stop_reason == "end_turn", turn.stop_reason


async def _rewind(daemon, session_id: str, **params):
    return await daemon.client.request("_tether/session/rewind", {"sessionId": session_id, **params})


def _texts(updates: list[dict]) -> list[str]:
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]


async def test_rewind_files_and_conversation_then_undo_it(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")
    assert (workspace / "notes/todo.txt").read_text() == "remember\n"
    assert not (workspace / "src/app.py").exists() and (workspace / "src/main.py").exists()

    changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id, "turn": 2})
    by_path = {f["path"]: f for f in changes["files"]}
    assert set(by_path) == {"notes/todo.txt", "src/app.py", "src/main.py"}
    assert by_path["notes/todo.txt"]["status"] == "added" and "+remember" in by_path["notes/todo.txt"]["diff"]
    assert by_path["src/app.py"]["status"] == "deleted" and by_path["src/main.py"]["status"] == "added"
    assert by_path["notes/todo.txt"]["turns"] == [2]

    preview = await _rewind(daemon, session.id, toTurn=2, dryRun=True)
    assert preview["done"] is False and sorted(preview["restored"]) == ["notes/todo.txt", "src/app.py", "src/main.py"]
    assert (workspace / "notes/todo.txt").exists()  # a dry run changes nothing

    answer = await _rewind(daemon, session.id, toTurn=2)
    assert answer["done"] is True and answer["conflicts"] == [] and answer["hiddenMessages"] > 0
    assert not (workspace / "notes/todo.txt").exists() and not (workspace / "src/main.py").exists()
    assert (workspace / "src/app.py").read_text() == "def main():\n    return 42\n"
    assert (workspace / "README.md").read_text() == EDITED  # turn 1's edit stays

    # a fresh daemon replays the conversation as it now stands: turn 1 only
    other = await _daemon(spawn_daemon)
    loaded = await other.client.load_session(session.id, workspace)
    assert _texts(loaded.updates) == ["edit the readme"]

    # undo the rewind: the files and the conversation come back
    undone = await _rewind(other, session.id, toRewind=answer["rewindId"])
    assert undone["done"] is True
    assert (workspace / "notes/todo.txt").read_text() == "remember\n" and (workspace / "src/main.py").exists()
    assert not (workspace / "src/app.py").exists()
    third = await _daemon(spawn_daemon)
    reloaded = await third.client.load_session(session.id, workspace)
    assert _texts(reloaded.updates) == ["edit the readme", "write a note"]


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_a_user_edit_is_not_overwritten_unless_forced(spawn_daemon, workspace: Path, framing: str):
    daemon = await _daemon(spawn_daemon, framing=framing)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    (workspace / "README.md").write_text(EDITED + "my own line\n")

    refused = await _rewind(daemon, session.id, toTurn=1)
    assert refused["done"] is False and refused["rewindId"] is None
    (conflict,) = refused["conflicts"]
    assert conflict["path"] == "README.md"
    assert "-my own line" in conflict["diff"] and "+Hello from the sample workspace." in conflict["diff"]
    assert (workspace / "README.md").read_text() == EDITED + "my own line\n"

    forced = await _rewind(daemon, session.id, toTurn=1, force=True)
    assert forced["done"] is True and forced["restored"] == ["README.md"]
    assert (workspace / "README.md").read_text() == README
    # and the user's own text is recorded by that rewind: undoing it brings it back
    await _rewind(daemon, session.id, toRewind=forced["rewindId"])
    assert (workspace / "README.md").read_text() == EDITED + "my own line\n"


async def test_conversation_only_and_files_only(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")

    talk = await _rewind(daemon, session.id, toTurn=2, restore="conversation")
    assert talk["done"] and talk["restored"] == [] and talk["hiddenMessages"] > 0
    assert (workspace / "notes/todo.txt").exists()
    files = await _rewind(daemon, session.id, toTurn=1, restore="files")
    assert files["done"] and files["hiddenMessages"] == 0
    assert (workspace / "README.md").read_text() == README and not (workspace / "notes").joinpath("todo.txt").exists()
    # the live session goes on from turn 1: the next turn is stored after it, and a load shows two prompts
    await _prompt(session, "hello")
    other = await _daemon(spawn_daemon)
    loaded = await other.client.load_session(session.id, workspace)
    assert _texts(loaded.updates) == ["edit the readme", "hello"]


async def test_rewind_of_a_command_that_changed_files(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "run sed")
    assert (workspace / "README.md").read_text().startswith("# Changed")
    assert (workspace / "gen.txt").read_text() == "generated\n" and not (workspace / "src/app.py").exists()

    changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
    assert {f["path"]: f["status"] for f in changes["files"]} == {
        "README.md": "modified",
        "gen.txt": "added",
        "src/app.py": "deleted",
    }
    answer = await _rewind(daemon, session.id, toTurn=1, restore="files")
    assert answer["done"] and sorted(answer["restored"]) == ["README.md", "gen.txt", "src/app.py"]
    assert (workspace / "README.md").read_text() == README
    assert not (workspace / "gen.txt").exists()
    assert (workspace / "src/app.py").read_text() == "def main():\n    return 42\n"


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True, capture_output=True
    )


async def test_sed_on_a_file_git_tracks_is_rewound_from_git(spawn_daemon, workspace: Path):
    # over 256 KiB: not copied before the command; a clean tracked file's content comes from git
    big = README + "".join(f"line {i} of the sample\n" for i in range(20000))
    (workspace / "README.md").write_text(big)
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "start")
    old = time.time() - 10  # older than the index: not "racily clean"
    for name in ("README.md", "src/app.py"):
        os.utime(workspace / name, (old, old))
    _git(workspace, "update-index", "--refresh")
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "run sed")
    assert (workspace / "README.md").read_text().startswith("# Changed")
    answer = await _rewind(daemon, session.id, toTurn=1, restore="files")
    assert answer["done"] and answer["skipped"] == []
    assert (workspace / "README.md").read_text() == big


async def test_rewind_is_refused_while_a_turn_runs(spawn_daemon, workspace: Path):
    user = Allow(never=True)
    daemon = await spawn_daemon("--mode", "ask", script=SCRIPT)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("wait for me")
    turn.start()
    await until(lambda: user.asked)
    with pytest.raises(ClientError) as refused:
        await _rewind(daemon, session.id, toTurn=1)
    assert refused.value.code == -32010 and "running" in refused.value.message
    with pytest.raises(ClientError) as bad:
        await _rewind(daemon, session.id, toTurn=7)
    assert bad.value.code == -32010
    await session.cancel()
    await turn.wait()
    assert not (workspace / "wait.txt").exists()


async def test_a_turn_is_named_by_its_seq_or_its_turn_id_in_changes_and_rewind(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    first, second = session.prompt("edit the readme"), None
    await first.wait()
    second = session.prompt("write a note")
    await second.wait()
    tether = second.result["_meta"]["tether"]  # the prompt answers both names of its turn
    assert tether["turnSeq"] == 2 and tether["turnId"].startswith("turn_")
    by_id = await session.changes(tether["turnId"])
    assert by_id == await session.changes(2)
    note = next(f for f in by_id["files"] if f["path"] == "notes/todo.txt")
    assert note["turns"] == [2] and note["turnIds"] == [tether["turnId"]]
    for turn in (99, "turn_nope"):  # unknown: the same refusal as rewind's, not an empty list
        with pytest.raises(ClientError) as unknown:
            await session.changes(turn)
        assert unknown.value.code == -32602
        assert (
            f"invalid params for _tether/session/changes: turn: session {session.id} has no turn {turn!r}; "
            "its turns are 1 to 2" in unknown.value.message
        )
    with pytest.raises(ClientError) as unknown_id:
        await _rewind(daemon, session.id, toTurn="turn_nope")
    assert unknown_id.value.code == -32602 and "no turn 'turn_nope'" in unknown_id.value.message
    answer = await _rewind(daemon, session.id, toTurn=tether["turnId"])
    assert answer["done"] is True and not (workspace / "notes/todo.txt").exists()
    assert (workspace / "README.md").read_text() == EDITED  # turn 1's edit stays


async def test_bad_points_are_refused_with_what_to_send(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    for params, words in (
        ({"toTurn": 5}, "no turn 5"),
        ({"messageSeq": 1}, "not a user message"),
        ({"toRewind": 3}, "no rewind 3"),
        ({}, "exactly one of"),
        ({"toTurn": 1, "messageSeq": 0}, "exactly one of"),
        ({"toTurn": 1, "restore": "everything"}, "restore must be"),
    ):
        with pytest.raises(ClientError) as refused:
            await _rewind(daemon, session.id, **params)
        assert refused.value.code == -32602 and words in refused.value.message, (params, refused.value.message)


async def test_a_dump_and_restore_keeps_the_checkpoints(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")
    first = await _rewind(daemon, session.id, toTurn=2)
    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert snapshot["tether_snapshot"] == 1 and snapshot["checkpoints"]["rewinds"][0]["id"] == first["rewindId"]
    assert [m["seq"] for m in snapshot["messages"] if m.get("rewound")] != []

    restored = (await daemon.client.request("_tether/session/restore", {"snapshot": snapshot}))["sessionId"]
    before = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
    after = await daemon.client.request("_tether/session/changes", {"sessionId": restored})

    def by_seq(files: list[dict]) -> list[dict]:  # a restored copy's turns have ids of their own
        return [{k: v for k, v in f.items() if k != "turnIds"} for f in files]

    assert by_seq(after["files"]) == by_seq(before["files"]) and len(after["rewinds"]) == 1
    assert after["files"][0]["turnIds"] != before["files"][0]["turnIds"]
    # the copy's conversation is the rewound one, and its rewind can be undone (its own id)
    other = await _daemon(spawn_daemon)
    loaded = await other.client.load_session(restored, workspace)
    assert _texts(loaded.updates) == ["edit the readme"]
    undone = await _rewind(other, restored, toRewind=after["rewinds"][0]["rewindId"])
    assert undone["done"] and (workspace / "notes/todo.txt").read_text() == "remember\n"

    # a snapshot whose blob does not match its digest is refused
    bad = dict(snapshot, checkpoints=dict(snapshot["checkpoints"]))
    digest = next(iter(bad["checkpoints"]["blobs"]))
    bad["checkpoints"]["blobs"] = {**bad["checkpoints"]["blobs"], digest: "aGVsbG8="}
    with pytest.raises(ClientError) as refused:
        await daemon.client.request("_tether/session/restore", {"snapshot": bad})
    assert refused.value.code == -32602 and "sha256" in refused.value.message


def _sessions(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", "sessions", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_command_line_rewinds_and_shows_changes(spawn_daemon, workspace: Path, daemon_env: dict):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")
    await daemon.client.close()  # the session is not live anywhere: the CLI is the only writer

    shown = _sessions("changes", session.id, "--turn", "1", env=daemon_env, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("modified README.md  (turn 1)\n")
    assert "-Hello from the sample workspace.\n+Hello, edited by Tether.\n" in shown.stdout
    unknown = _sessions("changes", session.id, "--turn", "99", env=daemon_env, cwd=workspace)  # as the daemon says
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert f"tether sessions: session {session.id} has no turn 99; its turns are 1 to 2" in unknown.stderr

    (workspace / "notes/todo.txt").write_text("mine now\n")
    refused = _sessions("rewind", session.id, "--to", "2", env=daemon_env, cwd=workspace)
    assert refused.returncode == 3 and "changed since Tether wrote it: notes/todo.txt" in refused.stderr
    assert "-mine now" in refused.stderr and (workspace / "notes/todo.txt").exists()

    done = _sessions("rewind", session.id, "--to", "1", "--force", env=daemon_env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert "restored README.md" in done.stdout and "restored notes/todo.txt" in done.stdout
    assert (workspace / "README.md").read_text() == README and not (workspace / "notes/todo.txt").exists()
    undo = done.stdout.strip().splitlines()[-1].split("undo with: ")[1].split()
    again = subprocess.run(
        [sys.executable, "-m", *undo], env=daemon_env, cwd=workspace, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0, again.stderr
    assert (workspace / "notes/todo.txt").read_text() == "mine now\n" and (
        workspace / "README.md"
    ).read_text() == EDITED

    bad = _sessions("rewind", session.id, "--to", "9", env=daemon_env, cwd=workspace)
    assert bad.returncode == 2 and "has no turn 9" in bad.stderr


async def test_a_file_over_the_cap_is_not_recorded_and_says_so(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon("--mode", "full-auto", script=SCRIPT, env={"TETHER_CHECKPOINT_MAX_KIB": "1"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("write a big file")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    result = next(u for u in updates if u.get("toolCallId") == "call_big" and u.get("status") == "completed")
    text = result["content"][0]["content"]["text"]
    assert "not recorded, so a rewind cannot restore them: big.txt (it is larger than the 1 KiB" in text

    (change,) = (await daemon.client.request("_tether/session/changes", {"sessionId": session.id}))["files"]
    assert change["path"] == "big.txt" and "larger than the 1 KiB" in change["note"]
    # what the agent left there cannot be checked: the rewind asks for --force before deleting it
    refused = await _rewind(daemon, session.id, toTurn=1)
    assert refused["done"] is False and [c["path"] for c in refused["conflicts"]] == ["big.txt"]
    forced = await _rewind(daemon, session.id, toTurn=1, force=True)
    assert forced["done"] and not (workspace / "big.txt").exists()


async def test_across_a_restart_by_message_seq(spawn_daemon, workspace: Path):
    first = await _daemon(spawn_daemon)
    session = await first.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")
    snapshot = await first.client.request("_tether/session/dump", {"sessionId": session.id})
    await first.client.close()
    second_prompt = [m["seq"] for m in snapshot["messages"] if m["role"] == "user"][1]

    second = await _daemon(spawn_daemon)
    loaded = await second.client.load_session(session.id, workspace)
    answer = await _rewind(second, session.id, messageSeq=second_prompt)
    assert answer["done"] and not (workspace / "notes/todo.txt").exists()
    assert (workspace / "README.md").read_text() == EDITED
    await _prompt(loaded, "hello")  # the live session goes on from the point
    third = await _daemon(spawn_daemon)
    again = await third.client.load_session(session.id, workspace)
    assert _texts(again.updates) == ["edit the readme", "hello"]
    # the rewound messages stay stored and searchable
    hits = await third.client.request("_tether/session/search", {"query": "note", "cwd": str(workspace)})
    assert any(hit["sessionId"] == session.id for hit in hits["hits"])


async def test_deleting_a_session_deletes_the_contents_only_it_recorded(
    spawn_daemon, workspace: Path, tether_home: Path
):
    import sqlite3

    daemon = await _daemon(spawn_daemon)
    kept = await daemon.client.new_session(workspace)
    await _prompt(kept, "edit the readme")
    (workspace / "README.md").write_text(README)
    gone = await daemon.client.new_session(workspace)
    await _prompt(gone, "edit the readme")  # the same contents: stored once
    await _prompt(gone, "write a note")
    (database,) = tether_home.rglob("*.sqlite3")

    def blobs() -> set[bytes]:
        with sqlite3.connect(database) as conn:
            return {row[0] for row in conn.execute("SELECT data FROM file_blobs")}

    assert b"remember\n" in blobs() and b"# Sample\n\nHello, edited by Tether.\n" in blobs()
    await daemon.client.request("session/delete", {"sessionId": gone.id})
    assert b"remember\n" not in blobs()
    assert b"# Sample\n\nHello, edited by Tether.\n" in blobs()  # the other session's
    changes = await daemon.client.request("_tether/session/changes", {"sessionId": kept.id})
    assert [f["path"] for f in changes["files"]] == ["README.md"] and "+Hello, edited" in changes["files"][0]["diff"]


async def test_a_command_cancelled_while_it_ran_is_recorded_too(spawn_daemon, workspace: Path):
    daemon = await _daemon(spawn_daemon)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("generate slowly")
    turn.start()
    await until(lambda: (workspace / "gen.txt").exists())
    await session.cancel()
    await turn.wait()
    assert turn.stop_reason == "cancelled"
    changes = await daemon.client.request("_tether/session/changes", {"sessionId": session.id})
    assert [(f["path"], f["status"]) for f in changes["files"]] == [("gen.txt", "added")]
    answer = await _rewind(daemon, session.id, toTurn=1)
    assert answer["done"] and not (workspace / "gen.txt").exists()


async def _first_step_input(daemon, session_id: str, turn_id: str) -> int:
    report = await daemon.client.request("_tether/session/report", {"sessionId": session_id, "turnId": turn_id})
    return int(report["reports"][0]["steps"][0]["usage"]["inputTokens"])


async def test_a_rewind_from_the_shell_reaches_the_daemon_the_session_is_live_in(
    spawn_daemon, workspace: Path, daemon_env: dict
):
    live = await _daemon(spawn_daemon)
    session = await live.client.new_session(workspace)
    await _prompt(session, "edit the readme")
    await _prompt(session, "write a note")
    shell = _sessions("rewind", session.id, "--to", "2", "--restore", "conversation", env=daemon_env, cwd=workspace)
    assert shell.returncode == 0, shell.stderr

    # the live daemon's next turn continues from turn 1, as a fresh daemon's would
    turn = session.prompt("hello")
    await turn.wait()
    seen_live = await _first_step_input(live, session.id, turn.turn_id or "")
    await live.client.close()
    again = _sessions("rewind", session.id, "--to", "2", "--restore", "conversation", env=daemon_env, cwd=workspace)
    assert again.returncode == 0, again.stderr
    fresh = await _daemon(spawn_daemon)
    loaded = await fresh.client.load_session(session.id, workspace)
    assert _texts(loaded.updates) == ["edit the readme"]
    control = loaded.prompt("hello")
    await control.wait()
    assert seen_live == await _first_step_input(fresh, session.id, control.turn_id or "")


async def test_a_shell_rewind_is_seen_by_its_session_after_another_session_was_prompted(
    spawn_daemon, workspace: Path, daemon_env: dict
):
    # whether another process wrote is asked of SQLite per session: a prompt of another
    # session in between (which sees the same write) must not make this one miss the rewind
    live = await _daemon(spawn_daemon)
    rewound = await live.client.new_session(workspace)
    other = await live.client.new_session(workspace)
    await _prompt(rewound, "hello")
    second = rewound.prompt("hello")
    await second.wait()
    shell = _sessions("rewind", rewound.id, "--to", "2", "--restore", "conversation", env=daemon_env, cwd=workspace)
    assert shell.returncode == 0, shell.stderr
    await _prompt(other, "hello")

    # turn 2 again: the model is sent the conversation turn 2 was sent (turn 1 and the prompt)
    again = rewound.prompt("hello")
    await again.wait()
    before = await _first_step_input(live, rewound.id, second.turn_id or "")
    assert await _first_step_input(live, rewound.id, again.turn_id or "") == before
    fresh = await _daemon(spawn_daemon)
    loaded = await fresh.client.load_session(rewound.id, workspace)
    assert _texts(loaded.updates) == ["hello", "hello"]
