--- Asking you before the agent changes something (`session/request_permission`).
---
--- File changes open a tab with the current text and the proposed text side by side
--- in diff mode, with keys to accept, accept always, reject or reject always.
--- Commands show the command and its directory through `vim.ui.select`, so a picker
--- plugin restyles the question. A request the daemon withdraws (the turn was
--- cancelled) closes its tab; a late answer to a withdrawn question is not sent.
local config = require("tether.config")
local blocks = require("tether.blocks")
local seams = require("tether.seams")

local api = vim.api

local M = {}

---@class tether.Approval
---@field request_id string
---@field params table
---@field done fun(result: table)
---@field finished boolean
---@field on_finish fun()
---@field tab? integer
---@field bufs integer[]
local Approval = {}
Approval.__index = Approval

local function option_id(params, kind)
  for _, option in ipairs(params.options or {}) do
    if option.kind == kind then
      return option.optionId
    end
  end
  return kind
end

--- Answer with one of the request's options (by kind), once.
function Approval:answer(kind)
  if self:_finish() then
    self.done({ outcome = { outcome = "selected", optionId = option_id(self.params, kind) } })
  end
end

--- The daemon no longer waits for this answer: close the question without answering.
function Approval:withdraw()
  self:_finish()
end

--- Close the question, once: true the first time.
function Approval:_finish()
  if self.finished then
    return false
  end
  self.finished = true
  self:_close_ui()
  self.on_finish()
  return true
end

function Approval:_close_ui()
  local tab = self.tab
  self.tab = nil
  if tab and api.nvim_tabpage_is_valid(tab) then
    if #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(tab))
    end
  end
  for _, buf in ipairs(self.bufs) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

local function text_of(content)
  local out = {}
  for _, item in ipairs(content or {}) do
    if item.type == "content" and type(item.content) == "table" and item.content.type == "text" then
      table.insert(out, item.content.text)
    end
  end
  return table.concat(out, "\n")
end

local function diffs_of(content)
  local out = {}
  for _, item in ipairs(content or {}) do
    if item.type == "diff" then
      table.insert(out, item)
    end
  end
  return out
end

local function scratch(name, text, filetype)
  local buf = api.nvim_create_buf(false, true)
  local lines = blocks.split(text)
  if lines[#lines] == "" and #lines > 1 then
    table.remove(lines)
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  pcall(api.nvim_buf_set_name, buf, name)
  local bo = vim.bo[buf]
  bo.buftype, bo.bufhidden, bo.swapfile, bo.modifiable = "nofile", "wipe", false, false
  if filetype then
    bo.filetype = filetype
  end
  return buf
end

local function keys_help()
  local k = config.options.keymaps
  local parts = {}
  for _, item in ipairs({
    { k.accept, "accept" },
    { k.accept_always, "always" },
    { k.reject, "reject" },
    { k.reject_always, "reject always" },
    { k.dismiss, "reject" },
  }) do
    if item[1] then
      table.insert(parts, item[1] .. " " .. item[2])
    end
  end
  return table.concat(parts, "  ")
end

--- The review tab: current text | proposed text, in diff mode.
function Approval:_review(diffs, root)
  local old, new, ft
  if #diffs == 1 then
    old, new = diffs[1].oldText or "", diffs[1].newText or ""
    ft = vim.filetype.match({ filename = diffs[1].path })
  else
    local olds, news = {}, {}
    for _, item in ipairs(diffs) do
      local head = "=== " .. blocks.relpath(item.path, root) .. " ==="
      table.insert(olds, head .. "\n" .. (item.oldText or ""))
      table.insert(news, head .. "\n" .. (item.newText or ""))
    end
    old, new = table.concat(olds, "\n"), table.concat(news, "\n")
  end
  local label = blocks.relpath(diffs[1].path, root)
  local base = ("tether://review/%s/"):format(self.request_id)
  local left = scratch(base .. "current/" .. label, old, ft)
  local right = scratch(base .. "proposed/" .. label, new, ft)
  self.bufs = { left, right }

  -- keys are for normal mode (you may have been typing in the prompt area)
  vim.cmd("stopinsert")
  vim.cmd("tab sbuffer " .. left)
  local left_win = api.nvim_get_current_win()
  self.tab = api.nvim_get_current_tabpage()
  vim.cmd("rightbelow vertical sbuffer " .. right)
  local right_win = api.nvim_get_current_win()
  local title = (self.params.toolCall and self.params.toolCall.title) or "Change"
  local reason = vim.tbl_get(self.params, "_meta", "tether", "reason")
  for _, win in ipairs({ left_win, right_win }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
    vim.wo[win].foldenable = true
  end
  local function bar(text)
    return (text:gsub("%%", "%%%%"))
  end
  vim.wo[left_win].winbar = bar("Tether: " .. title .. " · current" .. (reason and (" · " .. reason) or ""))
  -- what "always" stores and allows, before it is pressed
  local always = vim.tbl_get(self.params, "_meta", "tether", "allowAlways", "text")
  vim.wo[right_win].winbar = bar("proposed · " .. keys_help() .. (always and (" · always: " .. always) or ""))

  local k = config.options.keymaps
  for _, buf in ipairs(self.bufs) do
    for _, map in ipairs({
      { k.accept, "allow_once", "Tether: accept this change" },
      { k.accept_always, "allow_always", "Tether: accept, and always allow such changes" },
      { k.reject, "reject_once", "Tether: reject this change" },
      { k.reject_always, "reject_always", "Tether: reject, and always reject such changes" },
      { k.dismiss, "reject_once", "Tether: reject this change" },
    }) do
      if map[1] then
        vim.keymap.set("n", map[1], function()
          self:answer(map[2])
        end, { buffer = buf, nowait = true, desc = map[3] })
      end
    end
    -- closing the tab any other way rejects the change
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        seams.schedule(function()
          self:answer("reject_once")
        end)
      end,
    })
  end
