--- What each part of the chat looks like, as lines of text. Pure functions: no
--- buffers, no state, so a rendering change shows up as a text diff in the tests.
local M = {}

local STATUS = {
  pending = "pending",
  in_progress = "running",
  completed = "done",
  failed = "failed",
}

--- The word shown for an ACP tool call status.
function M.status_word(status)
  return STATUS[status] or status or "pending"
end

--- `path` relative to `root` when it lies inside it.
function M.relpath(path, root)
  if type(path) ~= "string" then
    return "?"
  end
  if root and root ~= "" then
    local prefix = root:sub(-1) == "/" and root or (root .. "/")
    if path == root then
      return "."
    end
    if path:sub(1, #prefix) == prefix then
      return path:sub(#prefix + 1)
    end
  end
  return path
end

--- Split text into lines ("\r\n" and "\r" count as line breaks too).
function M.split(text)
  text = (text or ""):gsub("\r\n?", "\n")
  return vim.split(text, "\n", { plain = true })
end

--- A fenced code block that the text cannot close early.
---@return string[]
function M.fence(text, lang)
  local longest = 0
  for run in (text or ""):gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local bar = string.rep("`", math.max(3, longest + 1))
  local lines = { bar .. (lang or "") }
  local body = M.split((text or ""):gsub("\n$", ""))
  vim.list_extend(lines, body)
  table.insert(lines, bar)
  return lines
end

--- One text line (newlines in titles would break the block's layout).
local function one_line(text)
  return (tostring(text or ""):gsub("[\r\n]+", " "))
end

--- A unified diff of a `diff` content block, for the chat (the review tab shows both
--- texts side by side).
function M.diff_text(item, root)
  local rel = M.relpath(item.path, root)
  if item.patch then
    -- ACP v2: the daemon's git patch, without its `diff --git` line (absolute paths)
    local text = (item.patch.text or ""):gsub("^diff %-%-git [^\n]*\n", ""):gsub("\n$", "")
    return text ~= "" and text or (item.operation or "changed") .. " " .. rel
  end
  local old, new = item.oldText or "", item.newText or ""
  if old == new then
    return item.oldText == nil and ("new file " .. rel) or ("unchanged " .. rel)
  end
  local body = vim.diff(old, new, { ctxlen = 3 }) or ""
  local head = (item.oldText == nil and "--- /dev/null" or ("--- a/" .. rel)) .. "\n+++ b/" .. rel .. "\n"
  return head .. body
end

--- Lines of a tool call block, and where its parts are.
---@param call table merged tool call: title, status, locations, content, approvedBy
---@param root string workspace root (paths are shown relative to it)
---@return string[] lines
---@return table layout `{locations = {[offset] = {path, line}}, output = {first, last}?}` (0-based offsets)
function M.tool(call, root)
  local lines = { ("▸ %s  [%s]"):format(one_line(call.title or call.kind or "tool"), M.status_word(call.status)) }
  local layout = { locations = {} }
  local locations = call.locations or {}
  local shown = math.min(#locations, 10)
  for i = 1, shown do
    local loc = locations[i]
    local text = M.relpath(loc.path, root)
    if type(loc.line) == "number" then
      text = text .. ":" .. loc.line
    end
    layout.locations[#lines] = { path = loc.path, line = type(loc.line) == "number" and loc.line or nil }
    table.insert(lines, "  " .. text)
  end
  if #locations > shown then
    table.insert(lines, ("  … %d more"):format(#locations - shown))
  end
  if call.approvedBy then
    table.insert(lines, "  ✓ " .. one_line(call.approvedBy))
  end
  local first = #lines
  for _, item in ipairs(call.content or {}) do
    if item.type == "content" and type(item.content) == "table" and item.content.type == "text" then
      vim.list_extend(lines, M.fence(item.content.text))
    elseif item.type == "diff" then
      vim.list_extend(lines, M.fence(M.diff_text(item, root), "diff"))
    end
  end
  if #lines > first then
    layout.output = { first = first, last = #lines - 1 }
  end
  return lines, layout
end

--- The user's message; `steered` (its `_meta.tether`): sent into a running turn, where it landed.
function M.user(text, steered)
  local heading = "## You"
  if steered then
    heading = heading .. (" (steered in after step %s)"):format(tostring(steered.afterStep or "?"))
  end
  local lines = { heading, "" }
  vim.list_extend(lines, M.split(text))
  return lines
end

M.AGENT_HEADING = "## Tether"

local PLAN_MARK = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- The agent's plan (`plan` update): the whole plan, in order.
function M.plan(entries)
  local lines = { "Plan:" }
  for _, entry in ipairs(entries or {}) do
    local line = ("- %s %s"):format(PLAN_MARK[entry.status] or "[ ]", one_line(entry.content))
    if entry.priority == "high" then
      line = line .. " (high)"
    end
    table.insert(lines, line)
  end
  if #lines == 1 then
    lines[1] = "Plan: (cleared)"
  end
  return lines
end

--- The end of a turn: stop reason, steps, tokens and how full the context is.
---@param info table `{stopReason?, error?, report?, usage?}`
function M.footer(info)
  local parts = {}
  if info.error then
    table.insert(parts, "error: " .. one_line(info.error))
  else
    table.insert(parts, info.stopReason or "?")
  end
  local report = info.report
  if report then
    if report.stepCount then
      table.insert(parts, report.stepCount == 1 and "1 step" or (report.stepCount .. " steps"))
    end
    local usage = report.totalUsage
    if usage then
      table.insert(parts, ("tokens %d in / %d out"):format(usage.inputTokens or 0, usage.outputTokens or 0))
    end
  end
  if info.usage and info.usage.used then
    table.insert(parts, ("context %d/%d"):format(info.usage.used, info.usage.size or 0))
  end
  return { "── " .. table.concat(parts, " · ") }
end

--- Tether speaking about the turn (a notice chunk): its text without the padding.
function M.notice(text)
  text = vim.trim(text or "")
  return M.split(text)
end

return M
