"""The Neovim plugin, unchanged, in two real Neovims sharing one daemon (`TETHER_SHARED=1`),
each speaking ACP v2 to it."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "editors" / "nvim"))

import contextlib

from nvim_driver import Nvim, open_chat


def test_two_neovims_chat_through_one_shared_daemon(shared_env: dict[str, str], workspace: Path, tmp_path: Path):
    env = {**shared_env, "TETHER_SHARED": "1"}
    runtime = Path(env["XDG_RUNTIME_DIR"]) / "tether"
    editors = [Nvim(workspace, env, tmp_path), Nvim(workspace, env, tmp_path)]
    try:
        for nvim in editors:
            open_chat(nvim)
        pids = [int(p.read_text()) for p in runtime.glob("*.pid")]
        assert len(pids) == 1 and len(list(runtime.glob("*.sock"))) == 1  # one daemon for both
        for nvim in editors:
            nvim.send("hello there")
            assert "Hello" in nvim.turn_done()
        # both sessions are in the one history, each window's own
        sessions = [e.lua("return require('tether').client().session.id") for e in editors]
        assert len(set(sessions)) == 2
        # both windows asked for ACP v2 and the shared daemon speaks it to each
        assert [
            e.lua("local c = require('tether').client(); return {c.info.protocolVersion, c.turn_state}")
            for e in editors
        ] == [[2, "idle"], [2, "idle"]]
    finally:
        for nvim in editors:
            nvim.close()
        for pid_file in runtime.glob("*.pid"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
