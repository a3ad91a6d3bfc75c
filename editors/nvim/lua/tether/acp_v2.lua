--- ACP v2 (Preview) on a connection: what the plugin adds to `initialize`, and v2's
--- updates, answers and questions turned into the v1 shapes the chat already shows.
---
--- Owns: the v2 half of `initialize` (`info`, `capabilities`), the turn's life on v2 (the
--- prompt answered at insertion with `messageId`, its end as `state_update` idle or error),
--- live command output (`terminal_output_chunk`, base64), v2 diffs (`changes` + `patch`),
--- config options named `configId`, the v2 permission request, reopening with
--- `session/resume` + `replayFrom` (SPEC §12).
--- Must not: draw anything itself (transcript.lua and approval.lua do) or send requests
--- other than the turn's (client.lua owns the connection).
local seams = require("tether.seams")

local M = {}

M.VERSION = 2

--- `initialize` params that either version of the daemon understands: v1 reads
--- `clientInfo`/`clientCapabilities` and LSP's `capabilities`; v2 reads `info` and
--- `capabilities`, which it shares with LSP's (their names do not collide).
function M.initialize_params(params)
  local acp = params.clientCapabilities
  params.protocolVersion = M.VERSION
  params.info = params.clientInfo
  local meta = vim.deepcopy(acp._meta)
  -- v2 only: a command's output streams as `terminal_output_chunk` (v1 sends it at the end)
  meta.terminal_output = true
  params.capabilities._meta = meta
  return params
end

--- `session/resume` replaying the whole session (v2 removed `session/load`).
function M.resume_params(session_id, cwd)
  return { sessionId = session_id, cwd = cwd, mcpServers = {}, replayFrom = { type = "start" } }
end

--- The daemon answered in v2.
function M.speaks_v2(result)
  return type(result) == "table" and result.protocolVersion == M.VERSION
end

-- config options ---------------------------------------------------------------------

--- v2's option names (`configId`, `groupId`) as v1's (`id`, `group`), which the pickers read.
function M.options(options)
  if type(options) ~= "table" then
    return options
  end
  for _, option in ipairs(options) do
    option.id = option.id or option.configId
    option.group = option.group or option.groupId
  end
  return options
end

-- the turn -----------------------------------------------------------------------------

--- The turn id in a message id (`<turnId>.0` the prompt, `<turnId>.<step>` an answer).
function M.turn_of(message_id)
  return type(message_id) == "string" and message_id:match("^(.-)%.%d+") or nil
end

--- The turn a prompt's answer says began (v2 answers at insertion: `<turnId>.0`), or nil
--- (a steered message's answer, `<turnId>.s<seq>`: it joined a running turn).
function M.inserted_turn(result)
  return type(result) == "table" and M.turn_of(result.messageId) or nil
end

--- `state_update` idle as the answer v1 gives a prompt at its turn's end: `(err, result)`.
function M.turn_end(update, turn_id)
  local err = update.error
  if type(err) == "table" then
    local data = type(err.data) == "table" and err.data or {}
    data.turnId = data.turnId or turn_id
    return { code = err.code, message = err.message, data = data }, nil
  end
  return nil, { stopReason = update.stopReason, _meta = { tether = { turnId = turn_id } } }
end

-- command output -------------------------------------------------------------------------

--- The call block's output: what the command printed so far (and how it exited).
local function show_output(term, show)
  term.scheduled = false
  if term.shown_parts == #term.parts and not term.exit then
    return
  end
  term.shown_parts = #term.parts
  local text = table.concat(term.parts) .. (term.exit or "")
  show({
    sessionUpdate = "tool_call_update",
    toolCallId = term.call,
    content = { { type = "content", content = { type = "text", text = text } } },
  })
end

--- A chunk of output: decoded now, shown once per tick (the chunks of one tick together).
local function output_chunk(term, data, show)
  table.insert(term.parts, vim.base64.decode(data or ""))
  if not term.scheduled then
    term.scheduled = true
    seams.schedule(function()
      if not term.done then
        show_output(term, show)
      end
    end)
  end
end

local function exit_line(status)
  if type(status) ~= "table" then
    return nil
  end
  if type(status.exitCode) == "number" then
    return ("exit code %d"):format(status.exitCode)
  end
  return "killed by " .. tostring(status.signal or "a signal")
end

-- updates ----------------------------------------------------------------------------------

local function text_chunks(kind, update, show)
  local content = update.content
  for _, block in ipairs(vim.islist(content or {}) and content or { content }) do
    show({ sessionUpdate = kind, content = block, _meta = update._meta })
  end
end

local function content_text(content)
  local parts = {}
  for _, block in ipairs(content or {}) do
    if type(block) == "table" and block.type == "text" then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, "\n")
end

