-- Chat buffers fed by goose/* notifications: append-only, deduplicated by index.
-- The user never edits a chat buffer (it is not modifiable; messages are written in the
-- compose area, goose_ls.compose); the prompts waiting for the running turn are shown
-- as the last lines (the "queue tail"), below the transcript.
local M = { sessions = {}, current = nil }

local function goose() return require("goose_ls") end

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
      usage = nil, -- the agent's last usage_update: { used, size, cost? }
      commands = {}, -- the agent's slash commands (its last available_commands_update)
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

--- Change the (not modifiable) buffer; windows that were at its end stay at its end.
local function write(buf, fn)
  local wins = followers(buf)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_set_cursor(win, { last, 0 }) end
  end
  if not ok then error(err, 0) end
end

--- Window options of a chat window: no folds (code in answers is indented), wrapped lines.
local function dress(win)
  for name, value in pairs({ foldenable = false, wrap = true, linebreak = true }) do
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
  vim.api.nvim_buf_set_lines(s.buf, 0, -1, false, { "# goose chat · " .. id, "" })
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

local function block(id, kind, heading)
  local s = session(id)
  if s.kind ~= kind then
    append(id, "\n\n" .. heading)
    s.kind = kind
  end
end

--- Draw the prompts waiting for the running turn: "⏳ queued #1: the first line".
local function render_queue(id)
  local s = session(id)
  local buf = buffer(id)
  local lines = {}
  for position, queued in ipairs(s.queue) do
    local first = vim.split(queued.text, "\n", { plain = true })
    local more = #first > 1 and " …" or ""
    table.insert(lines, string.format("⏳ queued #%d: %s%s", position, first[1], more))
  end
  if #lines > 0 then table.insert(lines, 1, "") end
  write(buf, function()
    local count = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, count - s.tail, count, false, lines)
  end)
  s.tail = #lines
end

--- A path as the user knows it: relative to the workspace when it is inside it.
local function relative(uri)
  local path = uri:gsub("#.*$", "")
  if path:match("^file://") then path = vim.uri_to_fname(path) end
  local root = goose().root()
  if root and path:sub(1, #root + 1) == root .. "/" then return path:sub(#root + 2) end
  return path
end
M.relative = relative

--- "📎 app.py:8-12" for a URI with a "#L8-L12" fragment, "📎 app.py" without one.
local function attachment(uri)
  local first, last = uri:match("#L(%d+)%-L(%d+)$")
  first = first or uri:match("#L(%d+)$")
  local lines = first and (":" .. first .. (last and last ~= first and ("-" .. last) or "")) or ""
  return "📎 " .. relative(uri) .. lines
end

--- The text of a user's message, with attached context shown as 📎 lines: the agent's own
--- `<context ref="…">…</context>` wrapping (in history a resumed chat replays) and goose-ls's
--- "path:8-12" heading over a fenced block (for agents without embedded context).
local function user_text(text)
  text = text:gsub('\n?<context ref="([^"]*)">.-</context>', function(uri)
    return "\n" .. attachment(uri)
  end)
  local path, first, last = text:match("^(/[^\n]*):(%d+)%-(%d+)\n```")
  if path and text:match("```%s*$") then
    return attachment(vim.uri_from_fname(path) .. "#L" .. first .. "-L" .. last)
  end
  return text
end

local function text_of(content, user)
  if content.type == "text" then return user and user_text(content.text) or content.text end
  if content.type == "resource_link" then return attachment(content.uri or content.name or "") end
  if content.type == "resource" then return attachment(content.resource.uri or "") end
  return "[" .. tostring(content.type) .. "]"
end

--- The diff an edit would make, minimal (3 lines of context), as a fenced block.
local function diff_block(item)
  local function with_newline(text)
    text = text or ""
    return (text == "" or text:sub(-1) == "\n") and text or text .. "\n"
  end
  local hunks = vim.diff(with_newline(item.oldText), with_newline(item.newText), { ctxlen = 3 })
  local path = relative(vim.uri_from_fname(item.path or "?"))
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

local function ask_permission(id, update)
  local s = session(id)
  -- Let the chat draw the question and its diff first: a prompt like inputlist() blocks
  -- the screen until it is answered.
  vim.schedule(function()
    if not s.permissions[update.requestId] then return end -- answered already (a replay)
    if not M.window(id) then M.show(id) end
    pcall(vim.cmd, "redraw")
    vim.ui.select(update.options, {
      prompt = "goose wants to run: " .. (update.toolCall.title or "a tool"),
      format_item = function(o) return o.label end, -- worded by goose-ls
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
  return allowed .. " (" .. (u.label or u.optionId or "?") .. ")" .. by
end

--- A turn started (an event carries its messageId): it leaves the queue. A waiting one
--- whose events come while another turn runs was sent into that turn (Send now).
local function started(id, message_id)
  local s = session(id)
  if not message_id or s.seen[message_id] then return end
  s.seen[message_id] = "started"
  if s.running and s.running ~= message_id and s.seen[s.running] == "started" then
    s.joined[message_id] = true
  else
    s.running = message_id
  end
  for position, queued in ipairs(s.queue) do
    if queued.id == message_id then
      table.remove(s.queue, position)
      render_queue(id)
      break
    end
  end
  goose().changed()
end

--- Whether events came before this one that were not shown: history goose-ls sent before
--- the buffer existed (a chat loaded again: what the agent kept beyond goose-ls's journal
--- comes before goose/loadSession answers, after the journaled history's indices). This
--- one is dropped, and all that followed the last shown asked for again, in order.
local function after_gap(id, index)
  local s = session(id)
  if index <= s.last_index + 1 then return false end
  if not s.catching_up then
    s.catching_up = true
    local function done() s.catching_up = false end
    goose().request("goose/replay", { sessionId = id, afterIndex = s.last_index }, done, done)
  end
  return true
end

function M.on_update(params)
  local s = session(params.sessionId)
  if params.index <= s.last_index then return end -- already shown (a replay)
  if after_gap(params.sessionId, params.index) then return end
  s.last_index = params.index
  local id = params.sessionId
  if not params.replay then started(id, params.messageId) end
  local u = params.update
  local kind = u.sessionUpdate
  if kind == "agent_message_chunk" then
    block(id, "agent", "## goose\n\n")
    append(id, text_of(u.content))
  elseif kind == "user_message_chunk" then
    block(id, "user", "## You\n\n")
    append(id, text_of(u.content, true) .. "\n")
  elseif kind == "agent_thought_chunk" then
    block(id, "thought", "> 💭 ")
    append(id, (text_of(u.content):gsub("\n", "\n> ")))
  elseif kind == "tool_call" or kind == "tool_call_update" then
    M.tool(id, u)
  elseif kind == "permission_request" then
    s.kind = "permission"
    s.permissions[u.requestId] = u
    local text = "\n\n🔐 permission: " .. (u.toolCall.title or "a tool")
    if u.warning then text = text .. "\n\n⚠ " .. u.warning end
    for _, item in ipairs(diffs_of(s, u.toolCall)) do -- what an edit will do, before asking
      text = text .. diff_block(item)
    end
    append(id, text)
    goose().changed()
    ask_permission(id, u)
  elseif kind == "permission_resolved" then
    s.kind = "permission"
    append(id, "\n\n🔐 " .. verdict(s, u))
    s.permissions[u.requestId] = nil
    goose().changed()
  elseif kind == "elicitation_request" or kind == "elicitation_resolved" then
    s.kind = "question"
    append(id, "\n\n" .. require("goose_ls.elicitation").on_update(id, u, params.replay))
    goose().changed()
  elseif kind == "note" then
    s.kind = "note"
    append(id, "\n\n> " .. u.text)
  elseif kind == "usage_update" then
    s.usage = u
    goose().changed()
  elseif kind == "available_commands_update" then
    s.commands = u.availableCommands or {}
  elseif kind == "session_info_update" and type(u.title) == "string" then
    M.retitle(id, u.title)
  elseif require("goose_ls.plans").kinds[kind] then
    require("goose_ls.plans").on_update(id, u)
  end
end

--- The chat's buffer is named after the chat's title (the agent's, or a rename).
function M.retitle(id, title)
  local buf, name = buffer(id), "goose://" .. vim.trim((title:gsub("%s+", " ")))
  if name ~= "goose://" and not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. " (" .. id .. ")") -- another chat has it
  end
end

--- "🔧 title · `name` — status": the tool's own name when it says more than the title.
local function tool_line(tool)
  local name = tool.name and tool.name ~= tool.title and (" · `" .. tool.name .. "`") or ""
  return "🔧 " .. tool.title .. name .. " — " .. tool.status
end

--- Tool calls below ``row`` moved ``delta`` lines (the text above them changed).
function M.shifted(id, row, delta)
  for _, tool in pairs(session(id).tools) do
    if tool.row > row then tool.row = tool.row + delta end
  end
end

--- A tool call is one header line, changed in place as its status changes, with its
--- output indented under it. Rows are tracked by hand: the transcript only grows at its
--- end, except for output lines inserted under a header.
function M.tool(id, u)
  local s = session(id)
  local buf = buffer(id)
  local tool = s.tools[u.toolCallId]
  if not tool then
    tool = { title = u.title or u.toolCallId, status = u.status or "pending", lines = 0 }
    s.tools[u.toolCallId] = tool
    s.kind = "tool"
    append(id, "\n\n" .. tool_line(tool) .. "\n")
    tool.row = vim.api.nvim_buf_line_count(buf) - 2 - s.tail
  end
  tool.title = u.title or tool.title
  tool.status = u.status or tool.status
  tool.name = type(u.name) == "string" and u.name or tool.name
  tool.content = u.content or tool.content
  local output = {}
  for _, item in ipairs(u.content or {}) do
    if item.type == "content" and item.content.type == "text" then
      for _, line in ipairs(vim.split(item.content.text, "\n", { plain = true })) do
        table.insert(output, "    " .. line)
      end
    end
  end
  write(buf, function()
    vim.api.nvim_buf_set_lines(buf, tool.row, tool.row + 1, false, { tool_line(tool) })
    if #output > 0 then -- content replaces: swap the old output lines for the new ones
      local first = tool.row + 1
      vim.api.nvim_buf_set_lines(buf, first, first + tool.lines, false, output)
    end
  end)
  if #output > 0 then
    M.shifted(id, tool.row, #output - tool.lines)
    tool.lines = #output
  end
end

function M.on_turn_end(params)
  local s = session(params.sessionId)
  if params.index <= s.last_index then return end
  if after_gap(params.sessionId, params.index) then return end
  s.last_index = params.index
  local id = params.sessionId
  s.seen[params.messageId] = "ended"
  for position, queued in ipairs(s.queue) do -- cancelled while it waited
    if queued.id == params.messageId then
      table.remove(s.queue, position)
      render_queue(id)
      break
    end
  end
  if s.running == params.messageId then s.running = nil end
  local outcome = params.error and ("⚠ " .. params.error) or params.stopReason
  if s.joined[params.messageId] then -- it ended with the turn it joined, said just above
    s.joined[params.messageId] = nil
  else
    s.kind = nil
    if outcome ~= "end_turn" then append(id, "\n\n_" .. outcome .. "_") end
    append(id, "\n")
  end
  goose().changed()
  vim.api.nvim_exec_autocmds("User", {
    pattern = "GooseTurnEnd",
    modeline = false,
    data = params,
  })
end

--- goose-ls accepted a prompt sent from here: running now, or waiting behind others.
function M.accepted(id, message_id, text, queued)
  local s = session(id)
  if s.seen[message_id] then return end -- its events came first
  if queued then
    table.insert(s.queue, { id = message_id, text = text })
    render_queue(id)
  else
    s.running = message_id
  end
  goose().changed()
end

--- Take the truth from a goose/status session summary: is a turn running, what waits.
function M.sync(summary)
  local s = M.sessions[summary.sessionId]
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
  render_queue(summary.sessionId)
end

--- "waiting for you" (a permission or a question), "running", "idle", followed by
--- ", queued N" when prompts wait.
function M.state(id)
  local s = M.sessions[id]
  if not s then return "idle" end
  local asking = next(s.permissions) or require("goose_ls.elicitation").waiting(id)
  local state = asking and "waiting for you" or (s.running and "running" or "idle")
  if #s.queue > 0 then state = state .. ", queued " .. #s.queue end
  return state
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

return M
