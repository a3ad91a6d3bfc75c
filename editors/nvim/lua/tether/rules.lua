--- `:TetherRules`: the workspace's approval rules, and removing one you stored (SPEC §5.9).
---
--- A picker (`vim.ui.select`) lists every rule: the ones you stored ("allow always" /
--- "reject always" answers) first, numbered, with what each covers; then the built-in and
--- config rules, which cannot be removed here. Picking a stored rule asks once more, then
--- removes it (`_tether/rules/remove`): what it allowed is asked again.
local seams = require("tether.seams")

local M = {}

local function report(err)
  seams.notify("Tether: " .. (type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)),
    vim.log.levels.ERROR)
end

--- One rule as the picker shows it.
function M.format(rule)
  local covers = rule.scope or (rule.kind .. " " .. rule.pattern)
  if rule.id ~= nil and rule.id ~= vim.NIL then
    return ("#%d  %s  %s"):format(rule.id, rule.decision, covers)
  end
  return ("%s  %s  (%s: not removable)"):format(rule.decision, covers, rule.source)
end

local function stored_first(rules)
  local stored, fixed = {}, {}
  for _, rule in ipairs(rules) do
    table.insert((rule.id ~= nil and rule.id ~= vim.NIL) and stored or fixed, rule)
  end
  return vim.list_extend(stored, fixed)
end

local function remove(client, rule)
  seams.ui_select({ "Remove rule #" .. rule.id, "Keep it" }, {
    prompt = "Tether: remove " .. M.format(rule) .. "?",
    kind = "tether.rule.remove",
  }, function(_, idx)
    if idx ~= 1 then
      return
    end
    client:request("_tether/rules/remove", { sessionId = client.session.id, id = rule.id }, function(err)
      if err then
        return report(err)
      end
      seams.notify(("Tether: rule #%d removed; what it allowed is asked again"):format(rule.id))
    end)
  end)
end

--- `:TetherRules`: pick a rule; a stored one can then be removed.
function M.pick(client)
  if not client.session then
    return report("no session in this chat")
  end
  client:request("_tether/rules/list", { sessionId = client.session.id }, function(err, result)
    if err then
      return report(err)
    end
    local rules = stored_first((result or {}).rules or {})
    seams.ui_select(rules, {
      prompt = "Tether approval rules (pick one you stored to remove it)",
      kind = "tether.rules",
      format_item = M.format,
    }, function(rule)
      if not rule then
        return
      end
      if rule.id == nil or rule.id == vim.NIL then
        return seams.notify(("Tether: %s rules cannot be removed here; change your config"):format(rule.source))
      end
      remove(client, rule)
    end)
  end)
end

return M
