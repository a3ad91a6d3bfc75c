--- The chat split: the conversation (`tether://chat/…`, markdown, read-only) with the
--- prompt area under it. `<CR>` in the prompt area (normal mode) or `<C-s>` sends (queued
--- while a turn runs), `<M-CR>` sends into the running turn (steer),
--- `<C-c>` cancels the turn, `gf`/`<CR>` on a location in the chat opens it; `<C-x><C-o>`
--- on the prompt's first line completes the daemon's `/` commands.
local config = require("tether.config")
local seams = require("tether.seams")
local Transcript = require("tether.transcript")

local api = vim.api

---@class tether.Chat
---@field client tether.Client
---@field buf integer
---@field prompt_buf integer
---@field transcript tether.Transcript
local Chat = {}
Chat.__index = Chat

local M = {}

-- the chat of each prompt buffer, for the omnifunc
local by_prompt = setmetatable({}, { __mode = "v" })

--- Completion items for the `/` commands (`available_commands_update`) whose name starts
--- with `base` (the typed text, `/` included).
---@param commands table[]|nil
---@param base string
---@return table[]
function M.command_items(commands, base)
  local typed = base:gsub("^/", "")
  local items = {}
  for _, c in ipairs(commands or {}) do
    if vim.startswith(c.name, typed) then
      local hint = c.input and c.input.hint
      table.insert(items, { word = "/" .. c.name, abbr = "/" .. c.name .. (hint and (" <" .. hint .. ">") or ""),
        menu = c.description, icase = 1 })
    end
  end
  return items
end

--- 'omnifunc' of the prompt area (<C-x><C-o>): the slash commands, on its first line.
function M.omnifunc(findstart, base)
  local buf = api.nvim_get_current_buf()
  if findstart == 1 then
    local row, col = unpack(api.nvim_win_get_cursor(0))
    local line = api.nvim_get_current_line():sub(1, col)
    if row ~= 1 or not line:match("^/[%w_.:-]*$") then
      return -3
    end
    return 0
  end
  local chat = by_prompt[buf]
  local session = chat and chat.client.session
  return M.command_items(session and session.commands, base)
end

local function unique_name(base)
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s (%d)"):format(base, n)
  end
  return name
end

local function make_buf(name, filetype)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, unique_name(name))
  local bo = vim.bo[buf]
  bo.buftype, bo.bufhidden, bo.swapfile = "nofile", "hide", false
  bo.filetype = filetype
  return buf
end

---@param client tether.Client
---@return tether.Chat
function M.new(client)
  local self = setmetatable({ client = client }, Chat)
  local label = vim.fs.basename(client.root)
  self.buf = make_buf("tether://chat/" .. label, "markdown")
  vim.bo[self.buf].modifiable = false
  vim.bo[self.buf].undolevels = -1
  self.prompt_buf = make_buf("tether://prompt/" .. label, "markdown")
  by_prompt[self.prompt_buf] = self
  vim.bo[self.prompt_buf].omnifunc = "v:lua.require'tether.chat'.omnifunc"
  self.transcript = Transcript.new(self.buf, client.root)
  self:_keymaps()
  -- follow the end of the conversation while the cursor is on its last line
  api.nvim_create_autocmd("CursorMoved", {
    buffer = self.buf,
    callback = function()
      local win = api.nvim_get_current_win()
      vim.w[win].tether_follow = api.nvim_win_get_cursor(win)[1] >= api.nvim_buf_line_count(self.buf)
    end,
  })
  return self
end

function Chat:_keymaps()
  local k = config.options.keymaps
  local function map(buf, modes, lhs, fn, desc)
    if lhs then
      vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = desc, nowait = true })
    end
  end
  map(self.prompt_buf, "n", k.send, function()
    self:send()
  end, "Tether: send the prompt")
  map(self.prompt_buf, { "n", "i" }, k.send_insert, function()
    self:send()
  end, "Tether: send the prompt")
  map(self.prompt_buf, { "n", "i" }, k.steer, function()
    self:send({ steer = true })
  end, "Tether: send the prompt into the running turn")
  for _, buf in ipairs({ self.buf, self.prompt_buf }) do
    map(buf, { "n", "i" }, k.cancel, function()
      if not self.client:cancel() then
        seams.notify("Tether: no turn is running")
      end
    end, "Tether: cancel the turn")
  end
  local jumps = type(k.jump) == "table" and k.jump or { k.jump }
  for _, lhs in ipairs(jumps) do
    map(self.buf, "n", lhs, function()
      self:jump(lhs)
    end, "Tether: open the location under the cursor")
  end
  map(self.buf, "n", k.close, function()
    self:close()
  end, "Tether: close the chat")
end

--- Windows of this chat in the current tab: chat, prompt.
function Chat:windows()
  local chat_win, prompt_win
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    if buf == self.buf then
      chat_win = win
    elseif buf == self.prompt_buf then
      prompt_win = win
    end
  end
  return chat_win, prompt_win
end

function Chat:is_open()
  return self:windows() ~= nil
end

