--- One daemon per workspace root: its process, the handshake, the current session and
--- its turn.
---
--- The daemon is started with `vim.lsp.rpc.start` (through `tether.seams`), and
--- initialized as both an ACP and an LSP client: ACP's `protocolVersion` gets approvals
--- as `session/request_permission`, LSP's `workspace.applyEdit` gets accepted edits as
--- `workspace/applyEdit` into the buffers (SPEC §2.2). It asks for ACP v2 and speaks
--- what the daemon answers (v1 from a v1-only daemon; `tether.acp_v2` turns v2 into what
--- the chat shows). It stops with Neovim.
local config = require("tether.config")
local seams = require("tether.seams")
local methods = require("tether.methods")
local DocSync = require("tether.docsync")
local acp_v2 = require("tether.acp_v2")

local M = {}

M.VERSION = "0.1.0"

---@class tether.Client
---@field root string
---@field rpc? vim.lsp.rpc.PublicClient
---@field state "stopped"|"starting"|"ready"
---@field session? {id: string, modes?: table, mode?: string, title?: string, options?: table}
---@field v2? boolean the daemon answered `initialize` in ACP v2
---@field turn? {running: boolean, id?: string, usage?: table}
---@field approvals table<string, tether.Approval>
---@field chat? tether.Chat
local Client = {}
Client.__index = Client

---@type table<string, tether.Client>
M.clients = {}

---@return tether.Client
function M.get(root)
  local client = M.clients[root]
  if not client then
    client = setmetatable({
      root = root,
      state = "stopped",
      approvals = {},
      queue = {},
      waiting = {}, -- prompts sent while a turn ran: queued by the daemon, oldest first
      steers = {}, -- messages steered into the running turn, not answered yet
      server_requests = 0,
      listeners = {},
    }, Client)
    M.clients[root] = client
  end
  return client
end

-- status ---------------------------------------------------------------------------

--- "stopped", "starting", "idle", "streaming" or "approval".
function Client:status()
  if self.state ~= "ready" then
    return self.state
  end
  if next(self.approvals) then
    return "approval"
  end
  if self.turn and self.turn.running then
    return "streaming"
  end
  return "idle"
end

function Client:changed()
  if self.chat then
    self.chat:refresh()
  end
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "TetherStatus", modeline = false })
  pcall(vim.cmd.redrawstatus)
end

-- process and handshake ---------------------------------------------------------------

local function empty_object(t)
  return next(t) == nil and vim.empty_dict() or t
end

function Client:_initialize_params()
  local opts = vim.deepcopy(config.options.init_options or {})
  if config.options.mode and opts.mode == nil then
    opts.mode = config.options.mode
  end
  local uri = vim.uri_from_fname(self.root)
  return {
    -- ACP (v2's `info` and `capabilities._meta` are added by tether.acp_v2)
    protocolVersion = acp_v2.VERSION,
    clientCapabilities = {
      fs = { readTextFile = false, writeTextFile = false },
      -- the approval picker lists options by name: "Allow once, with network" is told apart
      -- `/clear` opens a new session in this chat (`_tether/session/cleared`)
      _meta = { tether = { namedPermissionOptions = true, clearSession = true } },
    },
    clientInfo = { name = "tether.nvim", title = "Neovim", version = M.VERSION },
    -- LSP
    processId = vim.fn.getpid(),
    rootUri = uri,
    rootPath = self.root,
    workspaceFolders = { { uri = uri, name = vim.fs.basename(self.root) } },
    capabilities = {
      workspace = {
        applyEdit = true,
        workspaceEdit = { documentChanges = true, resourceOperations = { "create" } },
      },
    },
    initializationOptions = next(opts) and opts or nil,
  }
end

function Client:_dispatchers()
  local client = self
  return {
    notification = function(method, params)
      local handler = methods.notifications[method]
      if handler then
        handler(client, params or {})
      end
    end,
    server_request = function(method, params)
      -- Tether numbers its requests "tether-1", "tether-2", … per connection, and
      -- they reach this handler in order: that is how a withdrawal is matched.
      client.server_requests = client.server_requests + 1
      local request_id = "tether-" .. client.server_requests
      local handler = methods.requests[method]
      if not handler then
        return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
      end
      return handler(client, params or {}, request_id)
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        client:_on_exit(code, signal)
      end)
    end,
    on_error = function(code, err)
      -- a bug in a handler of this plugin, or a message that is not JSON-RPC
      seams.notify(("Tether: %s: %s"):format(vim.lsp.rpc.client_errors[code] or code, tostring(err)), vim.log.levels.ERROR)
    end,
  }
