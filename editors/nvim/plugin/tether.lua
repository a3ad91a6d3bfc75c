-- Tether: commands and the daemon's lifetime. Nothing is started until a command runs.
if vim.g.loaded_tether then
  return
end
vim.g.loaded_tether = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.notify("tether.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

local function tether()
  return require("tether")
end

local command = vim.api.nvim_create_user_command

command("Tether", function(opts)
  if opts.args ~= "" then
    tether().send(opts.args)
  else
    tether().toggle()
  end
end, { nargs = "*", desc = "Tether: show or hide the chat; with text, send it" })

command("TetherNew", function()
  tether().new_session()
end, { desc = "Tether: start a new session" })

command("TetherSessions", function()
  tether().sessions()
end, { desc = "Tether: pick a stored session and load it" })

command("TetherCancel", function()
  tether().cancel()
end, { desc = "Tether: cancel the running turn" })

command("TetherSteer", function(opts)
  tether().steer(opts.args)
end, { nargs = "+", desc = "Tether: send a message into the running turn (at its next step)" })

command("TetherDequeue", function(opts)
  tether().dequeue(tonumber(opts.args))
end, { nargs = "?", desc = "Tether: withdraw a queued prompt (no argument: pick one)" })

command("TetherRewind", function(opts)
  tether().rewind(opts.args)
end, {
  nargs = "?",
  complete = function()
    return { "both", "conversation", "files" }
  end,
  desc = "Tether: rewind to before your message under the cursor (conversation, files or both)",
})

command("TetherChanges", function(opts)
  tether().changes(opts.args ~= "" and opts.args or nil)
end, { nargs = "?", desc = "Tether: the files a turn (or the session) changed, with diffs" })

command("TetherMode", function(opts)
  tether().set_mode(opts.args)
end, {
  nargs = "?",
  complete = function()
    return tether().MODES
  end,
  desc = "Tether: set the session's mode (read-only, ask, auto-edit, full-auto)",
})

command("TetherModel", function(opts)
  tether().set_model(opts.args)
end, {
  nargs = "?",
  complete = function()
    return tether().option_values("model")
  end,
  desc = "Tether: the session's model from the next turn (no argument: pick one)",
})

command("TetherReasoning", function(opts)
  tether().set_reasoning(opts.args)
end, {
  nargs = "?",
  complete = function()
    return tether().option_values("reasoning")
  end,
  desc = "Tether: the reasoning effort / thinking budget, where the model has one",
})

command("TetherSearch", function(opts)
  tether().search(opts.args)
end, { nargs = "+", desc = "Tether: search the stored sessions of this workspace" })

command("TetherRules", function()
  tether().rules()
end, { desc = "Tether: the approval rules of this workspace; pick one you stored to remove it" })

command("TetherStop", function()
  tether().stop()
end, { desc = "Tether: stop this workspace's daemon" })

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("tether.lifetime", { clear = true }),
  callback = function()
    if package.loaded["tether"] then
      require("tether")._stop_all()
    end
  end,
})
