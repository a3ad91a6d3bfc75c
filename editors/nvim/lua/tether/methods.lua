--- What the daemon may send, by method: notifications and requests to the editor.
---
--- Requests run in the coroutine `vim.lsp.rpc` gives each server request, so a handler
--- can wait for the user (`coroutine.yield`) and return the answer when it comes.
local approval = require("tether.approval")
local apply_edit = require("tether.apply_edit")
local acp_v2 = require("tether.acp_v2")

local M = {}

---@type table<string, fun(client: tether.Client, params: table)>
M.notifications = {
  ["session/update"] = function(client, params)
    client:on_session_update(params)
  end,
  -- `/clear`: the new session to show in this chat
  ["_tether/session/cleared"] = function(client, params)
    client:on_session_cleared(params)
  end,
  -- ACP's spelling, which Tether uses with this client (it declares protocolVersion)
  ["$/cancel_request"] = function(client, params)
    client:on_withdrawn(params.requestId or params.id)
  end,
  -- LSP's spelling, handled too
  ["$/cancelRequest"] = function(client, params)
    client:on_withdrawn(params.id or params.requestId)
  end,
}

---@type table<string, fun(client: tether.Client, params: table, request_id: string): any, table?>
M.requests = {
  ["session/request_permission"] = function(client, params, request_id)
    if client.v2 then
      params = acp_v2.permission(params)
    end
    local co = coroutine.running()
    local answered, answer = false, nil
    local ask = approval.ask(request_id, params, client.root, function(result)
      -- what you typed while deciding reaches the daemon before your answer, so it
      -- can see that the text changed under the proposed edit
      if client.docsync then
        client.docsync:flush_all()
      end
      if coroutine.status(co) == "suspended" then
        coroutine.resume(co, result)
      else
        answered, answer = true, result -- answered before the handler yielded
      end
    end, function()
      client:on_approval_closed(request_id)
    end)
    client:on_approval_opened(request_id, ask)
    if answered then
      return answer
    end
    return coroutine.yield()
  end,
  ["workspace/applyEdit"] = function(client, params)
    return apply_edit.apply(params, client.docsync)
  end,
}

return M
