-- Fork a chat at a turn (:Goose fork, <Plug>(goose-fork)): the new chat goes on from the end
-- of the turn under the cursor. Which turn a line is in is kept as the chat is drawn: an
-- extmark where each turn's first block begins and one where it ends, so lines added below
-- (and blocks drawn again in place) move nothing, and a replayed event, drawn once, marks
-- once. goose/forkSession's new chat is shown as any chat; where the agent could not fork,
-- the summary goose-ls answers (`seed`) waits in the new chat's compose area, not sent.
local M = {}

local ns = vim.api.nvim_create_namespace("goose_ls_turns")

local function chat() return require("goose_ls.chat") end
local function goose() return require("goose_ls") end

--- The session's turns as drawn in its buffer: `marks[messageId] = { start, stop }`
--- (extmark ids; `stop` once the turn ended) and `order`, the messageIds in the order they
--- began. A buffer made again (the chat's was wiped) starts with none.
local function turns(id)
  local s = chat().session(id)
  if not s.turn_marks or s.turn_marks.buf ~= s.buf then
    s.turn_marks = { buf = s.buf, marks = {}, order = {} }
  end
  return s.turn_marks
end

--- Where the transcript ends (above the queue tail): its last row (0-based) and that row's
--- length.
local function transcript_end(id)
  local s = chat().session(id)
  local row = vim.api.nvim_buf_line_count(s.buf) - 1 - s.tail
  return row, #(vim.api.nvim_buf_get_lines(s.buf, row, row + 1, false)[1] or "")
end

--- A mark at the start of ``row`` that text added there (at the end of an empty last
--- line) does not move.
local function mark(buf, row)
  return vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { right_gravity = false })
end

--- Draw the goose/update ``params`` with ``draw``; when it is the first text drawn for its
--- turn, mark the row its first block begins on (past the blank lines that separate it).
function M.on_update(params, draw)
  local id, message_id = params.sessionId, params.messageId
  if type(message_id) ~= "string" then return draw(params) end
  local buf = chat().buffer(id)
  if turns(id).marks[message_id] then return draw(params) end
  local row, col = transcript_end(id)
  draw(params)
  local last, last_col = transcript_end(id)
  if last == row and last_col == col then return end -- nothing drawn (a duplicate, a usage)
  -- New text goes on the last row: the first block begins below it when the row had text.
  local first = col > 0 and row + 1 or row
  local lines = vim.api.nvim_buf_get_lines(buf, first, last + 1, false)
  for n, line in ipairs(lines) do
    if vim.trim(line) ~= "" then
      local t = turns(id)
      t.marks[message_id] = { start = mark(buf, first + n - 1) }
      table.insert(t.order, message_id)
      return
    end
  end
end

--- Draw the goose/turnEnd ``params`` with ``draw``, then mark where its turn ends: the row
--- the transcript ends on (the blank line under the turn).
function M.on_turn_end(params, draw)
  draw(params)
  local id = params.sessionId
  local s = chat().sessions[id]
  local marks = s and s.turn_marks and s.turn_marks.buf == s.buf and s.turn_marks.marks
  local turn = marks and marks[params.messageId or ""]
  if turn and not turn.stop and vim.api.nvim_buf_is_valid(s.buf) then
    turn.stop = mark(s.buf, (transcript_end(id)))
  end
end

--- The turn that row ``row`` (0-based) of chat ``id``'s buffer is in: its messageId and
--- whether it ended; nil for a row in none (the chat's heading, a note between turns).
--- A message sent into a running turn is a turn of its own within it: the innermost wins.
function M.turn_at(id, row)
  local s = chat().sessions[id]
  if not (s and s.turn_marks and s.turn_marks.buf == s.buf) then return nil end
  if not (s.buf and vim.api.nvim_buf_is_valid(s.buf)) then return nil end
  local found, ended = nil, false
  for _, message_id in ipairs(s.turn_marks.order) do
    local turn = s.turn_marks.marks[message_id]
    local start = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, turn.start, {})[1]
    local stop = turn.stop and vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, turn.stop, {})[1]
    if start and start <= row and (not stop or row <= stop) then
      found, ended = message_id, turn.stop ~= nil
    end
  end
  return found, ended
end

--- Show the new chat of a goose/forkSession ``result`` as any chat; with a `seed` (the
--- agent could not fork), open its compose area holding the summary, and say why once.
function M.opened(result)
  local id = result.sessionId
  local c = chat()
  c.open(id)
  c.show(id)
  local compose = require("goose_ls.compose")
  compose.follow(id)
  if type(result.seed) ~= "string" then return end
  local why = require("goose_ls.inert").line(tostring(result.notForked or "the agent cannot fork"))
  local lines = vim.split(result.seed:gsub("\n+$", ""), "\n", { plain = true })
  vim.api.nvim_buf_set_lines(compose.buffer(id), 0, -1, false, lines)
  compose.open(id)
  vim.api.nvim_win_set_cursor(0, { #lines, 0 }) -- insert mode starts at its end
  -- Said in the chat too (goose-ls's note), and kept in :messages. Short: a message wider
  -- than the command line stops everything for a hit-enter prompt.
  vim.notify("goose: not a fork (" .. why .. "); edit the summary, then send it", vim.log.levels.WARN)
end

--- :Goose fork: a new chat that goes on from the end of the turn under the cursor.
function M.here()
  local id = vim.b.goose_chat
  if not id then
    return vim.notify("goose: fork: put the cursor on a turn of a chat buffer", vim.log.levels.WARN)
  end
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local message_id, ended = M.turn_at(id, line - 1)
  if not message_id then
    return vim.notify(
      string.format("goose: fork: line %d is in no turn: put the cursor on a turn (its heading or below it)", line),
      vim.log.levels.WARN
    )
  end
  if not ended then
    return vim.notify("goose: fork: that turn is still running; fork it once it has ended", vim.log.levels.WARN)
  end
  goose().request("goose/forkSession", { sessionId = id, messageId = message_id }, M.opened)
end

return M