end

--- Start the daemon (if needed); `cb(err)` once it is initialized.
function Client:start(cb)
  if self.state == "ready" then
    cb(nil)
    return
  end
  table.insert(self.listeners, cb)
  if self.state == "starting" then
    return
  end
  self.state = "starting"
  self.server_requests = 0
  local ok, rpc = pcall(seams.start_rpc, config.options.cmd, self:_dispatchers(), {
    cwd = self.root,
    env = config.options.cmd_env,
  })
  if not ok then
    self:_ready(("could not start the daemon `%s`: %s (see :checkhealth tether)"):format(
      table.concat(config.options.cmd, " "),
      tostring(rpc)
    ))
    return
  end
  self.rpc = rpc
  self:changed()
  rpc.request("initialize", acp_v2.initialize_params(self:_initialize_params()), function(err, result)
    if err then
      self:_ready("the daemon refused initialize: " .. (err.message or tostring(err)))
      self:stop()
      return
    end
    self.info = result
    self.v2 = acp_v2.speaks_v2(result)
    self.terminals = {}
    self.show = function(update) -- what acp_v2.lua made of a v2 update
      self:_show_update(update)
    end
    rpc.notify("initialized", vim.empty_dict())
    self.state = "ready"
    self.docsync = DocSync.new(self, config.options.sync_debounce_ms)
    self.docsync:start()
    self:_ready(nil)
  end)
end

function Client:_ready(err)
  if err then
    self.state = "stopped"
    self.rpc = nil
  end
  local listeners = self.listeners
  self.listeners = {}
  for _, cb in ipairs(listeners) do
    cb(err)
  end
  self:changed()
end

--- Send a request; `cb(err, result)` on the main loop.
function Client:request(method, params, cb)
  if not self.rpc or self.rpc.is_closing() then
    cb({ message = "the daemon is not running" }, nil)
    return
  end
  self.rpc.request(method, params, cb)
end

function Client:notify(method, params)
  if self.rpc and not self.rpc.is_closing() then
    self.rpc.notify(method, params)
  end
end

--- Stop the daemon: `shutdown`, then `exit`. `cb()` once the process has exited.
function Client:stop(cb)
  local rpc = self.rpc
  if not rpc then
    if cb then
      cb()
    end
    return
  end
  self.on_stopped = cb
  rpc.request("shutdown", nil, function()
    rpc.notify("exit", nil)
  end)
  -- a daemon that does not answer is terminated
  seams.defer(function()
    if self.rpc == rpc and not rpc.is_closing() then
      rpc.terminate()
    end
  end, 5000)
end

--- Stop now (Neovim is exiting): wait briefly for `shutdown`, then `exit`.
function Client:stop_now()
  local rpc = self.rpc
  if not rpc or rpc.is_closing() then
    return
  end
  local done = false
  rpc.request("shutdown", nil, function()
    done = true
  end)
  vim.wait(2000, function()
    return done
  end, 10)
  rpc.notify("exit", nil)
end

function Client:_on_exit(code, signal)
  local was_running = self.turn and self.turn.running
  self.rpc = nil
  self.state = "stopped"
  self.session = nil
  self.turn = nil
  self.waiting, self.steers = {}, {}
  if self.docsync then
    self.docsync:stop()
    self.docsync = nil
  end
  for _, ask in pairs(self.approvals) do
    ask:withdraw()
  end
  self.approvals = {}
  if self.chat then
    self.chat:daemon_exited(code, signal, was_running)
  end
  if #self.listeners > 0 then
    self:_ready(("the daemon exited (code %s) before it was ready"):format(tostring(code)))
  end
  local cb = self.on_stopped
  self.on_stopped = nil
  if cb then
    cb()
  end
  self:changed()
end

-- sessions --------------------------------------------------------------------------

function Client:_cancel_turn()
  if self.session and self.turn and self.turn.running then
    self:notify("session/cancel", { sessionId = self.session.id })
  end
end

--- A new session; `cb(err)`.
function Client:new_session(cb)
  self:start(function(err)
    if err then
      return cb(err)
    end
    self:_cancel_turn()
    self:request("session/new", { cwd = self.root, mcpServers = {} }, function(rerr, result)
      if rerr then
        return cb(rerr.message or tostring(rerr))
      end
      self.session = { id = result.sessionId, modes = result.modes }
      self:_set_options(result.configOptions or {}, result.modes)
      self.turn = nil
      self.waiting, self.steers = {}, {}
      if self.chat then
        self.chat:reset()
      end
      self:changed()
      cb(nil)
    end)
  end)
