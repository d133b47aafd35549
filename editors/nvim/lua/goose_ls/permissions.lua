-- The agent's permission questions (permission_request): drawn in the chat with the diff
-- an edit would make, then asked with vim.ui.select once the chat shows them (a prompt
-- blocks the screen). Their answer (permission_resolved, given here or elsewhere) is drawn
-- as a verdict. A session's open questions are its `permissions` (goose_ls.chat).
local M = {}

local inert = require("goose_ls.inert")

local function chat() return require("goose_ls.chat") end
local function goose() return require("goose_ls") end

--- The diff an edit would make, minimal (3 lines of context), as a fenced block.
local function diff_block(item)
  local function with_newline(text)
    text = text or ""
    return (text == "" or text:sub(-1) == "\n") and text or text .. "\n"
  end
  local hunks = vim.diff(with_newline(item.oldText), with_newline(item.newText), { ctxlen = 3 })
  local path = chat().relative(vim.uri_from_fname(item.path or "?"))
  if hunks == "" then return "\n\n" .. path .. ": no change" end
  ---@cast hunks string
  return "\n\n```diff\n--- " .. path .. "\n+++ " .. path .. "\n" .. hunks .. "```"
end

--- The diffs of a permission's tool call: from the request, else from the call as last seen.
local function diffs_of(s, tool_call)
  local found = {}
  local function collect(content)
    for _, item in ipairs(content or {}) do
      if item.type == "diff" then table.insert(found, item) end
    end
  end
  collect(tool_call.content)
  local known = s.tools[tool_call.toolCallId]
  if #found == 0 and known then collect(known.content) end
  return found
end

local function ask(id, update)
  local c = chat()
  local s = c.session(id)
  -- Let the chat draw the question and its diff first: a prompt like inputlist() blocks
  -- the screen until it is answered.
  vim.schedule(function()
    if not s.permissions[update.requestId] then return end -- answered already (a replay)
    if not c.window(id) then c.show(id) end
    pcall(vim.cmd, "redraw")
    -- Rejecting first: a picker that starts on its first entry must not allow on Enter.
    local options = {}
    for _, o in ipairs(update.options) do
      if o.kind:match("^reject") then table.insert(options, o) end
    end
    for _, o in ipairs(update.options) do
      if not o.kind:match("^reject") then table.insert(options, o) end
    end
    vim.ui.select(options, {
      prompt = goose().agent_name() .. " is waiting for your approval: " .. M.action(update),
      format_item = function(o) return inert.line(o.label) end, -- worded by goose-ls
    }, function(choice)
      s.answered[update.requestId] = true
      goose().request("goose/permission", {
        requestId = update.requestId,
        optionId = choice and choice.optionId or nil,
      })
    end)
  end)
end

local VERDICTS = {
  allow_once = { "Allow once", "allowed once" },
  allow_always = { "Allow always", "allowed always" },
  reject_once = { "Reject", "rejected" },
  reject_always = { "Reject always", "rejected always" },
}

--- "allowed once by you", "rejected", "allowed (Allow for this session) by you", "cancelled".
local function verdict(s, u)
  local by = s.answered[u.requestId] and " by you" or ""
  if u.outcome ~= "selected" then return "not answered (cancelled)" end
  local request = s.permissions[u.requestId]
  local kind
  for _, option in ipairs(request and request.options or {}) do
    if option.optionId == u.optionId then kind = option.kind end
  end
  local words = VERDICTS[kind or ""]
  if words and words[1] == u.label then return words[2] .. by end
  local allowed = (kind or ""):match("^allow") and "allowed" or (kind and "rejected" or "answered")
  return allowed .. " (" .. inert.line(u.label or u.optionId or "?") .. ")" .. by
end

--- What allowing lets happen, from goose-ls's reading of the request (its command, its
--- files), then the agent's own name for it: never the agent's title alone.
function M.action(u)
  local title = inert.line((u.toolCall and u.toolCall.title) or "a tool")
  local action = u.action and inert.line(u.action)
  if not action or action == "" then return title end
  return action .. " (it calls this “" .. title .. "”)"
end

--- A permission_request or permission_resolved of the session: the text the chat shows for
--- it. A request is asked once the chat has drawn it, unless it was answered meanwhile.
function M.on_update(id, u)
  local s = chat().session(id)
  if u.sessionUpdate == "permission_resolved" then
    local text = "🔐 " .. verdict(s, u)
    s.permissions[u.requestId] = nil
    return text
  end
  s.permissions[u.requestId] = u
  local text = "🔐 permission: " .. M.action(u)
  if u.warning then text = text .. "\n\n⚠ " .. inert.line(u.warning) end
  for _, item in ipairs(diffs_of(s, u.toolCall)) do -- what an edit will do, before asking
    text = text .. diff_block(item)
  end
  ask(id, u)
  return text
end

return M