local function set_chat_window_options(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak = true, true
  wo.number, wo.relativenumber, wo.signcolumn = false, false, "no"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'tether.transcript'.foldexpr()"
  wo.foldtext = "v:lua.require'tether.transcript'.foldtext()"
  wo.foldlevel = 0
  wo.foldminlines = 0
  wo.foldenable = true
  wo.fillchars = "fold: "
  wo.conceallevel = 0
end

--- Open the split (chat above, prompt area below) and go to the prompt area.
function Chat:open()
  local chat_win, prompt_win = self:windows()
  if not chat_win then
    local width = config.options.width
    if width < 1 then
      width = math.max(30, math.floor(vim.o.columns * width))
    end
    vim.cmd("botright vsplit")
    chat_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(chat_win, self.buf)
    api.nvim_win_set_width(chat_win, width)
    set_chat_window_options(chat_win)
    pcall(api.nvim_win_set_cursor, chat_win, { api.nvim_buf_line_count(self.buf), 0 })
  end
  if not prompt_win then
    api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    prompt_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(prompt_win, self.prompt_buf)
    api.nvim_win_set_height(prompt_win, config.options.prompt_height)
    vim.wo[prompt_win].winfixheight = true
    vim.wo[prompt_win].number = false
    vim.wo[prompt_win].relativenumber = false
    vim.wo[prompt_win].signcolumn = "no"
    vim.wo[prompt_win].winbar = "Prompt · <CR> send (queued while a turn runs) · <M-CR> steer · <C-c> cancel"
  end
  api.nvim_set_current_win(prompt_win)
  if config.options.start_insert then
    vim.cmd("startinsert!")
  end
  self:refresh()
end

function Chat:close()
  local chat_win, prompt_win = self:windows()
  for _, win in ipairs({ prompt_win, chat_win }) do
    if win and api.nvim_win_is_valid(win) then
      if #api.nvim_tabpage_list_wins(0) == 1 then
        vim.cmd("enew")
      else
        api.nvim_win_close(win, false)
      end
    end
  end
end

function Chat:toggle()
  if self:is_open() then
    self:close()
  else
    self:open()
  end
end

--- Empty the conversation (new or loaded session).
function Chat:reset()
  self.transcript:reset()
  self:refresh()
end

local STATUS_TEXT = {
  stopped = "stopped",
  starting = "starting",
  idle = "idle",
  streaming = "streaming",
  approval = "waiting for approval",
}

--- The winbar: title, mode, model and status.
function Chat:refresh()
  local chat_win = self:windows()
  if not chat_win then
    return
  end
  local session = self.client.session
  local parts = { "Tether" }
  if session and session.title then
    table.insert(parts, session.title)
  end
  if session and session.mode then
    table.insert(parts, "mode " .. session.mode)
  end
  local model = self.client:option("model")
  if model and model.currentValue ~= "default" then
    table.insert(parts, "model " .. model.currentValue)
  end
  table.insert(parts, STATUS_TEXT[self.client:status()])
  vim.wo[chat_win].winbar = (table.concat(parts, " · "):gsub("%%", "%%%%"))
end

--- Send what is in the prompt area (`opts.steer`: into the running turn).
function Chat:send(opts)
  local lines = api.nvim_buf_get_lines(self.prompt_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" then
    return
  end
  self.client:prompt(text, function(err)
    if err then
      seams.notify("Tether: " .. err, vim.log.levels.WARN)
      return
    end
    api.nvim_buf_set_lines(self.prompt_buf, 0, -1, false, {})
  end, opts)
end

--- The daemon stopped (or died): say so in the conversation.
function Chat:daemon_exited(code, signal, was_running)
  local text = ("[the daemon stopped (exit code %s%s)%s]"):format(
    tostring(code),
    (signal and signal ~= 0) and (", signal " .. signal) or "",
    was_running and "; the turn it was running ended with it" or ""
  )
  self.transcript:notice(text)
  self:refresh()
end

--- A window to open files in: the last one that is not part of the chat.
local function target_window(self)
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  local function usable(win)
    if win == 0 or not api.nvim_win_is_valid(win) then
      return false
    end
    local buf = api.nvim_win_get_buf(win)
    return buf ~= self.buf and buf ~= self.prompt_buf and api.nvim_win_get_config(win).relative == ""
  end
  if usable(previous) then
    return previous
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if usable(win) then
      return win
    end
  end
  vim.cmd("topleft vsplit")
  return api.nvim_get_current_win()
end

--- Open a file at a line, in a window outside the chat.
function Chat:open_location(path, line)
  local win = target_window(self)
  api.nvim_set_current_win(win)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  if line then
    pcall(api.nvim_win_set_cursor, win, { line, 0 })
    vim.cmd("normal! zv")
  end
end

--- `gf`/`<CR>` in the chat: open the location under the cursor.
function Chat:jump(lhs)
  local lnum = api.nvim_win_get_cursor(0)[1]
  local loc = self.transcript:location_at(lnum)
  if not loc then
    -- a "path:line" written anywhere in the chat, relative to the workspace
    local word = vim.fn.expand("<cWORD>")
    local path, line = word:match("([^%s:`'\"()]+):(%d+)")
    path = path or word:match("[^%s:`'\"()]+")
    if path then
      local full = vim.startswith(path, "/") and path or (self.client.root .. "/" .. path)
      if vim.uv.fs_stat(full) then
        loc = { path = full, line = tonumber(line) }
      end
    end
  end
  if loc then
    self:open_location(loc.path, loc.line)
  elseif lhs == "<CR>" and vim.fn.foldlevel(lnum) > 0 then
    vim.cmd("normal! za")
  end
end

return M
