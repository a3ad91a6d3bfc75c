--- The chat buffer's content: a list of blocks (your message, the agent's text, its
--- thinking, each tool call, the plan, notices, the end of each turn).
---
--- Streamed text is appended at the end of the buffer only (`nvim_buf_set_text` on the
--- last line), batched per scheduler tick; a tool call block is re-rendered in place,
--- found through its extmark, when its status or output changes. Folds (thinking, and
--- a tool's output once it has finished) come from the blocks through 'foldexpr'.
local blocks = require("tether.blocks")
local seams = require("tether.seams")

local ns = vim.api.nvim_create_namespace("tether.transcript")
local queue_ns = vim.api.nvim_create_namespace("tether.queue")
local api = vim.api

---@class tether.Block
---@field kind string user|heading|message|thought|tool|plan|notice|footer
---@field mark integer extmark id at the block's first line
---@field count integer number of lines
---@field layout? table tool blocks: where locations and output are
---@field call? table tool blocks: the merged tool call
---@field badge? string replay status of a text block

---@class tether.Transcript
---@field buf integer
---@field root string
---@field blocks tether.Block[]
---@field tools table<string, tether.Block>
local Transcript = {}
Transcript.__index = Transcript

--- Transcripts by buffer, for 'foldexpr' and 'foldtext'.
local by_buf = {}

---@return tether.Transcript
function Transcript.new(buf, root)
  local self = setmetatable({ buf = buf, root = root }, Transcript)
  by_buf[buf] = self
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      by_buf[buf] = nil
    end,
  })
  self:reset()
  return self
end

--- Forget everything and empty the buffer.
function Transcript:reset()
  self.blocks = {}
  self.tools = {}
  self.pending = nil -- {kind, badge, parts}
  self.held = nil -- the plugin's notices waiting for the streaming word to end (`aside`)
  self.flush_scheduled = false
  self.role = nil -- "user" or "agent": who wrote the last block
  self.fold_cache = nil
  self.queue = {}
  if api.nvim_buf_is_valid(self.buf) then
    api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
    api.nvim_buf_clear_namespace(self.buf, queue_ns, 0, -1)
    self:_edit(function()
      api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
    end)
  end
end

--- Change the (read-only) buffer.
function Transcript:_edit(fn)
  local bo = vim.bo[self.buf]
  bo.modifiable = true
  local ok, err = pcall(fn)
  bo.modifiable = false
  if not ok then
    error(err, 0)
  end
end

function Transcript:_row(block)
  return api.nvim_buf_get_extmark_by_id(self.buf, ns, block.mark, {})[1]
end