end

local SELECT_ITEMS = {
  { label = "Allow once", kind = "allow_once" },
  { label = "Allow always", kind = "allow_always" },
  { label = "Reject", kind = "reject_once" },
}

--- The question for a command (or anything without a diff): `vim.ui.select`.
function Approval:_select(with_reject_always)
  local call = self.params.toolCall or {}
  local text = text_of(call.content)
  local question = call.title or "the tool call"
  if text ~= "" then
    -- one line for one-line pickers, but every line of the command stays visible: a
    -- multi-line command must not pass for a harmless one-liner
    local lines = vim.split(text, "\n", { plain = true })
    local where = ""
    if #lines > 1 and lines[#lines]:match("^%(in .*%)$") then
      where = " " .. table.remove(lines)
    end
    question = table.concat(lines, " ⏎ ") .. where
  end
  local items = vim.deepcopy(SELECT_ITEMS)
  for _, option in ipairs(self.params.options or {}) do
    if option.optionId == "allow_always" and option.name then
      -- what the rule it stores allows, as the daemon says it (SPEC §5.9)
      items[2].label = option.name
    end
    if option.optionId == "allow_once_network" then
      -- a sandboxed command runs without the network unless this is picked
      table.insert(items, 2, { label = option.name or "Allow once, with network", kind = "allow_once", id = option.optionId })
    end
  end
  if with_reject_always then
    table.insert(items, { label = "Reject always", kind = "reject_always" })
  end
  local labels = vim.tbl_map(function(item)
    return item.label
  end, items)
  seams.ui_select(labels, {
    prompt = ("Tether: %s — allow?"):format(question),
    kind = "tether.permission",
  }, function(choice, idx)
    if self.finished then
      return
    end
    local picked = idx and items[idx] or nil
    if not picked and choice then
      for _, item in ipairs(items) do
        if item.label == choice then
          picked = item
        end
      end
    end
    if picked and picked.id then
      if self:_finish() then
        self.done({ outcome = { outcome = "selected", optionId = picked.id } })
      end
      return
    end
    self:answer(picked and picked.kind or "reject_once")
  end)
end

--- Ask the user about a `session/request_permission`.
---@param request_id string the daemon's id of the request ("tether-N")
---@param params table the request's params
---@param root string the workspace root (paths are shown relative to it)
---@param done fun(result: table) called once with the answer (never if withdrawn)
---@param on_finish fun() called once when the question is closed, answered or not
---@return tether.Approval
function M.ask(request_id, params, root, done, on_finish)
  local self = setmetatable({
    request_id = request_id,
    params = params,
    done = done,
    on_finish = on_finish,
    finished = false,
    bufs = {},
  }, Approval)
  local call = params.toolCall or {}
  local diffs = diffs_of(call.content)
  if #diffs > 0 then
    self:_review(diffs, root)
  else
    self:_select(call.kind ~= "execute")
  end
  return self
end

return M
