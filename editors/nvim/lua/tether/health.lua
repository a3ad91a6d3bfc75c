--- `:checkhealth tether`: is the daemon there, which version, is a model provider
--- configured, which workspace and history database would be used.
---
--- The facts come from the daemon itself: the configured command with `serve`
--- replaced by `doctor --json` (`tether doctor --json`).
local config = require("tether.config")
local seams = require("tether.seams")

local M = {}

--- Flags `tether doctor` understands, for `initializationOptions` keys.
local OPTION_FLAGS = {
  provider = "--provider",
  model = "--model",
  baseUrl = "--base-url",
  base_url = "--base-url",
  script = "--script",
  maxSteps = "--max-steps",
  max_steps = "--max-steps",
  mode = "--mode",
}

--- The doctor command for a serve command: `tether serve --provider x` becomes
--- `tether doctor --json --provider x` (serve-only flags are dropped).
function M.doctor_command(cmd, init_options)
  local out, found = {}, false
  local skip = false
  for i, arg in ipairs(cmd) do
    if skip then
      skip = false
    elseif not found and i > 1 and (arg == "serve" or arg == "acp") then
      found = true
      vim.list_extend(out, { "doctor", "--json" })
    elseif arg == "--framing" then
      skip = true
    elseif not arg:match("^%-%-framing=") then
      table.insert(out, arg)
    end
  end
  if not found then
    vim.list_extend(out, { "doctor", "--json" })
  end
  for key, value in pairs(init_options or {}) do
    local flag = OPTION_FLAGS[key]
    if flag and (type(value) == "string" or type(value) == "number") and not vim.tbl_contains(out, flag) then
      vim.list_extend(out, { flag, tostring(value) })
    end
  end
  return out
end

function M.check()
  local health = vim.health
  local cmd = config.options.cmd
  local root = config.root()

  health.start("tether: Neovim")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is needed")
  end

  health.start("tether: daemon")
  local exe = cmd and cmd[1]
  if type(exe) ~= "string" or not seams.executable(exe) then
    health.error(
      ("daemon not found: `%s` (from setup({ cmd = %s })) is not an executable program"):format(
        tostring(exe),
        vim.inspect(cmd)
      ),
      {
        "Install Tether so that `tether` is on your PATH: pip install tether (or pipx install tether)",
        "Or tell the plugin where it is: require('tether').setup({ cmd = { '/path/to/tether', 'serve' } })",
      }
    )
    return
  end
  local opts = vim.deepcopy(config.options.init_options or {})
  if config.options.mode and opts.mode == nil then
    opts.mode = config.options.mode
  end
  local doctor = M.doctor_command(cmd, opts)
  local env = config.options.cmd_env
  local result = seams.run(doctor, { cwd = root, text = true, env = env }, 20000)
  local ok, facts = pcall(vim.json.decode, result.stdout or "", { luanil = { object = true } })
  if not ok or type(facts) ~= "table" then
    health.error(
      ("`%s` did not answer (exit code %s): %s"):format(
        table.concat(doctor, " "),
        tostring(result.code),
        vim.trim((result.stderr or "") .. (result.stdout or ""))
      ),
      { "Check that the command in setup({ cmd = … }) starts Tether: " .. table.concat(cmd, " ") }
    )
    return
  end
  health.ok(("tether %s found: `%s`"):format(tostring(facts.version), table.concat(cmd, " ")))
  if facts.error then
    health.error("configuration error: " .. facts.error)
  end
  local provider = facts.provider or {}
  if provider.ok then
    local parts = { provider.name }
    if provider.model then
      table.insert(parts, "model " .. provider.model)
    end
    if provider.baseUrl then
      table.insert(parts, provider.baseUrl)
    end
    health.ok(("provider: %s (%s)"):format(table.concat(parts, " · "), provider.why or ""))
    if provider.keyEnv and provider.keySet == false then
      health.warn(("the provider's API key is not set (%s)"):format(provider.keyEnv))
    end
  else
    health.error("no model provider configured: " .. tostring(provider.error), {
      "Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or choose a provider in ~/.config/tether/config.toml",
      "Or pass one to the daemon: require('tether').setup({ init_options = { provider = '…' } })",
    })
  end
  health.ok("workspace: " .. tostring(facts.workspace))
  health.ok("history database: " .. tostring(facts.history))
  if facts.ripgrep and facts.ripgrep ~= vim.NIL then
    health.ok("ripgrep: " .. facts.ripgrep)
  else
    health.info("ripgrep not found: grep uses its pure-Python twin")
  end

  health.start("tether: running daemons")
  local clients = require("tether.client").clients
  local any = false
  for client_root, client in pairs(clients) do
    if client.state ~= "stopped" then
      any = true
      local session = client.session and client.session.id or "no session"
      health.info(("%s: %s, %s"):format(client_root, client:status(), session))
    end
  end
  if not any then
    health.info("none (a daemon starts with :Tether)")
  end
end

return M
