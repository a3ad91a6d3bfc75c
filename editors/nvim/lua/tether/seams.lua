--- The side effects the plugin uses, in one table, so tests can replace them.
---
--- Everything that starts a process, schedules work, asks the user or touches the
--- system goes through here (as codecompanion.nvim does with `vim.system` and
--- `vim.schedule`). Defaults are looked up when called, so a picker that replaces
--- `vim.ui.select` after setup (dressing.nvim, snacks.nvim) is still used.
local M = {}

--- Start the daemon: Neovim's Content-Length JSON-RPC client.
---@param cmd string[]
---@param dispatchers vim.lsp.rpc.Dispatchers
---@param opts vim.lsp.rpc.ExtraSpawnParams
---@return vim.lsp.rpc.PublicClient
function M.start_rpc(cmd, dispatchers, opts)
  return vim.lsp.rpc.start(cmd, dispatchers, opts)
end

--- Run `fn` on the main loop, soon.
function M.schedule(fn)
  vim.schedule(fn)
end

--- Run `fn` after `ms` milliseconds; returns a function that cancels it.
---@return fun()
function M.defer(fn, ms)
  local timer = assert(vim.uv.new_timer())
  timer:start(ms, 0, function()
    timer:stop()
    timer:close()
    vim.schedule(fn)
  end)
  return function()
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
end

--- Ask the user to pick one item (`vim.ui.select`).
function M.ui_select(items, opts, on_choice)
  return vim.ui.select(items, opts, on_choice)
end

--- Tell the user something (`vim.notify`).
function M.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "Tether" })
end

--- Whether a program can be run (`vim.fn.executable`).
function M.executable(name)
  return vim.fn.executable(name) == 1
end

--- Run a process to completion (`vim.system(...):wait()`).
---@return vim.SystemCompleted
function M.run(cmd, opts, timeout_ms)
  local ok, proc = pcall(vim.system, cmd, opts)
  if not ok then
    return { code = -1, signal = 0, stdout = "", stderr = tostring(proc) }
  end
  return proc:wait(timeout_ms)
end

return M