--- The entry of yours whose text this is (a steered one that did not land first, then the
--- queue, oldest first), taken off its list.
local function take_entry(client, text)
  for _, list in ipairs({ client.steers, client.waiting }) do
    for i, entry in ipairs(list) do
      if entry.text == text then
        return table.remove(list, i)
      end
    end
  end
  return nil
end

--- The waiting entry a queue item (`_meta.tether.queue`) shows: the first whose first line
--- starts with the item's preview (cut with "…" when long).
function M.queued_entry(waiting, item)
  local preview = (item.preview or ""):gsub("…$", "")
  for _, entry in ipairs(waiting) do
    if vim.startswith(vim.trim(entry.text):match("^[^\n]*"), preview) then
      return entry
    end
  end
  return nil
end

--- `user_message`: a prompt was inserted and its turn begins. Yours is shown from your
--- queue; one sent by another window of a shared daemon from its content.
local function inserted(client, update)
  local text = content_text(update.content)
  local turn = client.turn
  if not (turn and turn.running and turn.entry and turn.entry.text == text) then
    local entry = take_entry(client, text) or { text = text, session_id = client.session.id }
    client:_begin(entry)
  end
  client.turn.id = M.turn_of(update.messageId)
end

--- `state_update`: running, requires_action (the question comes as a request), idle.
local function state(client, update)
  client.turn_state = update.state
  local turn = client.turn
  if update.state == "idle" then
    if turn and turn.running then
      client:_turn_ended(client.session.id, M.turn_end(update, turn.id))
    end
  elseif not (turn and turn.running) then
    -- a turn this chat did not start: resumed after a restart
    client.turn = { running = true }
    client:changed()
  end
end

--- One v2 update, shown as the v1 updates the chat knows (`show(u)` for each); the turn's
--- life (`user_message`, `state_update`) and the end of a replay (`replay_complete`) are
--- applied to `client` here. `client.terminals`: the commands' output, by terminal id.
function M.update(update, client, show)
  local kind = update.sessionUpdate
  local replaying = client.session.loading
  if kind == "agent_message_chunk" or kind == "agent_thought_chunk" then
    if client.turn and not client.turn.id and not replaying then
      -- a turn resumed after a restart had no prompt: its id (for its report) is in its messages'
      client.turn.id = M.turn_of(update.messageId)
    end
    return show(update) -- the streaming path: v1's shape but for the id
  elseif kind == "state_update" then
    return state(client, update) -- after a replay: the session's state now (a resumed turn runs)
  elseif kind == "user_message" then
    if not replaying and vim.tbl_get(update, "_meta", "tether", "steered") then
      -- a steered one joined the running turn (SPEC §12.7); shown once, here
      take_entry(client, content_text(update.content))
    elseif not replaying then
      return inserted(client, update)
    end
    return text_chunks("user_message_chunk", update, show)
  elseif kind == "replay_complete" then
    client.session.replayed = true
    return
  elseif kind == "subagent_update" then
    -- a `delegate` call's sub-agent is a session of its own (SPEC §12.6): its calls are shown
    client.session.children = client.session.children or {}
    client.session.children[update.sessionId] = vim.tbl_get(update, "_meta", "tether", "parentCallId")
    return
  end
  M.show(update, client.terminals, show)
end

--- A v2 update the chat shows, in v1's shape (`show(u)` for each).
function M.show(update, terminals, show)
  local kind = update.sessionUpdate
  if kind == "plan_update" then
    show({ sessionUpdate = "plan", entries = update.plan and update.plan.entries or {} })
  elseif kind == "notice" then
    local text = (update.title or "") .. (update.description and ("\n" .. update.description) or "")
    show({ sessionUpdate = "agent_message_chunk", content = { type = "text", text = text }, _meta = { tether = { notice = true } } })
  elseif kind == "agent_message" or kind == "agent_thought" then
    text_chunks(kind .. "_chunk", update, show) -- whole messages (a replay): as v1's chunks
  elseif kind == "tool_call_update" then
    show(M.tool_call(update, terminals))
  elseif kind == "terminal_output_chunk" then
    local term = terminals[update.terminalId]
    if term then
      output_chunk(term, update.data, show)
    end
  elseif kind == "terminal_update" then
    local term = terminals[update.terminalId]
    if term and update.exitStatus then
      terminals[update.terminalId], term.done = nil, true
      term.exit = exit_line(update.exitStatus)
      show_output(term, show)
    end
  else
    if kind == "config_option_update" then
      M.options(update.configOptions)
    end
    show(update)
  end
end

