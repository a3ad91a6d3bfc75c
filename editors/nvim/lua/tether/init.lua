--- Tether for Neovim: chat with the Tether daemon, review its changes, load old
--- sessions. A thin client: the daemon (`tether serve`) owns the agent, the tools and
--- the history; this plugin renders and asks.
---
--- Public surface (see `:help tether`):
---   setup(opts), toggle(), open(), close(), send(text), new_session(), sessions(),
---   cancel(), steer(text), dequeue(n), rewind(restore), changes(turn), set_mode(mode), set_model(id), set_reasoning(value), option_values(id),
---   search(query), stop(cb), status(), state()
local config = require("tether.config")
local seams = require("tether.seams")
local clients = require("tether.client")

local M = {}

M.MODES = { "read-only", "ask", "auto-edit", "full-auto" }

--- Configure the plugin (optional: the defaults work with `tether` on PATH).
function M.setup(opts)
  config.setup(opts)
end

--- The client for the current workspace root, with its chat.
---@return tether.Client
function M.client()
  local client = clients.get(config.root())
  local chat = client.chat
  if not chat or not vim.api.nvim_buf_is_valid(chat.buf) or not vim.api.nvim_buf_is_valid(chat.prompt_buf) then
    -- first use, or you wiped the chat: a fresh one (the session goes on)
    if chat then
      pcall(vim.api.nvim_buf_delete, chat.buf, { force = true })
      pcall(vim.api.nvim_buf_delete, chat.prompt_buf, { force = true })
    end
    client.chat = require("tether.chat").new(client)
  end
  return client
end

local function report(err)
  if err then
    seams.notify("Tether: " .. tostring(err), vim.log.levels.ERROR)
  end
end

--- Open the chat (starting the daemon and a session when needed).
function M.open()
  local client = M.client()
  client.chat:open()
  client:ensure_session(report)
end

function M.close()
  M.client().chat:close()
end

--- `:Tether`: show or hide the chat.
function M.toggle()
  local client = M.client()
  if client.chat:is_open() then
    client.chat:close()
  else
    M.open()
  end
end

--- Send a prompt (opens the chat).
function M.send(text)
  local client = M.client()
  if not client.chat:is_open() then
    client.chat:open()
  end
  client:prompt(text, report)
end

--- `:TetherNew`: a new session in the chat.
function M.new_session()
  local client = M.client()
  if not client.chat:is_open() then
    client.chat:open()
  end
  client:new_session(report)
end

local function local_time(iso)
  if type(iso) ~= "string" then
    return "?"
  end
  local y, mo, d, h, mi, s = iso:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return iso
  end
  local utc = os.time({ year = y, month = mo, day = d, hour = h, min = mi, sec = s, isdst = false })
  local offset = os.time() - os.time(os.date("!*t") --[[@as osdateparam]])
  return os.date("%Y-%m-%d %H:%M", utc + offset)
end

--- Load a stored session into the chat (replaying it); `cb()` when it is shown.
function M.load_session(session_id, cb)
  local client = M.client()
  if not client.chat:is_open() then
    client.chat:open()
  end
  client:load_session(session_id, function(err)
    report(err)
    if cb and not err then
      cb()
    end
  end)
end

--- One line for a picker: vim.ui.select items must not hold newlines (one-line pickers
--- such as the default inputlist, fzf-lua or telescope break on them).
local function one_line(text)
  return (tostring(text or ""):gsub("%s*[\r\n]+%s*", " "))
end

--- `:TetherSessions`: pick a stored session of this workspace and load it.
function M.sessions()
  local client = M.client()
  client:list_sessions(function(err, sessions)
    if err then
      return report(err)
    end
    if #sessions == 0 then
      seams.notify("Tether: no stored sessions in " .. client.root)
      return
    end
    seams.ui_select(sessions, {
      prompt = "Tether sessions",
      kind = "tether.session",
      format_item = function(item)
        return ("%s  %s"):format(local_time(item.updatedAt), one_line(item.title or "(untitled)"))
      end,
    }, function(choice)
      if choice then
        M.load_session(choice.sessionId)
      end
    end)
  end)
end

--- `:TetherSteer {text}`: send a message into the running turn (it lands at the next
--- step boundary and is shown there); with no turn running it is an ordinary prompt.
function M.steer(text)
  local client = M.client()
  if not client.chat:is_open() then
    client.chat:open()
  end
  client:prompt(text, report, { steer = true })
end

