-- The turns of a chat: the one running and the prompts waiting behind it (goose-ls runs a
-- chat's prompts one at a time). The waiting ones are drawn as the last lines of the chat
-- buffer, below the transcript (the "queue tail"); one leaves it when its first event
-- comes, or when its turn ends (cancelled while it waited). goose/status corrects the lot.
local M = {}

local function chat() return require("goose_ls.chat") end
local function goose() return require("goose_ls") end

--- Draw the prompts waiting for the running turn: "⏳ queued #1: the first line".
local function render(id)
  local c = chat()
  local s = c.session(id)
  local buf = c.buffer(id)
  local lines = {}
  for position, queued in ipairs(s.queue) do
    local first = vim.split(queued.text, "\n", { plain = true })
    local more = #first > 1 and " …" or ""
    table.insert(lines, string.format("⏳ queued #%d: %s%s", position, first[1], more))
  end
  if #lines > 0 then table.insert(lines, 1, "") end
  c.write(buf, function()
    local count = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, count - s.tail, count, false, lines)
  end)
  s.tail = #lines
end

--- Take the prompt ``message_id`` out of the queue, if it waits there.
local function leave(id, message_id)
  local s = chat().session(id)
  for position, queued in ipairs(s.queue) do
    if queued.id == message_id then
      table.remove(s.queue, position)
      return render(id)
    end
  end
end

--- A turn started (an event carries its messageId): it leaves the queue. A waiting one
--- whose events come while another turn runs was sent into that turn (Send now).
function M.started(id, message_id)
  local s = chat().session(id)
  if not message_id or s.seen[message_id] then return end
  s.seen[message_id] = "started"
  if s.running and s.running ~= message_id and s.seen[s.running] == "started" then
    s.joined[message_id] = true
  else
    s.running = message_id
  end
  leave(id, message_id)
  goose().changed()
end

--- A turn ended: it no longer runs, nor waits. True when it had joined another turn, whose
--- end says all there is to say.
function M.ended(id, message_id)
  local s = chat().session(id)
  s.seen[message_id] = "ended"
  leave(id, message_id)
  if s.running == message_id then s.running = nil end
  local joined = s.joined[message_id] ~= nil
  s.joined[message_id] = nil
  return joined
end

--- goose-ls accepted a prompt sent from here: running now, or waiting behind others.
function M.accepted(id, message_id, text, queued)
  local s = chat().session(id)
  if s.seen[message_id] then return end -- its events came first
  if queued then
    table.insert(s.queue, { id = message_id, text = text })
    render(id)
  else
    s.running = message_id
  end
  goose().changed()
end

--- Take the truth from a goose/status session summary: is a turn running, what waits.
function M.sync(summary)
  local s = chat().sessions[summary.sessionId]
  if not s then return end
  if not summary.busy then s.running = nil end
  s.usage = summary.usage or s.usage
  local texts = {}
  for _, queued in ipairs(s.queue) do
    texts[queued.id] = queued.text
  end
  s.queue = {}
  for _, message_id in ipairs(summary.waiting or {}) do
    table.insert(s.queue, { id = message_id, text = texts[message_id] or "(a message)" })
  end
  render(summary.sessionId)
end

--- "waiting for you" (a permission or a question), "running", "idle", followed by
--- ", queued N" when prompts wait.
function M.state(id)
  local s = chat().sessions[id]
  if not s then return "idle" end
  local asking = next(s.permissions) or require("goose_ls.elicitation").waiting(id)
  local state = asking and "waiting for you" or (s.running and "running" or "idle")
  if #s.queue > 0 then state = state .. ", queued " .. #s.queue end
  return state
end

return M
