--- `workspace/applyEdit`: the daemon's accepted edits, applied to buffers.
---
--- Tether sends one whole-text `TextDocumentEdit` per file (a `CreateFile` first for a
--- new file). Each edit is one undo step in its buffer; only the lines that differ are
--- replaced, so marks and the cursor elsewhere stay put. An edit for a buffer that
--- changed since the version the daemon saw is refused.
---
--- Saving (a choice of this plugin): a buffer that was not loaded, or had no unsaved
--- changes, is written after the edit, so what the agent runs next (tests, a build)
--- sees the change on disk. A buffer with unsaved changes of yours stays unsaved.
local api = vim.api

local M = {}

--- Apply `new_text` to `buf` as one undo step, touching only the lines that differ.
local function replace_text(buf, new_text)
  -- line ends are the buffer's 'fileformat', not part of its lines
  new_text = new_text:gsub("\r\n", "\n")
  local old_lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local eol = new_text:sub(-1) == "\n"
  local body = eol and new_text:sub(1, -2) or new_text
  local new_lines = vim.split(body, "\n", { plain = true })
  if new_text == "" then
    new_lines = { "" }
  end
  -- a break in the undo history, so this edit is its own step
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
  local old_joined = table.concat(old_lines, "\n") .. "\n"
  local new_joined = table.concat(new_lines, "\n") .. "\n"
  local hunks = vim.diff(old_joined, new_joined, { result_type = "indices" }) --[[@as integer[][] ]]
  -- bottom up, so earlier line numbers stay valid
  for i = #hunks, 1, -1 do
    local a_start, a_count, b_start, b_count = unpack(hunks[i])
    local replacement = vim.list_slice(new_lines, b_start, b_start + b_count - 1)
    local first = a_count == 0 and a_start or a_start - 1
    api.nvim_buf_set_lines(buf, first, first + a_count, false, replacement)
  end
  vim.bo[buf].eol = eol
  if not eol then
    vim.bo[buf].fixendofline = false -- keep the text as sent when it is written
  end
end

--- Whether one edit replaces the whole text (what Tether sends).
local function whole_text_edit(buf, edits)
  if #edits ~= 1 then
    return nil
  end
  local range = edits[1].range
  if range.start.line ~= 0 or range.start.character ~= 0 then
    return nil
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local last = #lines -- the end of a text ending in a newline is (line count, 0)
  if range["end"].line >= last or (range["end"].line == last - 1 and range["end"].character >= #lines[last]) then
    return edits[1].newText
  end
  return nil
end

local function create_file(change)
  local path = vim.uri_to_fname(change.uri)
  local exists = vim.uv.fs_stat(path) ~= nil
  local opts = change.options or {}
  if exists and not opts.overwrite then
    if opts.ignoreIfExists then
      return nil
    end
    return ("%s already exists"):format(path)
  end
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local file, err = io.open(path, "w")
  if not file then
    return err
  end
  file:close()
  return nil
end

--- Apply one TextDocumentEdit; returns an error text when it cannot be applied.
---@param sync tether.DocSync?
local function apply_document_edit(change, sync, encoding)
  local uri = change.textDocument.uri
  local path = vim.uri_to_fname(uri)
  local buf = vim.fn.bufadd(path)
  local was_loaded = api.nvim_buf_is_loaded(buf)
  local version = change.textDocument.version
  if was_loaded then
    local doc = sync and sync:doc(buf)
    if type(version) == "number" then
      if not doc or doc.version ~= version or doc.dirty then
        return ("%s changed in the editor since version %s"):format(vim.fn.fnamemodify(path, ":."), tostring(version))
      end
    elseif vim.bo[buf].modified then
      return ("%s has unsaved changes in the editor that Tether has not seen"):format(vim.fn.fnamemodify(path, ":."))
    end
  else
    vim.fn.bufload(buf)
  end
  local keep_unsaved = was_loaded and vim.bo[buf].modified
  vim.bo[buf].buflisted = true
  local new_text = whole_text_edit(buf, change.edits)
  if new_text then
    replace_text(buf, new_text)
  else
    vim.lsp.util.apply_text_edits(change.edits, buf, encoding)
  end
  if not keep_unsaved then
    local ok, err = pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent noautocmd keepalt write")
    end)
    if not ok then
      return ("applied to the buffer, but writing %s failed: %s"):format(path, err)
    end
  end
  if sync then
    sync:open(buf)
    sync:flush(buf)
  end
  return nil
end

--- Handle a `workspace/applyEdit` request.
---@param params table `{label?, edit: WorkspaceEdit}`
---@param sync tether.DocSync?
---@return table `{applied, failureReason?}`
function M.apply(params, sync)
  local edit = params and params.edit or {}
  local encoding = "utf-16"
  local changes = edit.documentChanges
  if not changes and edit.changes then
    changes = {}
    for uri, edits in pairs(edit.changes) do
      table.insert(changes, { textDocument = { uri = uri }, edits = edits })
    end
  end
  for _, change in ipairs(changes or {}) do
    local failure
    if change.kind == "create" then
      failure = create_file(change)
    elseif change.kind then
      failure = ("unsupported resource operation %q"):format(change.kind)
    else
      local ok, err = pcall(apply_document_edit, change, sync, encoding)
      if ok then
        failure = err
      else
        failure = tostring(err)
      end
    end
    if failure then
      return { applied = false, failureReason = failure }
    end
  end
  return { applied = true }
end

return M
