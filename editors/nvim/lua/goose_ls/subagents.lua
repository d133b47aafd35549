-- The agent's subagents in a chat (goose-ls's updates that carry a subagentId): each one's
-- work is a block of its own in the turn, under a heading the plugin draws,
-- "### 🤖 Subagent (state): title", drawn again in place as its state changes. Each block
-- is a fold of the chat window (zc closes it, zo opens it); nothing else in the chat folds.
local M = {}

local inert = require("goose_ls.inert")

local function chat() return require("goose_ls.chat") end
local function goose() return require("goose_ls") end

M.HEADING = "### 🤖 Subagent"

local STATES = { running = "⏳ running", requires_action = "✋ waiting for you" }
local ENDS = {
  end_turn = "✓ done",
  cancelled = "⊘ cancelled",
  error = "✗ failed",
  refusal = "✗ failed (refused)",
}

--- How the subagent's state reads: while at work, and once idle by its stop reason (none:
--- it ended with its chat's turn).
local function state_of(sub)
  if sub.state == "idle" then
    if not sub.stopReason then return "■ ended" end
    return ENDS[sub.stopReason] or ("■ ended (" .. inert.line(sub.stopReason) .. ")")
  end
  return STATES[sub.state or "running"] or ("• " .. inert.line(sub.state))
end

--- The plugin's words first, the agent's title after them, on one line. An earlier block
--- of the same subagent (its parent spoke between) says it goes on below, not a state
--- that would go stale there.
local function heading(sub, continued)
  local title = sub.title and (": " .. inert.line(sub.title)) or ""
  return M.HEADING .. " (" .. (continued and "continued below" or state_of(sub)) .. ")" .. title
end

local function known(id, child)
  local s = chat().session(id)
  s.subagents = s.subagents or {}
  local sub = s.subagents[child]
  if not sub then
    sub = { state = "running" }
    s.subagents[child] = sub
  end
  return sub
end

--- A subagent's block begins (goose_ls.transcript, at the end of the chat): its heading,
--- and the first time its description.
function M.begin(id, child)
  local c = chat()
  local s = c.session(id)
  local sub = known(id, child)
  local buf = c.buffer(id)
  if sub.row then
    local old = sub.row
    c.write(buf, function() vim.api.nvim_buf_set_lines(buf, old, old + 1, false, { heading(sub, true) }) end)
  end
  sub.row = vim.api.nvim_buf_line_count(buf) - 1 - s.tail
  local text = heading(sub) .. "\n"
  if sub.description and not sub.described then
    sub.described = true
    text = text .. "> _" .. inert.line(sub.description) .. "_\n"
  end
  c.append(id, text)
end

--- A subagent_update: its state kept, its heading drawn again where it is. False when it
--- has no block yet (the transcript begins one).
function M.on_update(id, u)
  local sub = known(id, u.subagentId)
  sub.title, sub.description = u.title, u.description
  sub.state, sub.stopReason = u.state, u.stopReason
  if not sub.row then return false end
  local c = chat()
  local buf = c.buffer(id)
  c.write(buf, function() vim.api.nvim_buf_set_lines(buf, sub.row, sub.row + 1, false, { heading(sub) }) end)
  return true
end

--- Headings below ``row`` moved ``delta`` lines (goose_ls.tools.shifted).
function M.shifted(id, row, delta)
  for _, sub in pairs(chat().session(id).subagents or {}) do
    if sub.row and sub.row > row then sub.row = sub.row + delta end
  end
end

--- The chat window's 'foldexpr': a fold from each subagent heading to the next speaker's
--- heading ("## You", the agent's). Agent text that begins as either does is escaped, so
--- it opens and closes no fold.
function M.fold(lnum)
  local line = vim.fn.getline(lnum)
  if line:sub(1, #M.HEADING) == M.HEADING then return ">1" end
  if line == "## You" or line == "## " .. goose().agent_name() then return "0" end
  return "="
end

return M
