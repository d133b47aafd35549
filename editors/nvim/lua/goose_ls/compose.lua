-- The compose area: a small buffer under the chat where messages are written.
-- <CR> (normal mode) or <C-s> (insert and normal mode) sends it; <Up> on its first line and
-- <Down> on its last go through the messages sent before.
local M = { history = {} }
local REFUSED = vim.api.nvim_create_namespace("goose_refused")

local chat = require("goose_ls.chat")

--- The session's compose buffer, made on first use.
function M.buffer(id)
  local s = chat.session(id)
  if s.compose and vim.api.nvim_buf_is_valid(s.compose) then return s.compose end
  local buf = vim.api.nvim_create_buf(false, true)
  s.compose = buf
  vim.api.nvim_buf_set_name(buf, "goose-compose://" .. id)
  vim.b[buf].goose_compose = id
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].bufhidden = "hide"
  -- @ completes a workspace file (<C-x><C-o>; completion plugins that read omnifunc too).
  vim.bo[buf].omnifunc = "v:lua.require'goose_ls.compose'.complete"
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = "goose: " .. desc })
  end
  map("n", "<CR>", function() M.send(buf) end, "send the message")
  map({ "n", "i" }, "<C-s>", function() M.send(buf) end, "send the message")
  map("n", "<Up>", function() M.recall(buf, -1) end, "an earlier message")
  map("n", "<Down>", function() M.recall(buf, 1) end, "a later message")
  return buf
end

--- The agent's slash commands starting with ``base``, for a `/` at the start of a message.
local function slash_commands(base)
  local id = vim.b[vim.api.nvim_get_current_buf()].goose_compose
  local items = {}
  for _, command in ipairs(id and require("goose_ls.chat").session(id).commands or {}) do
    if vim.startswith(command.name, base) then
      table.insert(items, { word = command.name, abbr = "/" .. command.name, menu = command.description })
    end
  end
  return items
end

--- omnifunc: after an `@`, the workspace files goose-ls finds for what follows it (open
--- buffers first; goose-ls attaches each `@path` of the message when it is sent); after a
--- `/` that starts the message, the agent's slash commands.
function M.complete(findstart, base)
  local before = vim.api.nvim_get_current_line():sub(1, vim.fn.col(".") - 1)
  local slash = vim.fn.line(".") == 1 and before:match("^/[%w%-_]*$")
  if slash and findstart == 1 then return 1 end -- the 0-based column after the /
  if slash then return slash_commands(base) end
  if findstart == 1 then
    local at = before:find("@[%w%._~%+/%-]*$")
    if not at or (at > 1 and before:sub(at - 1, at - 1):match("[%w@/]")) then return -3 end
    return at -- the 0-based column after the @
  end
  local items = {}
  for _, word in ipairs({ "selection", "diagnostics" }) do
    if vim.startswith(word, base) and M.source then
      table.insert(items, { word = word, abbr = "@" .. word, menu = "[goose: " .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(M.source), ":t") .. "]" })
    end
  end
  local client = require("goose_ls").client()
  if not client then return items end
  local sync = vim.fn.has("nvim-0.11") == 1
      and function(...) return client:request_sync(...) end
    or client.request_sync
  local answer = sync("goose/findFiles", { query = base }, 2000, 0)
  local files = answer and answer.result and answer.result.files or {}
  for _, path in ipairs(files) do
    table.insert(items, { word = path, abbr = "@" .. path, menu = "[goose]" })
  end
  return items
end

--- What `@selection` and `@diagnostics` in ``text`` attach: the last visual selection in
--- the file the user came from, and that file's diagnostics (goose-ls attaches `@path`s).
function M.mentioned(text)
  local buf = M.source
  if not buf or not vim.api.nvim_buf_is_valid(buf) then return {} end
  local uri = vim.uri_from_bufnr(buf)
  local extra = {}
  local function named(word) return text:find("%f[%w@]@" .. word .. "%f[^%w]") ~= nil end
  if named("selection") then
    local first = vim.api.nvim_buf_get_mark(buf, "<")[1]
    local last = vim.api.nvim_buf_get_mark(buf, ">")[1]
    if first > 0 and last >= first then
      table.insert(extra, { type = "selection", uri = uri, startLine = first, endLine = last })
    end
  end
  if named("diagnostics") then
    local lines = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local severity = vim.diagnostic.severity[d.severity] or "?"
      table.insert(lines, string.format("%s:%d: %s: %s", vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":."), d.lnum + 1, severity:lower(), d.message))
    end
    if #lines > 0 then
      table.insert(extra, { type = "text", text = "Diagnostics:\n" .. table.concat(lines, "\n") })
    end
  end
  return extra