--- Add a block at the end of the buffer, after a blank line.
---@return tether.Block
function Transcript:_append(kind, lines)
  if self.held then
    self:_release()
  end
  local start
  self:_edit(function()
    if #self.blocks == 0 then
      api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
      start = 0
    else
      start = api.nvim_buf_line_count(self.buf) + 1
      local with_gap = { "" }
      vim.list_extend(with_gap, lines)
      api.nvim_buf_set_lines(self.buf, -1, -1, false, with_gap)
    end
  end)
  local mark = api.nvim_buf_set_extmark(self.buf, ns, start, 0, { right_gravity = false })
  local block = { kind = kind, mark = mark, count = #lines }
  table.insert(self.blocks, block)
  self:_scroll()
  return block
end

--- Replace a block's lines in place.
function Transcript:_replace(block, lines)
  local row = self:_row(block)
  self:_edit(function()
    api.nvim_buf_set_lines(self.buf, row, row + block.count, false, lines)
  end)
  block.count = #lines
  api.nvim_buf_set_extmark(self.buf, ns, row, 0, { id = block.mark, right_gravity = false })
  self:_scroll()
end

--- Keep windows that showed the end of the chat at the end.
function Transcript:_scroll()
  self:_place_queue()
  local last = api.nvim_buf_line_count(self.buf)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if vim.w[win].tether_follow ~= false then
      pcall(api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

--- Start an agent block, under a "## Tether" heading when you spoke last.
function Transcript:_agent(kind, lines)
  if self.role ~= "agent" then
    self.role = "agent"
    self:_append("heading", { blocks.AGENT_HEADING })
  end
  return self:_append(kind, lines)
end

-- text ---------------------------------------------------------------------------

local PREFIX = { thought = "> ", message = "" }
local WORD_END = "[%s%.,;:!?]" -- where a streamed word ends

--- Append streamed text to the last block (which must be a text block of `kind`).
function Transcript:_append_text(block, kind, text)
  local parts = blocks.split(text)
  local prefix = PREFIX[kind]
  for i = 2, #parts do
    parts[i] = prefix .. parts[i]
  end
  self:_edit(function()
    local last = api.nvim_buf_line_count(self.buf) - 1
    local col = #(api.nvim_buf_get_lines(self.buf, last, last + 1, false)[1] or "")
    api.nvim_buf_set_text(self.buf, last, col, last, col, parts)
  end)
  block.count = block.count + #parts - 1
  self:_scroll()
end

--- Write text now: append to the open text block of the same kind, or start one.
function Transcript:_write(kind, text, badge)
  local last = self.blocks[#self.blocks]
  if not (last and last.kind == kind and last.badge == badge and self.role == "agent") then
    local first = PREFIX[kind] .. (badge and ("_(" .. badge .. ")_ ") or "")
    last = self:_agent(kind, { first })
    last.badge = badge
  elseif self.held then
    -- a held notice goes in where the word being streamed ends; the text goes on below it
    local cut = text:find(WORD_END)
    if cut then
      self:_append_text(last, kind, text:sub(1, cut))
      self:_release()
      local rest = text:sub(cut + 1):gsub("^%s+", "")
      if rest ~= "" then
        self:_write(kind, rest, badge)
      end
      return
    end
  end
  self:_append_text(last, kind, text)
end

--- A notice of the plugin's own (a withdrawn prompt), not of the daemon's stream: while an
--- answer streams it waits for the end of the word being written, so it never splits one.
function Transcript:aside(text)
  self:flush()
  local last = self.blocks[#self.blocks]
  if last and self.role == "agent" and PREFIX[last.kind] and api.nvim_buf_is_valid(self.buf) then
    local n = api.nvim_buf_line_count(self.buf)
    local line = api.nvim_buf_get_lines(self.buf, n - 1, n, false)[1] or ""
    if line ~= "" and not line:sub(-1):find(WORD_END) then
      self.held = self.held or {}
      table.insert(self.held, text)
      return
    end
  end
  self:notice(text)
end

function Transcript:_release()
  local held = self.held
  self.held = nil
  for _, text in ipairs(held or {}) do
    self:notice(text)
  end
end

--- Write out text that is waiting for the next tick.
function Transcript:flush()
  local pending = self.pending
  self.pending = nil
  if pending and api.nvim_buf_is_valid(self.buf) then
    self:_write(pending.kind, table.concat(pending.parts), pending.badge)
  end
end

--- Queue a text delta; deltas that arrive in one tick are written together.
function Transcript:_text(kind, text, badge)
  local pending = self.pending
  if pending and (pending.kind ~= kind or pending.badge ~= badge) then
    self:flush()
    pending = nil
  end
  if not pending then
    self.pending = { kind = kind, badge = badge, parts = {} }
  end
  table.insert(self.pending.parts, text)
  if not self.flush_scheduled then
    self.flush_scheduled = true
    seams.schedule(function()
      self.flush_scheduled = false
      self:flush()
    end)
  end
end

-- public: what the chat shows ------------------------------------------------------

-- the queue -------------------------------------------------------------------------

--- The lines that show the queued prompts (under the conversation).
function Transcript:queue_lines()
  local lines = {}
  for i, item in ipairs(self.queue or {}) do
    local state = item.state == "notRun" and "not run" or "queued"
    table.insert(lines, ("⏳ %s %d: %s"):format(state, i, item.preview or ""))
  end
  if #lines > 0 then
    table.insert(lines, "   (:TetherDequeue to withdraw one)")
  end
  return lines
end

--- Show the queued prompts (`_meta.tether.queue`) under the last line, as virtual lines.
function Transcript:set_queue(queue)
  self.queue = queue or {}
  if api.nvim_buf_is_valid(self.buf) then
    self:_place_queue()
  end
end

function Transcript:_place_queue()
  api.nvim_buf_clear_namespace(self.buf, queue_ns, 0, -1)
  local lines = self:queue_lines()
  if #lines == 0 then
    return
  end
  local virt = {}
  for _, line in ipairs(lines) do
    table.insert(virt, { { line, "Comment" } })
  end
  local last = api.nvim_buf_line_count(self.buf) - 1
  api.nvim_buf_set_extmark(self.buf, queue_ns, last, 0, { virt_lines = virt })
end

--- Your message (live, or replayed); `steered`: `_meta.tether` of a message steered
--- into a running turn (shown where it landed).
function Transcript:user(text, steered)
  if not api.nvim_buf_is_valid(self.buf) then
    return nil
  end
  self:flush()
  local last = self.blocks[#self.blocks]
  if last and last.kind == "user" and self.role == "user" then
    -- another content block of the same replayed message
    local row = self:_row(last)
    local lines = api.nvim_buf_get_lines(self.buf, row, row + last.count, false)
    vim.list_extend(lines, blocks.split(text))
    self:_replace(last, lines)
    return
  end
  self.role = "user"
  if steered then
    -- the same turn goes on: its tool calls keep their blocks
    self:_append("user", blocks.user(text, steered)).steered = true
    return
  end
  -- tool call ids are unique within a turn only: a new message starts a new turn
  self.tools = {}
  self:_append("user", blocks.user(text))
end

--- The message of yours shown at or above line `lnum` (1-based): its index among your
--- messages, its text and its block.
function Transcript:user_at(lnum)
  self:flush()
  local found, index, count = nil, nil, 0
  for _, block in ipairs(self.blocks) do
    if block.kind == "user" then
      count = count + 1
      if self:_row(block) + 1 <= lnum then
        found, index = block, count
      end
    end
  end
  if not found then
    return nil
  end
  local row = self:_row(found)
  local lines = api.nvim_buf_get_lines(self.buf, row + 2, row + found.count, false)
  return { index = index, text = table.concat(lines, "\n"), steered = found.steered }
end

--- The texts of your messages, in order.
function Transcript:user_texts()
  self:flush()
  local texts = {}
  for _, block in ipairs(self.blocks) do
    if block.kind == "user" then
      local row = self:_row(block)
      table.insert(texts, table.concat(api.nvim_buf_get_lines(self.buf, row + 2, row + block.count, false), "\n"))
    end
  end
  return texts
end

--- A notice from Tether or from the plugin (not model text).
function Transcript:notice(text)
  if not api.nvim_buf_is_valid(self.buf) then
    return nil
  end
  self:flush()
  local block = self:_append("notice", blocks.notice(text))
  local row = self:_row(block)
  api.nvim_buf_set_extmark(self.buf, ns, row, 0, {
    end_row = row + block.count,
    hl_group = "Comment",
    hl_eol = false,
  })
end

--- The end of a turn; returns a handle for `set_footer`.
function Transcript:footer(info)
  if not api.nvim_buf_is_valid(self.buf) then
    return nil
  end
  self:flush()
  local block = self:_append("footer", blocks.footer(info))
  self.role = nil
  return block
end

function Transcript:set_footer(block, info)
  if block and api.nvim_buf_is_valid(self.buf) then
    self:_replace(block, blocks.footer(info))
  end
end

local function content_text(content)
  if type(content) ~= "table" then
    return ""
  end
  if content.type == "text" then
    return content.text or ""
  elseif content.type == "resource_link" then
    return ("[%s](%s)"):format(content.name or content.uri or "", content.uri or "")
  elseif content.type == "resource" and type(content.resource) == "table" then
    return content.resource.text or content.resource.uri or ""
  end
  return ""
end

--- Render a tool call block (new or changed).
function Transcript:_tool(u)
  local block = self.tools[u.toolCallId]
  local call = block and block.call or { toolCallId = u.toolCallId }
  for _, key in ipairs({ "title", "kind", "status", "rawInput", "content", "locations" }) do
    if u[key] ~= nil then
      call[key] = u[key]
    end
  end
  local meta = u._meta and u._meta.tether
  if meta and meta.approvedBy then
    call.approvedBy = meta.approvedBy
  end
  local lines, layout = blocks.tool(call, self.root)
  if block and api.nvim_buf_is_valid(self.buf) then
    block.layout = layout
    self:_replace(block, lines)
  else
    block = self:_agent("tool", lines)
    block.call, block.layout = call, layout
    self.tools[u.toolCallId] = block
  end
end

--- One `session/update` (live or replayed).
function Transcript:update(u)
  if not api.nvim_buf_is_valid(self.buf) then
    return
  end
  local kind = u.sessionUpdate
  local meta = u._meta and u._meta.tether or {}
  if kind == "agent_message_chunk" or kind == "agent_thought_chunk" then
    if meta.notice then
      self:notice(content_text(u.content))
      return
    end
    self:_text(kind == "agent_message_chunk" and "message" or "thought", content_text(u.content), meta.status)
    return
  end
  if kind == "user_message_chunk" then
    self:user(content_text(u.content), meta.steered and meta or nil)
    return
  end
  self:flush()
  if kind == "tool_call" or kind == "tool_call_update" then
    self:_tool(u)
  elseif kind == "plan" then
    self:_agent("plan", blocks.plan(u.entries))
  end
end

--- The merged tool call with this id, if it was shown.
function Transcript:tool_call(id)
  local block = self.tools[id]
  return block and block.call
end

--- The buffer's lines (what the tests compare).
function Transcript:lines()
  self:flush()
  return api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

-- folds and jumps -------------------------------------------------------------------

local FINISHED = { completed = true, failed = true }

--- Fold ranges (1-based, inclusive), recomputed once per change of the buffer.
function Transcript:_folds()
  local tick = api.nvim_buf_get_changedtick(self.buf)
  if self.fold_cache and self.fold_cache.tick == tick then
    return self.fold_cache
  end
  local levels, kinds = {}, {}
  for _, block in ipairs(self.blocks) do
    local row = self:_row(block)
    local first, last
    if block.kind == "thought" then
      first, last = row, row + block.count - 1
    elseif block.kind == "tool" and block.layout.output and FINISHED[block.call.status] then
      first, last = row + block.layout.output.first, row + block.layout.output.last
    end
    if first then
      for lnum = first + 2, last + 1 do
        levels[lnum] = "1"
      end
      levels[last + 1] = "<1"
      levels[first + 1] = ">1"
      kinds[first + 1] = block.kind
    end
  end
  self.fold_cache = { tick = tick, levels = levels, kinds = kinds }
  return self.fold_cache
end

function Transcript:fold_level(lnum)
  return self:_folds().levels[lnum] or "0"
end

function Transcript:fold_text(foldstart, foldend)
  local folds = self:_folds()
  local n = foldend - foldstart + 1
  local noun = n == 1 and "line" or "lines"
  if folds.kinds[foldstart] == "thought" then
    return ("> ⋯ thinking (%d %s)"):format(n, noun)
  end
  return ("  ⋯ output (%d %s)"):format(n, noun)
end

--- The location shown on this line (1-based), if any.
---@return {path: string, line?: integer}?
function Transcript:location_at(lnum)
  for _, block in ipairs(self.blocks) do
    if block.kind == "tool" then
      local row = self:_row(block)
      local loc = block.layout.locations[lnum - 1 - row]
      if loc then
        return loc
      end
    end
  end
end

--- The transcript shown in a buffer.
function Transcript.of(buf)
  return by_buf[buf]
end

--- 'foldexpr' of chat windows.
function Transcript.foldexpr()
  local t = by_buf[api.nvim_get_current_buf()]
  return t and t:fold_level(vim.v.lnum) or "0"
end

--- 'foldtext' of chat windows.
function Transcript.foldtext()
  local t = by_buf[api.nvim_get_current_buf()]
  if not t then
    return vim.fn.foldtext()
  end
  return t:fold_text(vim.v.foldstart, vim.v.foldend)
end

return Transcript