end

--- Make sure there is a session; `cb(err)`. Callers that ask while one is being
--- created wait for that one.
function Client:ensure_session(cb)
  if self.state == "ready" and self.session and not self.session.loading then
    return cb(nil)
  end
  if self.creating then
    table.insert(self.creating, cb)
    return
  end
  self.creating = { cb }
  self:new_session(function(err)
    local waiting = self.creating or {}
    self.creating = nil
    for _, waiter in ipairs(waiting) do
      waiter(err)
    end
  end)
end

--- Load a stored session; its conversation is replayed into a fresh chat. `cb(err)`.
function Client:load_session(session_id, cb)
  self:start(function(err)
    if err then
      return cb(err)
    end
    self:_cancel_turn()
    self.session = { id = session_id, loading = true }
    self.turn = nil
    self.waiting, self.steers = {}, {}
    if self.chat then
      self.chat:reset()
    end
    self:_reopen(session_id, function(rerr, result)
      if not self.session or self.session.id ~= session_id then
        return cb("another session was opened meanwhile")
      end
      if rerr then
        self.session = nil
        self:changed()
        return cb(rerr.message or tostring(rerr))
      end
      self.session.loading = nil
      self.session.modes = result.modes
      self:_set_options(result.configOptions or {}, result.modes)
      if self.chat then
        self.chat.transcript:flush()
      end
      self:changed()
      cb(nil)
    end)
  end)
end

--- Ask the daemon to replay a stored session: v1 `session/load`; v2 `session/resume` from
--- the start (v2 removed `session/load`), whose replay ends with `replay_complete`.
function Client:_reopen(session_id, cb)
  if self.v2 then
    self.session.replayed = false
    return self:request("session/resume", acp_v2.resume_params(session_id, self.root), cb)
  end
  self:request("session/load", { sessionId = session_id, cwd = self.root, mcpServers = {} }, cb)
end

--- Start the daemon if needed, ask `method`, and `cb(err, list)` with the result's
--- `key` list (`{}` on errors).
function Client:_list(method, params, key, cb)
  self:start(function(err)
    if err then
      return cb(err, {})
    end
    self:request(method, params, function(rerr, result)
      cb(rerr and (rerr.message or tostring(rerr)), result and result[key] or {})
    end)
  end)
end

--- Stored sessions of this workspace, newest first. `cb(err, sessions)`.
function Client:list_sessions(cb)
  self:_list("session/list", { cwd = self.root }, "sessions", cb)
end

--- Full-text search over this workspace's sessions. `cb(err, hits)`.
function Client:search(query, cb)
  self:_list("_tether/session/search", { query = query, cwd = self.root }, "hits", cb)
end

--- Change the session's mode. `cb(err)`.
function Client:set_mode(mode, cb)
  self:ensure_session(function(err)
    if err then
      return cb(err)
    end
    if self.v2 then
      return self:set_config_option("mode", mode, cb) -- v2 has no modes: it is an option
    end
    self:request("session/set_mode", { sessionId = self.session.id, modeId = mode }, function(rerr)
      if rerr then
        return cb(rerr.message or tostring(rerr))
      end
      self.session.mode = mode
      self:changed()
      cb(nil)
    end)
  end)
end

--- The session's config option `id` ("model", "reasoning", "mode"), or nil.
function Client:option(id)
  for _, option in ipairs(self.session and self.session.options or {}) do
    if option.id == id then
      return option
    end
  end
  return nil
end

--- The session's config options (v2's `configId` read as `id`); the mode is v1's `modes`
--- or, on v2, the `mode` option.
function Client:_set_options(options, modes)
  self.session.options = acp_v2.options(options)
  local mode = self:option("mode")
  if modes and modes.currentModeId then
    self.session.mode = modes.currentModeId
  elseif mode then
    self.session.mode = mode.currentValue
  end
  self:changed()
end

--- Set a session config option (the model picker, the reasoning picker); it applies from
--- the next turn. `cb(err)`.
function Client:set_config_option(config_id, value, cb)
  self:ensure_session(function(err)
    if err then
      return cb(err)
    end
    local params = { sessionId = self.session.id, configId = config_id, value = value }
    self:request("session/set_config_option", params, function(rerr, result)
      if rerr then
        return cb(rerr.message or tostring(rerr))
      end
      if self.session and self.session.id == params.sessionId then
        self:_set_options(result.configOptions or {})
      end
      cb(nil)
    end)
  end)
