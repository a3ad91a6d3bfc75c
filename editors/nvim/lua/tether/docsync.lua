--- Document sync: the daemon sees the text of your open buffers, saved or not.
---
--- Normal file buffers under the workspace root are announced with
--- `textDocument/didOpen`, their changes sent as `textDocument/didChange` (the whole
--- text, debounced) and their closing as `textDocument/didClose`. The version is the
--- buffer's `b:changedtick` when the text was sent, so `workspace/applyEdit` can be
--- checked against it.
local seams = require("tether.seams")

local api = vim.api

---@class tether.DocSync
---@field client tether.Client
---@field docs table<integer, {uri: string, version: integer, dirty: boolean, cancel?: fun()}>
local DocSync = {}
DocSync.__index = DocSync

---@return tether.DocSync
function DocSync.new(client, debounce_ms)
  local self = setmetatable({ client = client, docs = {}, debounce_ms = debounce_ms or 150 }, DocSync)
  self.group = api.nvim_create_augroup("tether.docsync." .. client.root, { clear = true })
  return self
end

--- The buffer's whole text, as it would be written.
function DocSync.text(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  local bo = vim.bo[buf]
  if bo.eol or (bo.fixendofline and not bo.binary) then
    text = text .. "\n"
  end
  return text
end

--- Whether the daemon should know this buffer: a loaded file under the root.
function DocSync:wants(buf)
  if not api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local path = vim.uv.fs_realpath(name) or vim.fs.normalize(name)
  local root = self.client.root
  return path:sub(1, #root + 1) == root .. "/"
end

local function uri_of(buf)
  local name = api.nvim_buf_get_name(buf)
  return vim.uri_from_fname(vim.uv.fs_realpath(name) or vim.fs.normalize(name))
end

--- Announce a buffer (if wanted and not yet known) and follow its changes.
function DocSync:open(buf)
  if self.docs[buf] or not self:wants(buf) then
    return
  end
  local doc = { uri = uri_of(buf), version = api.nvim_buf_get_changedtick(buf), dirty = false }
  self.docs[buf] = doc
  self.client:notify("textDocument/didOpen", {
    textDocument = {
      uri = doc.uri,
      languageId = vim.bo[buf].filetype ~= "" and vim.bo[buf].filetype or "plaintext",
      version = doc.version,
      text = DocSync.text(buf),
    },
  })
  api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if self.docs[buf] ~= doc then
        return true -- closed (or reopened with a new record): detach this listener
      end
      self:_changed(buf)
    end,
    on_reload = function()
      if self.docs[buf] == doc then
        self:_changed(buf)
      end
    end,
  })
end

function DocSync:_changed(buf)
  local doc = self.docs[buf]
  doc.dirty = true
  if doc.cancel then
    doc.cancel()
  end
  doc.cancel = seams.defer(function()
    doc.cancel = nil
    self:flush(buf)
  end, self.debounce_ms)
end

--- Send a buffer's pending change now (before a prompt, after an applied edit).
function DocSync:flush(buf)
  local doc = self.docs[buf]
  if not doc or not doc.dirty or not api.nvim_buf_is_loaded(buf) then
    return
  end
  if doc.cancel then
    doc.cancel()
    doc.cancel = nil
  end
  doc.dirty = false
  doc.version = api.nvim_buf_get_changedtick(buf)
  self.client:notify("textDocument/didChange", {
    textDocument = { uri = doc.uri, version = doc.version },
    contentChanges = { { text = DocSync.text(buf) } },
  })
end

function DocSync:flush_all()
  for buf in pairs(self.docs) do
    self:flush(buf)
  end
end

function DocSync:close(buf)
  local doc = self.docs[buf]
  if not doc then
    return
  end
  if doc.cancel then
    doc.cancel()
  end
  self.docs[buf] = nil
  self.client:notify("textDocument/didClose", { textDocument = { uri = doc.uri } })
end

--- The record of a buffer the daemon knows.
function DocSync:doc(buf)
  return self.docs[buf]
end

--- Announce every loaded buffer and follow buffers opened, renamed and closed later.
function DocSync:start()
  for _, buf in ipairs(api.nvim_list_bufs()) do
    self:open(buf)
  end
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = self.group,
    callback = function(ev)
      self:open(ev.buf)
    end,
  })
  api.nvim_create_autocmd({ "BufUnload", "BufFilePre" }, {
    group = self.group,
    callback = function(ev)
      self:close(ev.buf)
    end,
  })
end

--- Stop following buffers (the daemon has gone).
function DocSync:stop()
  pcall(api.nvim_del_augroup_by_id, self.group)
  for _, doc in pairs(self.docs) do
    if doc.cancel then
      doc.cancel()
    end
  end
  self.docs = {}
end

return DocSync
