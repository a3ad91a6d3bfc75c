--- "Rewind to here" and "what did the agent change" (SPEC §3.40).
---
--- `:TetherRewind [conversation|files|both]` on one of your messages in the chat: a dry
--- run first (`_tether/session/rewind` with `dryRun`), a confirmation listing the files it
--- will restore (and the ones changed since Tether wrote them, with a choice to overwrite
--- them: `force`), then the rewind; after a conversation rewind the chat shows the
--- conversation as it now stands (the session is loaded again); the open buffers of the
--- files it restored are reloaded from disk.
--- `:TetherChanges [turn]`: the files a turn (or the whole session) changed, as unified
--- diffs in a scratch buffer.
local seams = require("tether.seams")

local api = vim.api

local M = {}

M.RESTORE = { "both", "conversation", "files" }

local function report(err)
  seams.notify("Tether: " .. (type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)),
    vim.log.levels.ERROR)
end

local function message_text(message)
  local parts = {}
  for _, block in ipairs(vim.tbl_get(message, "body", "content") or {}) do
    if type(block) == "table" and block.type == "text" then
      table.insert(parts, block.text or "")
    end
  end
  return vim.trim(table.concat(parts, "\n"))
end

--- Where your messages shown in the chat are stored: for each (by its index among your
--- messages in the chat), its `messageSeq` and its turn's seq. The stored messages the
--- model still sees are matched to the chat's in order, by text (a slash command that
--- ran no turn is shown but not stored).
---@param snapshot table `_tether/session/dump`'s answer
---@param texts string[] your messages in the chat, in order
---@return table<integer, {seq: integer, turn?: integer}>
function M.align(snapshot, texts)
  local turn_seq = {}
  for _, turn in ipairs(snapshot.turns or {}) do
    turn_seq[turn.id] = turn.seq
  end
  local stored = {}
  for _, m in ipairs(snapshot.messages or {}) do
    if m.role == "user" and m.rewound == nil then
      table.insert(stored, { seq = m.seq, turn = turn_seq[m.turn_id], text = message_text(m) })
    end
  end
  local found, at = {}, 1
  for i, text in ipairs(texts) do
    for j = at, #stored do
      if stored[j].text == vim.trim(text) then
        found[i] = { seq = stored[j].seq, turn = stored[j].turn }
        at = j + 1
        break
      end
    end
  end
  return found
end

--- The stored place of your message at or above line `lnum` of the chat; `cb(err, place, text)`.
local function locate(client, lnum, cb)
  local transcript = client.chat and client.chat.transcript
  local shown = transcript and transcript:user_at(lnum)
  if not shown then
    return cb("put the cursor on one of your messages in the chat")
  end
  client:request("_tether/session/dump", { sessionId = client.session.id }, function(err, snapshot)
    if err then
      return cb(err.message or tostring(err))
    end
    local place = M.align(snapshot or {}, transcript:user_texts())[shown.index]
    if not place then
      return cb("this message is not in the session's stored conversation (a command that ran no turn?)")
    end
    cb(nil, place, shown.text)
  end)
end

local function names(list, key)
  local out = {}
  for _, item in ipairs(list or {}) do
    table.insert(out, key and item[key] or item)
  end
  return table.concat(out, ", ")
end

--- The confirmation's choices for a dry run's answer: {label, force} (nil force: cancel).
function M.choices(preview, restore)
  local parts = {}
  if restore ~= "files" then
    table.insert(parts, ("%d message(s) leave the conversation"):format(preview.hiddenMessages or 0))
  end
  if #(preview.restored or {}) > 0 then
    table.insert(parts, "restores " .. names(preview.restored))
  elseif restore ~= "conversation" then
    table.insert(parts, "no files to restore")
  end
  if #(preview.skipped or {}) > 0 then
    table.insert(parts, "cannot restore " .. names(preview.skipped, "path"))
  end
  local summary = table.concat(parts, "; ")
  if #(preview.conflicts or {}) > 0 then
    return {
      { label = ("Rewind and overwrite what changed since Tether wrote it: %s (%s)"):format(
        names(preview.conflicts, "path"), summary), force = true },
      { label = "Cancel" },
    }
  end
  return { { label = "Rewind: " .. summary, force = false }, { label = "Cancel" } }
end

local function conflict_notice(result)
  local lines = { "[rewind refused: changed since Tether wrote them:" }
  for _, c in ipairs(result.conflicts or {}) do
    table.insert(lines, c.path)
    vim.list_extend(lines, vim.split(c.diff or "", "\n", { plain = true, trimempty = true }))
  end
  table.insert(lines, "]")
  return table.concat(lines, "\n")
end

