--- Settings, with their defaults. `require("tether").setup(opts)` merges into these.
local M = {}

---@class tether.Config
M.defaults = {
  --- How to start the daemon (one per workspace root). Extra flags such as
  --- `--provider scripted --script FILE` may follow `serve`.
  cmd = { "tether", "serve" },
  --- Extra environment for the daemon (added to Neovim's).
  cmd_env = nil,
  --- The workspace root: a path, a function returning one, or nil to use the
  --- nearest directory above the current directory holding one of `root_markers`,
  --- else the current directory.
  root = nil,
  root_markers = { ".git", ".tether" },
  --- The mode of new sessions: "read-only", "ask", "auto-edit" or "full-auto"
  --- (nil: the daemon's setting, "ask" by default).
  mode = nil,
  --- Sent as `initializationOptions` (see the daemon's SPEC §9), e.g.
  --- `{ provider = "scripted", script = "script.json" }` or `{ maxSteps = 10 }`.
  init_options = {},
  --- Width of the chat split (columns; a number below 1 is a fraction of the screen).
  width = 0.4,
  --- Height of the prompt area under the chat (lines).
  prompt_height = 5,
  --- Enter insert mode in the prompt area when the chat opens.
  start_insert = true,
  --- Wait this long after the last change before sending a buffer's text (ms).
  sync_debounce_ms = 150,
  --- Key maps; set one to false to leave it unmapped.
  keymaps = {
    send = "<CR>", -- normal mode, prompt area
    send_insert = "<C-s>", -- insert mode, prompt area
    steer = "<M-CR>", -- prompt area: send into the running turn (joins it at its next step)
    cancel = "<C-c>", -- chat and prompt area
    jump = { "gf", "<CR>" }, -- chat: open the location under the cursor
    close = "q", -- chat: close the split
    -- edit review (the diff tab)
    accept = "a",
    accept_always = "A",
    reject = "r",
    reject_always = "R",
    dismiss = "q", -- rejects once
  },
}

---@type tether.Config
M.options = vim.deepcopy(M.defaults)

---@param opts? table
function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- lists are replaced, not merged
  if opts and opts.cmd then
    M.options.cmd = vim.deepcopy(opts.cmd)
  end
  if opts and opts.keymaps and opts.keymaps.jump ~= nil then
    M.options.keymaps.jump = opts.keymaps.jump
  end
  return M.options
end

--- The workspace root for the current directory.
---@return string
function M.root()
  local root = M.options.root
  if type(root) == "function" then
    root = root()
  end
  if type(root) ~= "string" or root == "" then
    local cwd = vim.fn.getcwd()
    root = vim.fs.root(cwd, M.options.root_markers) or cwd
  end
  local full = vim.fn.fnamemodify(root, ":p")
  full = vim.uv.fs_realpath(full) or full
  if #full > 1 then
    full = (full:gsub("/$", ""))
  end
  return vim.fs.normalize(full)
end

return M