end

--- `/clear` made a new session for this chat (we declared `clearSession`): show it, empty.
function Client:on_session_cleared(params)
  if not self.session or params.sessionId ~= self.session.id then
    return
  end
  self.session = { id = params.newSessionId }
  self:_set_options(params.configOptions or {})
  self.turn = nil
  for _, ask in pairs(self.approvals) do
    ask:withdraw()
  end
  if self.chat then
    self.chat:reset()
    self.chat.transcript:notice("New conversation (/clear); the previous one is in :TetherSessions.")
  end
  self:changed()
end

-- turns -----------------------------------------------------------------------------

--- Send a prompt; the chat shows the turn. `cb(err)` when it was sent (or not).
--- Sent while a turn runs, the daemon queues it (SPEC §3.37): the chat lists it as
--- queued (`_meta.tether.queue`) and shows it as your message when its turn starts.
--- With `opts.steer` it joins the running turn instead, shown where it landed.
function Client:prompt(text, cb, opts)
  cb = cb or function() end
  opts = opts or {}
  self:ensure_session(function(err)
    if err then
      return cb(err)
    end
    local running = self.turn and self.turn.running and self.turn.entry ~= nil
    if self.turn and self.turn.running and not running then
      -- a turn resumed after a restart takes no prompts (the daemon answers -32010)
      return cb("a resumed turn is running; answer its approval or cancel it first (:TetherCancel)")
    end
    local entry = { text = text, steer = opts.steer and running or false, session_id = self.session.id }
    -- the agent must see what you typed in your buffers just now
    self.docsync:flush_all()
    if entry.steer then
      table.insert(self.steers, entry)
    elseif running then
      table.insert(self.waiting, entry)
    else
      self:_begin(entry)
    end
    local meta = entry.steer and { tether = { steer = true } } or nil
    self:request("session/prompt", {
      sessionId = entry.session_id,
      prompt = { { type = "text", text = text } },
      _meta = meta,
    }, function(rerr, result)
      self:_answered(entry, rerr, result)
    end)
    cb(nil)
  end)
end

--- A prompt's turn starts: your message in the chat.
function Client:_begin(entry)
  self.turn = { running = true, entry = entry }
  if self.chat then
    self.chat.transcript:user(entry.text)
  end
  self:changed()
end

local function drop(list, entry)
  for i, e in ipairs(list) do
    if e == entry then
      table.remove(list, i)
      return true
    end
  end
  return false
end

--- A prompt's answer: the running turn ended (the next one starts: a steered message
--- that did not land, else the oldest queued prompt), or a waiting one was answered
--- (withdrawn, a steer that landed, or refused).
function Client:_answered(entry, err, result)
  local inserted = self.v2 and acp_v2.inserted_turn(result)
  if inserted then
    -- v2 answers at insertion: the turn's end is its `state_update` idle (acp_v2.lua)
    if self.turn and self.turn.entry == entry then
      self.turn.id = inserted
    end
    return
  end
  if self.turn and self.turn.entry == entry then
    if self.v2 then
      -- refused before its insertion; the next turn shows at its own (`user_message`)
      if self.turn.running then
        self:_turn_ended(entry.session_id, err, result)
      end
      return
    end
    self:_turn_ended(entry.session_id, err, result)
    local next_entry = table.remove(self.steers, 1) or table.remove(self.waiting, 1)
    if next_entry and self.session and self.session.id == next_entry.session_id then
      self:_begin(next_entry)
    end
    return
  end
  if not (drop(self.steers, entry) or drop(self.waiting, entry)) then
    return -- a session left meanwhile
  end
  if err then
    seams.notify("Tether: " .. (err.message or tostring(err)), vim.log.levels.WARN)
  elseif result and result.stopReason == "cancelled" then
    self:_withdrawn(entry)
  end
end

function Client:_withdrawn(entry)
  if self.chat then
    self.chat.transcript:aside(("[withdrawn: %s]"):format(entry.text))
  end
end

--- A queued prompt was withdrawn (`_tether/session/dequeue` answered). v1 also answers the
--- prompt `cancelled`; v2 answers it -32800, which Neovim's RPC client does not pass on.
function Client:dequeued(item)
  local entry = self.v2 and acp_v2.queued_entry(self.waiting, item)
  if entry then
    drop(self.waiting, entry)
    self:_withdrawn(entry)
  end