--- Reload the open buffers of the files the rewind restored, so what you see (and what
--- the agent reads through the editor) is what is on disk and a `:w` cannot undo the
--- rewind. A buffer with unsaved changes of yours is kept and named.
local function reload_restored(client, restored)
  local kept = {}
  for _, path in ipairs(restored or {}) do
    local full = vim.fs.normalize(path:sub(1, 1) == "/" and path or vim.fs.joinpath(client.root, path))
    local buf = vim.fn.bufnr(full)
    if buf ~= -1 and api.nvim_buf_is_loaded(buf) and vim.uv.fs_stat(full) then
      if vim.bo[buf].modified then
        table.insert(kept, path)
      else
        api.nvim_buf_call(buf, function()
          vim.cmd("silent! edit")
        end)
      end
    end
  end
  if #kept > 0 then
    seams.notify("Tether: not reloaded (unsaved changes): " .. table.concat(kept, ", ")
      .. "; :edit! shows the restored file", vim.log.levels.WARN)
  end
end

local function finish(client, restore, result)
  if result.done then
    reload_restored(client, result.restored)
  end
  if not result.done then
    if client.chat then
      client.chat.transcript:notice(conflict_notice(result))
    end
    return seams.notify("Tether: nothing was rewound: files changed since Tether wrote them", vim.log.levels.WARN)
  end
  local said = ("Tether: rewound (rewind %s)%s"):format(tostring(result.rewindId),
    #(result.restored or {}) > 0 and ("; restored " .. names(result.restored)) or "")
  if restore == "files" then
    return seams.notify(said)
  end
  -- the conversation as it now stands
  client:load_session(client.session.id, function(err)
    if err then
      return report(err)
    end
    if client.chat then
      client.chat.transcript:notice(("[rewound: %d message(s) left the conversation; undo with the rewind's id %s]")
        :format(result.hiddenMessages or 0, tostring(result.rewindId)))
    end
    seams.notify(said)
  end)
end

--- `:TetherRewind [restore]` on the message at line `lnum` of the chat.
function M.rewind(client, lnum, restore)
  restore = (restore and restore ~= "") and restore or "both"
  if not vim.tbl_contains(M.RESTORE, restore) then
    return report("restore must be conversation, files or both, not " .. restore)
  end
  if not client.session then
    return report("no session in this chat")
  end
  locate(client, lnum, function(err, place, text)
    if err then
      return report(err)
    end
    local params = { sessionId = client.session.id, messageSeq = place.seq, restore = restore }
    client:request("_tether/session/rewind", vim.tbl_extend("force", params, { dryRun = true }), function(perr, preview)
      if perr then
        return report(perr)
      end
      local choices = M.choices(preview, restore)
      local title = text:gsub("%s*\n.*", "")
      seams.ui_select(choices, {
        prompt = ("Rewind %s to before “%s”?"):format(restore, title),
        kind = "tether.rewind",
        format_item = function(item)
          return item.label
        end,
      }, function(choice)
        if not choice or choice.force == nil then
          return
        end
        params.force = choice.force
        client:request("_tether/session/rewind", params, function(rerr, result)
          if rerr then
            return report(rerr)
          end
          finish(client, restore, result)
        end)
      end)
    end)
  end)
end

--- The lines of the changes view.
function M.changes_lines(result, turn)
  local lines = { ("# Files changed by %s"):format(turn and ("turn " .. turn) or "the session"), "" }
  if #(result.files or {}) == 0 then
    table.insert(lines, "(no files changed)")
  end
  for _, f in ipairs(result.files or {}) do
    local turns = #(f.turns or {}) > 0 and ("  (turn " .. names(f.turns) .. ")") or ""
    table.insert(lines, ("%s %s%s"):format(f.status, f.path, turns))
    if f.note then
      table.insert(lines, "  note: " .. f.note)
    end
    vim.list_extend(lines, vim.split(f.diff or "", "\n", { plain = true, trimempty = true }))
    table.insert(lines, "")
  end
  if not turn and #(result.rewinds or {}) > 0 then
    table.insert(lines, "Rewinds (undo one with _tether/session/rewind toRewind):")
    for _, r in ipairs(result.rewinds) do
      table.insert(lines, ("  rewind %d: %s, before message %d"):format(r.rewindId, r.restore, r.toSeq))
    end
  end
  return lines
end

local function show(lines, turn)
  local name = "tether://changes/" .. (turn and ("turn-" .. turn) or "session")
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = api.nvim_create_buf(true, true)
    api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable, vim.bo[buf].filetype = false, "diff"
  vim.cmd("tab sbuffer " .. buf)
end

--- `:TetherChanges [turn]`: a turn's changes (no turn: the turn of your message at
--- `lnum` when given, else the whole session).
function M.changes(client, turn, lnum)
  if not client.session then
    return report("no session in this chat")
  end
  local function fetch(n)
    client:request("_tether/session/changes", { sessionId = client.session.id, turn = n }, function(err, result)
      if err then
        return report(err)
      end
      show(M.changes_lines(result, n), n)
    end)
  end
  if turn or not lnum then
    return fetch(turn)
  end
  locate(client, lnum, function(err, place)
    fetch(not err and place and place.turn or nil)
  end)
end

return M
