""":checkhealth tether and :help tether in real Neovim."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from nvim_driver import PLUGIN, Nvim, serve_command

if TYPE_CHECKING:
    from pathlib import Path


def checkhealth(nvim: Nvim) -> str:
    return nvim.lua(
        """
        vim.cmd("checkhealth tether")
        return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n")
        """
    )


def test_checkhealth_reports_a_missing_daemon_clearly(nvim: Nvim) -> None:
    nvim.setup(cmd=["tether-not-installed-here", "serve"])
    report = checkhealth(nvim)
    assert "ERROR daemon not found: `tether-not-installed-here`" in report
    assert "setup({ cmd = " in report and "is not an executable program" in report
    assert "pip install tether" in report
    # nothing else is claimed about a daemon that is not there
    assert "provider:" not in report


def test_checkhealth_reports_version_provider_workspace_and_database(
    nvim: Nvim, workspace: Path, tether_home: Path
) -> None:
    nvim.setup(cmd=serve_command())
    report = checkhealth(nvim)
    assert "OK tether 0.1.0 found: `" in report
    assert "OK provider: scripted (provider = scripted (flag --provider))" in report
    assert f"OK workspace: {workspace}" in report
    assert f"OK history database: {tether_home}" in report and "history.sqlite3" in report
    assert "ERROR" not in report


def test_checkhealth_reports_a_missing_provider(nvim: Nvim) -> None:
    nvim.setup(cmd=serve_command()[:4])  # python -m tether serve, no provider
    report = checkhealth(nvim)
    assert "OK tether 0.1.0 found" in report
    assert "ERROR no model provider configured: no model provider is configured" in report


def test_checkhealth_lists_running_daemons(nvim: Nvim, workspace: Path) -> None:
    nvim.setup()
    nvim.cmd("Tether")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session ~= nil"), "a session")
    report = checkhealth(nvim)
    assert f"{workspace}: idle, sess_" in report


def test_help_tags_build_cleanly_and_help_opens(nvim: Nvim, tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    nvim.lua("vim.cmd('helptags ' .. vim.fn.fnameescape(...))", str(doc))
    assert nvim.lua("return vim.v.errmsg") == ""
    tags = (doc / "tags").read_text().splitlines()
    names = {line.split("\t")[0] for line in tags}
    for tag in (
        "tether",
        ":Tether",
        ":TetherSessions",
        ":TetherCancel",
        ":TetherMode",
        ":TetherSearch",
        "tether-setup",
        "tether-statusline",
    ):
        assert tag in names, tag
    nvim.lua("vim.opt.runtimepath:prepend(...)", str(tmp_path))
    nvim.cmd("help tether")
    assert nvim.lua("return vim.bo.filetype") == "help"
    assert nvim.lua("return vim.fn.expand('%:t')") == "tether.txt"


def test_tether_with_a_missing_daemon_says_so_and_points_to_checkhealth(nvim: Nvim) -> None:
    nvim.setup(cmd=["tether-not-installed-here", "serve"])
    nvim.lua(
        "_G.notes = {}; require('tether.seams').notify = function(msg, level) table.insert(_G.notes, { msg, level }) end"
    )
    nvim.cmd("Tether")
    nvim.wait_for(lambda: nvim.lua("return #_G.notes") > 0, "an error message")
    ((message, level),) = nvim.lua("return _G.notes")
    assert message.startswith("Tether: could not start the daemon `tether-not-installed-here serve`")
    assert "see :checkhealth tether" in message
    assert level == 4  # vim.log.levels.ERROR
    assert nvim.state() == "stopped"
