"""Real Emacs (Debian's `emacs-nox`) with Debian's stock eglot (`elpa-eglot`), nothing of
Tether's: `eglot_drive.el` loads the README's snippet (with this test's daemon and mode)
and answers where Emacs asks the user. A code action ("Ask Tether about this", its question picked from the preset
ones), a prompt through the README's `tether-ask` (`workspace/executeCommand`), the approval, the edit in the buffer,
and the steps in eglot's log (eglot 1.9 declares no work-done progress)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


REPO = HERE.parents[1]


def readme_block(after: str, language: str) -> str:
    """The first ```language block of the README after the line starting with `after`."""
    text = (REPO / "README.md").read_text()
    start = text.index(after)
    block = re.search(rf"```{language}\n(.*?)```", text[start:], re.S)
    assert block, f"no {language} block after {after!r} in README.md"
    return block.group(1)


def run_emacs(workspace: Path, env: dict[str, str], tmp_path: Path) -> dict:
    emacs = shutil.which("emacs")
    assert emacs, "emacs not found: tests/install-deps installs Debian's emacs-nox and elpa-eglot"
    out = tmp_path / "eglot-out.json"
    server = [
        sys.executable,
        "-m",
        "tether",
        "serve",
        "--provider",
        "scripted",
        "--script",
        str(HERE / "lsp-agent.json"),
    ]
    # the README's snippet, with this test's daemon (and python-mode, which the test opens)
    snippet = readme_block("**Emacs (eglot).**", "elisp")
    assert '\'((markdown-mode text-mode) . ("tether" "serve"))' in snippet
    contact = "(" + " ".join(json.dumps(arg) for arg in server) + ")"
    snippet = snippet.replace('\'((markdown-mode text-mode) . ("tether" "serve"))', f"'(python-mode . {contact})")
    (tmp_path / "readme-snippet.el").write_text(snippet)
    env = {
        **env,
        "TETHER_EGLOT_WORKSPACE": str(workspace),
        "TETHER_EGLOT_OUT": str(out),
        "TETHER_EGLOT_README": str(tmp_path / "readme-snippet.el"),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [emacs, "--batch", "-l", str(HERE / "eglot_drive.el")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and out.exists(), done.stderr[-3000:]
    return json.loads(out.read_text())


def test_eglot_asks_tether_edits_and_shows_the_answers(workspace: Path, daemon_env: dict[str, str], tmp_path):
    seen = run_emacs(workspace, daemon_env, tmp_path)
    assert seen["capabilities"]["executeCommandProvider"]["commands"][0] == "tether.ask"
    asked = seen["asked"]
    # the code action menu, the preset question, the approval, eglot's "proceed with the edit?"
    assert asked[0].startswith("[eglot] Pick an action (default Ask Tether about this)")
    assert "Tether: what should I ask about `src/app.py` lines 1-2?" in asked[1]
    assert "Tether: Edit README.md" in asked[2] and "mode ask asks before editing README.md" in asked[2]
    assert asked[3].startswith("[eglot] Server wants to edit:")
    assert len(asked) == 4
    # the edit is in the buffer, unsaved, and not on disk: the editor owns it
    assert seen["readme-buffer"] == "# Sample\n\nHello, edited by Tether.\n"
    assert seen["readme-modified"] is True
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()
    notes = [(method, params) for method, params in seen["seen"]]
    shown = [p["message"] for m, p in notes if m == "window/showMessage"]
    assert shown == ["Tether: It returns 42.", "Tether: Done: the README says hello from Tether."]
    steps = [p["message"] for m, p in notes if m == "window/logMessage" and p["type"] == 4]
    assert steps[0].startswith("Tether: What does this do? About `src/app.py` lines 1-2:")
    assert steps[1:] == [
        "Tether: done",
        "Tether: edit the readme",
        "Tether: Read README.md: done",
        "Tether: Edit README.md: done",
        "Tether: done",
    ]
    assert seen["started"]["turnId"].startswith("turn_")
    # the transcript is in Tether's data dir, never in the workspace
    assert not list(workspace.rglob("*.md"))[1:]  # README.md only
    (transcript,) = (Path(daemon_env["TETHER_HOME"]) / "workspaces").glob("*/transcripts/*.md")
    text = transcript.read_text()
    assert text.index("What does this do?") < text.index("## You\n\nedit the readme")
    assert "> **Edit README.md** (done)" in text