--- `:TetherDequeue [n]`: withdraw queued prompt `n` (1 = the oldest); asks which without `n`.
function M.dequeue(n)
  local client = M.client()
  local queue = client.session and client.session.queue or {}
  if #queue == 0 then
    return seams.notify("Tether: no prompt is queued")
  end
  local function withdraw(item)
    if item then
      client:request("_tether/session/dequeue", { sessionId = client.session.id, queueId = item.queueId }, function(err)
        if not err then
          client:dequeued(item)
        end
        report(err and (err.message or tostring(err)))
      end)
    end
  end
  if n then
    local item = queue[n]
    if not item then
      return report(("there is no queued prompt %d (%d queued)"):format(n, #queue))
    end
    return withdraw(item)
  end
  seams.ui_select(queue, {
    prompt = "Tether: withdraw a queued prompt",
    kind = "tether.queue",
    format_item = function(item)
      return one_line(item.preview)
    end,
  }, withdraw)
end

--- The chat line the cursor is on (the current window's, else the chat window's), or nil.
local function chat_line(client)
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(win) ~= client.chat.buf then
    win = client.chat:windows()
  end
  return win and vim.api.nvim_win_get_cursor(win)[1] or nil
end

--- `:TetherRewind [conversation|files|both]`: rewind to just before your message under
--- the cursor in the chat, after a confirmation listing the files it restores.
function M.rewind(restore)
  local client = M.client()
  local lnum = chat_line(client)
  if not lnum then
    return report("open the chat (:Tether) and put the cursor on one of your messages")
  end
  require("tether.rewind").rewind(client, lnum, restore)
end

--- `:TetherChanges [turn]`: the files a turn changed, with diffs (no turn: the turn of your
--- message under the cursor in the chat, else the whole session).
function M.changes(turn)
  local client = M.client()
  local in_chat = vim.api.nvim_get_current_buf() == client.chat.buf
  require("tether.rewind").changes(client, tonumber(turn), in_chat and chat_line(client) or nil)
end

--- `:TetherRules`: the workspace's approval rules; pick one you stored to remove it.
function M.rules()
  require("tether.rules").pick(M.client())
end

--- `:TetherCancel`: cancel the running turn.
function M.cancel()
  if not M.client():cancel() then
    seams.notify("Tether: no turn is running")
  end
end

--- `:TetherMode {mode}`: change the session's mode (asks when `mode` is nil).
function M.set_mode(mode)
  local client = M.client()
  local function apply(choice)
    if choice then
      client:set_mode(choice, function(err)
        if err then
          report(err)
        else
          seams.notify("Tether: mode " .. choice)
        end
      end)
    end
  end
  if mode and mode ~= "" then
    apply(mode)
  else
    seams.ui_select(M.MODES, { prompt = "Tether mode", kind = "tether.mode" }, apply)
  end
end

--- The values of the session's config option `id` (for completion), [] without a session.
function M.option_values(id)
  local option = M.client():option(id)
  local values = {}
  for _, o in ipairs(option and option.options or {}) do
    table.insert(values, o.value)
  end
  return values
end

--- Set config option `id` to `value`, or pick it with vim.ui.select over the option's
--- values (the current one marked) when `value` is nil or "".
local function pick_option(id, label, value)
  local client = M.client()
  local function apply(choice)
    if choice then
      client:set_config_option(id, choice, function(err)
        if err then
          report(err)
        else
          seams.notify(("Tether: %s %s (from the next turn)"):format(label, choice))
        end
      end)
    end
  end
  if value and value ~= "" then
    return apply(value)
  end
  client:ensure_session(function(err)
    if err then
      return report(err)
    end
    local option = client:option(id)
    if not option then
      return seams.notify(("Tether: this session has no %s choice (the model or provider has none)"):format(label))
    end
    seams.ui_select(option.options, {
      prompt = "Tether " .. label,
      kind = "tether." .. id,
      format_item = function(item)
        local name = item.name ~= item.value and (item.name .. " (" .. item.value .. ")") or item.value
        return name .. (item.value == option.currentValue and "  ✓" or "")
      end,
    }, function(choice)
      apply(choice and choice.value)
    end)
  end)
end

--- `:TetherModel {id}`: the session's model from the next turn (asks when `id` is nil:
--- the configured models and what the provider lists).
function M.set_model(model)
  pick_option("model", "model", model)
end

--- `:TetherReasoning {value}`: the reasoning effort / thinking budget, where the model has one.
function M.set_reasoning(value)
  pick_option("reasoning", "reasoning", value)
end

--- `:TetherSearch {text}`: search every session of this workspace, open the one picked.
function M.search(query)
  local client = M.client()
  client:search(query, function(err, hits)
    if err then
      return report(err)
    end
    if #hits == 0 then
      seams.notify("Tether: nothing found for " .. query)
      return
    end
    seams.ui_select(hits, {
      prompt = "Tether: " .. query,
      kind = "tether.search",
      format_item = function(hit)
        -- the daemon marks matches `[[…]]`; a picker item is plain text, so they go
        local snippet = one_line(hit.snippet):gsub("%[%[(.-)%]%]", "%1")
        return ("%s · %s: %s"):format(one_line(hit.sessionTitle or "(untitled)"), hit.role, snippet)
      end,
    }, function(hit)
      if not hit then
        return
      end
      M.load_session(hit.sessionId, function()
        -- put the cursor on the first match in the replayed conversation
        local term = (hit.snippet or ""):match("%[%[(.-)%]%]") or query
        local chat_win = client.chat:windows()
        if chat_win then
          vim.api.nvim_set_current_win(chat_win)
          vim.w[chat_win].tether_follow = false
          vim.api.nvim_win_set_cursor(chat_win, { 1, 0 })
          vim.fn.search("\\V\\c" .. vim.fn.escape(term, "\\"), "cW")
          vim.cmd("normal! zv")
        end
      end)
    end)
  end)
end

--- Stop the daemon of this workspace (it is started again when needed).
function M.stop(cb)
  M.client():stop(cb)
end

--- The state of this workspace's daemon: "stopped", "starting", "idle", "streaming" or
--- "approval".
function M.state()
  local client = clients.clients[config.root()]
  return client and client:status() or "stopped"
end

local STATUS = {
  starting = "tether: starting",
  idle = "tether: idle",
  streaming = "tether: streaming",
  approval = "tether: waiting for approval",
}

--- A statusline component: "tether: starting", "tether: idle", "tether: streaming",
--- "tether: waiting for approval", or "" when the daemon is not running.
function M.status()
  return STATUS[M.state()] or ""
end

--- Stop every daemon (Neovim is exiting).
function M._stop_all()
  for _, client in pairs(clients.clients) do
    client:stop_now()
  end
end

return M
