-- Send now: the oldest message waiting in the current chat joins the running turn
-- (goose/steer), where the agent can take it. Its user_message_chunk updates then move it
-- from the queue into the chat (goose_ls.queue); an agent that cannot take it says why,
-- and the message keeps its place in the queue.
local M = {}

function M.now()
  local chat = require("goose_ls.chat")
  local id = chat.current
  local waiting = id and chat.sessions[id] and chat.sessions[id].queue[1]
  if not waiting then
    return vim.notify("goose: no message waits to be sent now", vim.log.levels.WARN)
  end
  require("goose_ls").request("goose/steer", { sessionId = id, messageId = waiting.id }, function(result)
    if not result.steered then vim.notify("goose: the turn had ended; your message runs next") end
  end)
end

return M
