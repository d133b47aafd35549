-- A chat buffer per session, and each session's state: the buffer is written only here
-- (it is not modifiable; the user writes messages in the compose area, goose_ls.compose),
-- and the windows that show it follow what is appended. What goes into it is drawn by
-- goose_ls.transcript (the goose/* events, append-only, each once), goose_ls.tools,
-- goose_ls.permissions and goose_ls.plans; goose_ls.queue keeps the prompts waiting for the
-- running turn as its last lines (the "queue tail"), below the transcript.
local M = { sessions = {}, current = nil }

local queue = require("goose_ls.queue")
local transcript = require("goose_ls.transcript")

local function goose() return require("goose_ls") end

--- The session's state, made on first use (compose.lua and plans.lua keep theirs in it too).
local function session(id)
  local s = M.sessions[id]
  if not s then
    s = {
      last_index = 0,
      buf = nil,
      kind = nil,
      tools = {},
      queue = {}, -- { id = messageId, text = prompt }, in the order they will run
      tail = 0, -- how many lines at the end show the queue
      running = nil, -- the messageId of the running turn
      joined = {}, -- messageId -> true: sent into the running turn (Send now), ends with it
      seen = {}, -- messageId -> "started" | "ended"
      permissions = {}, -- requestId -> the permission_request still waiting for an answer
      answered = {}, -- requestId -> true when answered from this Neovim
      catching_up = false, -- a goose/replay asked for after a gap has not answered yet
      held = nil, -- index -> the event after a gap and how to draw it, until that replay answers
      usage = nil, -- the agent's last usage_update: { used, size, cost? }
      commands = {}, -- the agent's slash commands (its last available_commands_update)
      subagents = {}, -- subagentId -> { title, description, state, stopReason, row }
    }
    M.sessions[id] = s
  end
  return s
end
M.session = session

--- Windows showing ``buf`` whose cursor is on its last line: they follow what is appended.
local function followers(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  local wins = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last then table.insert(wins, win) end
  end
  return wins
end

local refold_pending = {} -- buf -> true: its folds are computed again once Insert mode ends

--- Neovim updates no fold while in Insert mode (the compose area's, most often: the
--- chat grows while the user writes), and on leaving it only the current window's. A
--- chat changed meanwhile would show no fold for a subagent's block until zx: its
--- windows compute their folds again ('foldmethod' set anew) once Insert (or Replace)
--- mode is over, however it is left (<C-c> fires no InsertLeave).
local function refold_after_insert(buf)
  if refold_pending[buf] or not vim.api.nvim_get_mode().mode:match("^[iR]") then return end
  refold_pending[buf] = true
  vim.api.nvim_create_autocmd("ModeChanged", {
    callback = function()
      if vim.v.event.new_mode:match("^[iR]") then return end
      refold_pending[buf] = nil
      vim.schedule(function()
        if not vim.api.nvim_buf_is_valid(buf) then return end
        for _, win in ipairs(vim.fn.win_findbuf(buf)) do
          vim.api.nvim_set_option_value("foldmethod", "expr", { scope = "local", win = win })
        end
      end)
      return true -- once
    end,
  })
end

--- Change the (not modifiable) buffer; windows that were at its end stay at its end.
local function write(buf, fn)
  local wins = followers(buf)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  refold_after_insert(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_set_cursor(win, { last, 0 }) end
  end
  if not ok then error(err, 0) end
end

--- Window options of a chat window: wrapped lines, and a fold for each subagent's block
--- only (goose_ls.subagents; code in answers is indented, and never folds), open at first.
local function dress(win)
  for name, value in pairs({
    wrap = true,
    linebreak = true,
    foldmethod = "expr",
    foldexpr = "v:lua.require'goose_ls.subagents'.fold(v:lnum)",
    foldlevel = 99,
    foldenable = true,
  }) do
    vim.api.nvim_set_option_value(name, value, { scope = "local", win = win })
  end
end

local function buffer(id)
  local s = session(id)
  if s.buf and vim.api.nvim_buf_is_valid(s.buf) then return s.buf end
  s.buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(s.buf, "goose://" .. id)
  vim.b[s.buf].goose_chat = id
  vim.bo[s.buf].filetype = "markdown"
  vim.bo[s.buf].bufhidden = "hide"
  vim.bo[s.buf].undolevels = -1
  vim.api.nvim_buf_set_lines(s.buf, 0, -1, false, { "# " .. goose().agent_name() .. " chat · " .. id, "" })
  vim.bo[s.buf].modifiable = false
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = s.buf,
    callback = function()
      dress(vim.api.nvim_get_current_win())
      M.catch_up(id)
    end,
  })
  return s.buf
end
M.buffer = buffer

--- Append text at the end of the transcript (its last line continues), above the queue.
local function append(id, text)
  local s = session(id)
  local buf = buffer(id)
  write(buf, function()
    local last = vim.api.nvim_buf_line_count(buf) - 1 - s.tail
    local tail = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
    vim.api.nvim_buf_set_text(buf, last, #tail, last, #tail, vim.split(text, "\n", { plain = true }))
  end)
end
M.append, M.write = append, write

--- End the transcript's last line and leave one blank line under it (not two, after a
--- block that ends its own line), for a new block.
function M.separate(id)
  local s = session(id)
  local buf = buffer(id)
  local last = vim.api.nvim_buf_line_count(buf) - 1 - s.tail
  local lines = vim.api.nvim_buf_get_lines(buf, math.max(last - 1, 0), last + 1, false)
  if lines[#lines] ~= "" then
    append(id, "\n\n")
  elseif #lines > 1 and lines[1] ~= "" then
    append(id, "\n")
  end
end

--- A path as the user knows it: relative to the workspace when it is inside it.
local function relative(uri)
  local path = uri
  if path:match("^file://") then path = vim.uri_to_fname((path:gsub("#.*$", ""))) end
  local root = goose().root()
  if root and path:sub(1, #root + 1) == root .. "/" then return path:sub(#root + 2) end
  return path
end
M.relative = relative

--- The chat's buffer is named after the chat's title (the agent's, or a rename).
function M.retitle(id, title)
  local buf, name = buffer(id), "goose://" .. vim.trim((title:gsub("%s+", " ")))
  if name ~= "goose://" and not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. " (" .. id .. ")") -- another chat has it
  end
end

--- Ask goose-ls for whatever this session missed while its buffer was hidden.
function M.catch_up(id)
  goose().request("goose/replay", { sessionId = id, afterIndex = session(id).last_index })
end

function M.open(id)
  M.current = id
  buffer(id)
end

--- A window of the current tab showing this chat (any chat when ``id`` is nil).
function M.window(id)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local shown = vim.b[vim.api.nvim_win_get_buf(win)].goose_chat
    if shown and (id == nil or shown == id) then return win end
  end
end

--- Show the chat: in the window of this tab that shows a chat (reused, so a new chat does
--- not open another split), else in a new split. The cursor stays where it was.
function M.show(id)
  local buf = buffer(id)
  if M.window(id) then return end
  local win = M.window()
  if win then
    vim.api.nvim_win_set_buf(win, buf)
  else
    local from = vim.api.nvim_get_current_win()
    vim.cmd(goose().config.chat_split)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.api.nvim_set_current_win(from)
  end
  dress(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 }) -- following
end

--- Where the rest of the plugin hands the chat what goose-ls says (init.lua's handlers)
--- and what became of the prompts sent from here. goose_ls.fork marks where each turn
--- begins and ends as it is drawn (:Goose fork).
local fork = require("goose_ls.fork")
function M.on_update(params) fork.on_update(params, transcript.on_update) end
function M.on_turn_end(params) fork.on_turn_end(params, transcript.on_turn_end) end
M.accepted, M.sync, M.state = queue.accepted, queue.sync, queue.state

return M