--- An update of a sub-agent's own session: its calls (and their output) shown under the
--- `delegate` call `parent_call`, as v1 nests them (`<call>/<child call>`, `parentCallId`);
--- its messages and states are its own (the call's content says what it answered).
function M.child_update(update, parent_call, terminals, show)
  local kind = update.sessionUpdate
  if kind == "tool_call_update" then
    update.toolCallId = parent_call .. "/" .. update.toolCallId
    for _, item in ipairs(update.content or {}) do
      if item.type == "terminal" and item.terminalId then
        item.terminalId = parent_call .. "/" .. item.terminalId
      end
    end
    update._meta = update._meta or {}
    update._meta.tether = vim.tbl_extend("force", update._meta.tether or {}, { parentCallId = parent_call })
  elseif kind == "terminal_output_chunk" or kind == "terminal_update" then
    update.terminalId = parent_call .. "/" .. tostring(update.terminalId)
  else
    return
  end
  M.show(update, terminals, show)
end

local FINAL = { completed = true, failed = true, cancelled = true }

--- A `tool_call_update` (the first creates the call): a terminal it shows starts
--- collecting output, a final status ends it; diffs become what the chat shows.
function M.tool_call(update, terminals)
  for i, item in ipairs(update.content or {}) do
    if item.type == "terminal" and item.terminalId and not terminals[item.terminalId] then
      terminals[item.terminalId] = { call = update.toolCallId, parts = {}, shown_parts = 0 }
    elseif item.type == "diff" and item.changes then
      update.content[i] = M.chat_diff(item)
    end
  end
  if FINAL[update.status] then
    for id, term in pairs(terminals) do
      if term.call == update.toolCallId then
        terminals[id], term.done = nil, true -- its content now is the call's own
      end
    end
  end
  return update
end

--- A v2 diff as the chat shows it: the changed path, and the patch (blocks.diff_text).
function M.chat_diff(item)
  local change = item.changes[1] or {}
  return { type = "diff", path = change.path, operation = change.operation, patch = item.patch or {} }
end

-- permission requests ------------------------------------------------------------------

--- v2's `session/request_permission` as v1's: the call (`subject.toolCall`) is `toolCall`,
--- with its title (`title`), and why it asks (`description`) where v1 says it.
function M.permission(params)
  local subject = params.subject or {}
  local call = vim.deepcopy(subject.toolCall or {})
  call.title = call.title or params.title
  params.toolCall = call
  params._meta = params._meta or {}
  params._meta.tether = params._meta.tether or {}
  local tether = params._meta.tether
  tether.reason = tether.reason or params.description
  for i, item in ipairs(call.content or {}) do
    if item.type == "diff" and item.changes then
      call.content[i] = M.review_diff(item, M.current_text)
    end
  end
  return params
end

--- A file's text as the agent sees it now: its buffer's (unsaved changes too), else the disk's.
function M.current_text(path)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) or ""
    -- the daemon names the file by its real path; a buffer may name it through a symlink
    if name ~= "" and (name == path or vim.uv.fs_realpath(name) == path) then
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
      return vim.bo[buf].eol and text .. "\n" or text
    end
  end
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

-- diffs -----------------------------------------------------------------------------------

--- The patch text to show in the chat (without `diff --git`, whose paths are absolute).
function M.patch_text(item)
  local text = item.patch and item.patch.text or ""
  return (text:gsub("^diff %-%-git [^\n]*\n", ""))
end

--- Apply a unified diff to `old` (the text the patch was made against); nil if it does not fit.
function M.apply_patch(old, patch)
  local lines = vim.split(old, "\n", { plain = true })
  local out, at = {}, 1
  local hunk_lines = vim.split(patch, "\n", { plain = true })
  local i = 1
  while i <= #hunk_lines do
    local start = hunk_lines[i]:match("^@@ %-(%d+)")
    if start then
      local first = tonumber(start)
      first = first == 0 and 1 or first
      for n = at, first - 1 do
        table.insert(out, lines[n])
      end
      at = first
      i = i + 1
      while i <= #hunk_lines and not hunk_lines[i]:match("^@@ ") do
        local mark, rest = hunk_lines[i]:sub(1, 1), hunk_lines[i]:sub(2)
        if mark == " " or mark == "-" then
          if lines[at] ~= rest then
            return nil
          end
          at = at + 1
        end
        if mark == " " or mark == "+" then
          table.insert(out, rest)
        end
        i = i + 1
      end
    else
      i = i + 1
    end
  end
  for n = at, #lines do
    table.insert(out, lines[n])
  end
  return table.concat(out, "\n")
end

--- A v2 diff as v1's whole texts (for the review tab): the current text is the buffer's or
--- the file's, the proposed one that text with the patch applied.
function M.review_diff(item, current_text)
  local change = item.changes and item.changes[1] or {}
  local path = change.path
  local old = change.operation ~= "add" and current_text(change.oldPath or path) or nil
  local new
  if change.operation == "delete" then
    new = ""
  else
    new = M.apply_patch(old or "", item.patch and item.patch.text or "")
  end
  if new == nil then
    return { type = "diff", path = path, oldText = old, newText = M.patch_text(item) }
  end
  return { type = "diff", path = path, oldText = old, newText = new }
end

return M