end

--- Send what the compose buffer holds to its session, and empty it; when goose-ls
--- refuses the message (an image it may not send), it comes back into the compose buffer.
function M.send(buf)
  local id = vim.b[buf].goose_compose
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.trim(text) == "" then return end
  table.insert(M.history, text)
  vim.b[buf].goose_recall = nil
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  vim.api.nvim_buf_clear_namespace(buf, REFUSED, 0, -1)
  require("goose_ls").send(id, text, M.mentioned(text), function(why)
    if not vim.api.nvim_buf_is_valid(buf) then return end
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    if #now == 1 and now[1] == "" then -- nothing written since: the message is back
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    else
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, lines)
    end
    -- Why, under the message (a message at the bottom is gone with the next mode
    -- message), until the next send; and how to drop an image it may be about.
    local images = #vim.tbl_filter(function(item) return item.type == "image" end,
      require("goose_ls").context)
    local said = "⚠ not sent: " .. require("goose_ls.inert").line(why)
    local win = vim.fn.bufwinid(buf)
    local width = math.max(20, (win ~= -1 and vim.api.nvim_win_get_width(win) or 80) - 1)
    local shown = {} -- virtual lines do not wrap: cut by the window's width
    for at = 1, vim.fn.strchars(said), width do
      table.insert(shown, { { vim.fn.strcharpart(said, at - 1, width), "ErrorMsg" } })
    end
    if images > 0 then
      table.insert(shown, { { ":Goose image clear drops the attached images", "WarningMsg" } })
    end
    local last = vim.api.nvim_buf_line_count(buf) - 1
    vim.api.nvim_buf_set_extmark(buf, REFUSED, last, 0, { virt_lines = shown })
  end)
end

--- Up/Down: move within a message of several lines; past its first or last line, go through
--- the messages sent before (and back to the draft).
function M.recall(buf, step)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local count = vim.api.nvim_buf_line_count(buf)
  if (step < 0 and row > 1) or (step > 0 and row < count) then
    return vim.cmd("normal! " .. (step < 0 and "k" or "j"))
  end
  local position = vim.b[buf].goose_recall or (#M.history + 1)
  local target = math.max(1, math.min(#M.history + 1, position + step))
  if target == position then return end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if position == #M.history + 1 then vim.b[buf].goose_draft = lines end
  local text = target <= #M.history and vim.split(M.history[target], "\n", { plain = true })
    or vim.b[buf].goose_draft
    or { "" }
  vim.b[buf].goose_recall = target <= #M.history and target or nil
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text)
  local last = step < 0 and 1 or #text
  vim.api.nvim_win_set_cursor(0, { last, 0 })
end

--- The compose window of the current tab, if any.
function M.window()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.b[vim.api.nvim_win_get_buf(win)].goose_compose then return win end
  end
end

--- The file the user came from: what `@selection` and `@diagnostics` name.
M.source = nil

--- Open the compose area under the session's chat, put the cursor in it, in insert mode.
function M.open(id)
  local from = vim.api.nvim_get_current_buf()
  if vim.bo[from].buftype == "" and vim.api.nvim_buf_get_name(from) ~= "" then M.source = from end
  chat.show(id)
  local buf = M.buffer(id)
  local win = M.window()
  if win then
    vim.api.nvim_win_set_buf(win, buf)
    vim.api.nvim_set_current_win(win)
  else
    local height = require("goose_ls").config.compose_height
    win = vim.api.nvim_open_win(buf, true, { split = "below", win = chat.window(id), height = height })
    vim.wo[win].winfixheight = true
  end
  vim.api.nvim_set_option_value("foldenable", false, { scope = "local", win = win })
  vim.cmd("startinsert!")
end

--- The chat window now shows another session: its compose window follows it.
function M.follow(id)
  local win = M.window()
  if win then vim.api.nvim_win_set_buf(win, M.buffer(id)) end
end

return M
