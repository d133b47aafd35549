-- The session picker (:Goose sessions): goose-ls's chats, one line each, and the chosen one
-- shown in the chat window; a chat not open here is loaded first (goose/loadSession).
local M = {}

local chat = require("goose_ls.chat")

local function goose() return require("goose_ls") end

--- One line of the session picker: title, last change (local time), where it is open.
function M.format(s)
  local parts = { s.title or "New Session" }
  local stamp = s.updatedAt ~= "" and s.updatedAt or s.createdAt
  if stamp then
    local y, mo, d, h, mi = stamp:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+)")
    if y then
      local utc = os.time({ year = y, month = mo, day = d, hour = h, min = mi, isdst = false })
      local offset = os.time() - os.time(os.date("!*t")) ---@diagnostic disable-line: param-type-mismatch
      table.insert(parts, os.date("%Y-%m-%d %H:%M", utc + offset))
    end
  end
  if s.openElsewhere then
    table.insert(parts, "open in another editor")
  elseif s.loaded then
    table.insert(parts, "open here")
  end
  return table.concat(parts, " · ")
end

function M.pick()
  goose().request("goose/listSessions", {}, function(result)
    vim.ui.select(result.sessions, {
      prompt = "goose sessions",
      format_item = M.format,
    }, function(choice)
      if not choice then return end
      if chat.sessions[choice.sessionId] and chat.sessions[choice.sessionId].buf then
        chat.open(choice.sessionId) -- already shown here
        return chat.show(choice.sessionId)
      end
      goose().request("goose/loadSession", { sessionId = choice.sessionId }, function(loaded)
        chat.open(loaded.sessionId)
        chat.show(loaded.sessionId)
        require("goose_ls.compose").follow(loaded.sessionId)
      end)
    end)
  end)
end

return M