end

--- The turn's answer arrived (after its last update).
function Client:_turn_ended(session_id, err, result)
  if not self.session or self.session.id ~= session_id then
    return
  end
  local turn = self.turn or {}
  turn.running = false
  -- a question still open belongs to this finished turn
  for _, ask in pairs(self.approvals) do
    ask:withdraw()
  end
  local info = { usage = turn.usage }
  if err then
    info.error = err.message or tostring(err)
  else
    info.stopReason = result and result.stopReason
    turn.id = vim.tbl_get(result or {}, "_meta", "tether", "turnId")
  end
  if err and type(err.data) == "table" then
    turn.id = err.data.turnId
  end
  self:_footer(session_id, turn.id, info)
  self:changed()
end

--- Show the end of a turn, then complete it with the turn's run report.
function Client:_footer(session_id, turn_id, info)
  if not self.chat then
    return
  end
  local transcript = self.chat.transcript
  local footer = transcript:footer(info)
  if not turn_id then
    return
  end
  self:request("_tether/session/report", { sessionId = session_id, turnId = turn_id }, function(err, result)
    local report = not err and result and result.reports and result.reports[1]
    if report and self.chat and self.chat.transcript == transcript and self.session and self.session.id == session_id then
      info.report = report
      transcript:set_footer(footer, info)
    end
  end)
end

--- Cancel the running turn.
function Client:cancel()
  if self.session and self.turn and self.turn.running then
    self:notify("session/cancel", { sessionId = self.session.id })
    return true
  end
  return false
end

-- what the daemon sends -------------------------------------------------------------

function Client:on_session_update(params)
  if not self.session then
    return
  end
  if params.sessionId ~= self.session.id then
    local parent_call = self.v2 and self.session.children and self.session.children[params.sessionId]
    if parent_call then -- a sub-agent's session (v2)
      acp_v2.child_update(params.update or {}, parent_call, self.terminals, self.show)
    end
    return
  end
  if not self.v2 then
    return self:_show_update(params.update or {})
  end
  acp_v2.update(params.update or {}, self, self.show)
end

--- One update in v1's shape (as a v1 daemon sends it, or as acp_v2.lua made it).
function Client:_show_update(update)
  local kind = update.sessionUpdate
  if kind == "usage_update" then
    self.turn = self.turn or { running = false }
    self.turn.usage = { used = update.used, size = update.size }
    return
  end
  if kind == "available_commands_update" then
    -- the `/` commands the prompt area completes (chat.lua's omnifunc)
    self.session.commands = update.availableCommands or {}
    return
  end
  if kind == "config_option_update" then
    -- the provider's model list arrived, or `/model` changed the model
    self:_set_options(update.configOptions or {})
    return
  end
  if kind == "current_mode_update" then
    -- the mode changed by the daemon (the `/mode` command), not by session/set_mode
    self.session.mode = update.currentModeId
    self:changed()
    return
  end
  if kind == "session_info_update" then
    if update.title then
      self.session.title = update.title
    end
    local queue = vim.tbl_get(update, "_meta", "tether", "queue")
    if queue then
      -- the prompts waiting behind the running turn (the whole queue, oldest first)
      self.session.queue = queue
      if self.chat then
        self.chat.transcript:set_queue(queue)
      end
    end
    local ended = vim.tbl_get(update, "_meta", "tether", "turnEnded")
    if ended then
      -- a turn resumed after a restart has ended (it had no prompt request)
      self:_turn_ended(self.session.id, nil, {
        stopReason = ended.stopReason,
        _meta = { tether = { turnId = ended.turnId } },
      })
    end
    self:changed()
    return
  end
  if not self.session.loading and not (self.turn and self.turn.running) and (kind == "tool_call" or kind == "tool_call_update") then
    -- a turn resumed by session/load (it was waiting for approval when its daemon died)
    self.turn = { running = true }
    self:changed()
  end
  if self.chat then
    self.chat.transcript:update(update)
  end
end

function Client:on_approval_opened(request_id, ask)
  if not ask.finished then
    self.approvals[request_id] = ask
    self:changed()
  end
end

function Client:on_approval_closed(request_id)
  if self.approvals[request_id] then
    self.approvals[request_id] = nil
    self:changed()
  end
end

function Client:on_withdrawn(request_id)
  local ask = self.approvals[tostring(request_id)]
  if ask then
    ask:withdraw()
  end
end

return M
