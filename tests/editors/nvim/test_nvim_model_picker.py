"""The Neovim plugin's model picker (`:TetherModel`, vim.ui.select over the session's
`model` config option), the reasoning picker, and `/clear` opening a new session in the
same chat. Real headless Neovim, real daemon (the scripted model; the models offered come
from `initializationOptions.models`, and the run report names the model each turn used)."""

from __future__ import annotations

from nvim_driver import BOTH_ACP_VERSIONS, Nvim, open_chat

pytestmark = BOTH_ACP_VERSIONS

MODELS = {"init_options": {"models": ["small", "large"]}}


def current(nvim: Nvim, option: str) -> str | None:
    return nvim.lua("local o = require('tether').client():option(...); return o and o.currentValue", option)


def last_report_model(nvim: Nvim) -> str:
    nvim.lua(
        """
        _G.report = nil
        local c = require('tether').client()
        c:request('_tether/session/report', { sessionId = c.session.id }, function(err, res) _G.report = res or err end)
        """
    )
    reports = nvim.wait_for(lambda: nvim.lua("return _G.report"), "the run reports")["reports"]
    return reports[-1]["model"]


def test_the_model_picker_lists_the_models_and_the_next_turn_uses_the_pick(nvim: Nvim) -> None:
    open_chat(nvim, **MODELS)
    assert nvim.lua("return require('tether').option_values('model')") == ["default", "small", "large"]
    nvim.stub_select(3)
    nvim.cmd("TetherModel")
    nvim.wait_for(lambda: current(nvim, "model") == "large", "model large")
    (asked,) = nvim.selects()
    assert asked["kind"] == "tether.model"
    assert asked["items"] == ["Provider default (default)  ✓", "small", "large"]
    assert "model large" in nvim.lua("return vim.wo[require('tether').client().chat:windows()].winbar")
    nvim.send("hello")
    nvim.turn_done()
    assert last_report_model(nvim) == "large"

    nvim.cmd("TetherModel small")  # with an argument: no question
    nvim.wait_for(lambda: current(nvim, "model") == "small", "model small")
    nvim.send("hello again")
    nvim.turn_done(count=2)
    assert last_report_model(nvim) == "small"
    assert len(nvim.selects()) == 1


def test_slash_model_updates_the_picker_through_config_option_update(nvim: Nvim) -> None:
    open_chat(nvim, **MODELS)
    nvim.send("/model large")
    nvim.wait_chat("model: large")
    nvim.wait_for(lambda: current(nvim, "model") == "large", "the option updated by the daemon")


def test_the_reasoning_picker_says_when_the_model_has_none(nvim: Nvim) -> None:
    open_chat(nvim, **MODELS)
    nvim.lua("_G.notes = {}; require('tether.seams').notify = function(m) table.insert(_G.notes, m) end")
    nvim.cmd("TetherReasoning")
    nvim.wait_for(lambda: nvim.lua("return _G.notes[1]"), "a notice")
    assert "no reasoning choice" in nvim.lua("return _G.notes[1]")


def test_clear_opens_a_new_session_in_the_same_chat(nvim: Nvim) -> None:
    open_chat(nvim, **MODELS)
    nvim.cmd("TetherModel large")
    nvim.wait_for(lambda: current(nvim, "model") == "large", "model large")
    first = nvim.lua("return require('tether').client().session.id")
    nvim.send("hello")
    nvim.turn_done()
    assert "Hello! I am the scripted model." in nvim.chat_text()
    nvim.send("/clear")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.id") != first, "the new session")
    text = nvim.wait_chat("New conversation (/clear)")
    assert "Hello! I am the scripted model." not in text
    assert current(nvim, "model") == "large"  # the same choices
    nvim.wait_state("idle")
    nvim.send("hello")
    nvim.wait_chat("Hello! I am the scripted model.")
    assert nvim.lua("return require('tether').client().session.id") != first
