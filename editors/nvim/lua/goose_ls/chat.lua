-- Chat buffers fed by goose/* notifications: append-only, deduplicated by index.
local M = { sessions = {}, current = nil }

local function session(id)
  local s = M.sessions[id]
  if not s then
    s = { last_index = 0, buf = nil, kind = nil, tools = {} }
    M.sessions[id] = s
  end
  return s
end

local function buffer(id)
  local s = session(id)
  if s.buf and vim.api.nvim_buf_is_valid(s.buf) then return s.buf end
  s.buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(s.buf, "goose://" .. id)
  vim.bo[s.buf].filetype = "markdown"
  vim.bo[s.buf].bufhidden = "hide"
  vim.api.nvim_buf_set_lines(s.buf, 0, -1, false, { "# goose chat · " .. id, "" })
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = s.buf,
    callback = function() M.catch_up(id) end,
  })
  return s.buf
end

--- Append text at the end of the buffer (the last line continues).
local function append(id, text)
  local buf = buffer(id)
  local last = vim.api.nvim_buf_line_count(buf) - 1
  local tail = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
  vim.api.nvim_buf_set_text(buf, last, #tail, last, #tail, vim.split(text, "\n", { plain = true }))
end

local function block(id, kind, heading)
  local s = session(id)
  if s.kind ~= kind then
    append(id, "\n\n" .. heading)
    s.kind = kind
  end
end

local function text_of(content)
  if content.type == "text" then return content.text end
  if content.type == "resource_link" then return "[" .. (content.name or content.uri) .. "]" end
  if content.type == "resource" then return "📎 " .. (content.resource.uri or "") end
  return "[" .. tostring(content.type) .. "]"
end

local function ask_permission(update)
  vim.ui.select(update.options, {
    prompt = "goose wants to run: " .. (update.toolCall.title or "a tool"),
    format_item = function(o) return o.label end, -- worded by goose-ls
  }, function(choice)
    require("goose_ls").request("goose/permission", {
      requestId = update.requestId,
      optionId = choice and choice.optionId or nil,
    })
  end)
end

function M.on_update(params)
  local s = session(params.sessionId)
  if params.index <= s.last_index then return end -- already shown (a replay)
  s.last_index = params.index
  local u = params.update
  local kind = u.sessionUpdate
  if kind == "agent_message_chunk" then
    block(params.sessionId, "agent", "## goose\n\n")
    append(params.sessionId, text_of(u.content))
  elseif kind == "user_message_chunk" then
    block(params.sessionId, "user", "## You\n\n")
    append(params.sessionId, text_of(u.content) .. "\n")
  elseif kind == "agent_thought_chunk" then
    block(params.sessionId, "thought", "> 💭 ")
    append(params.sessionId, (text_of(u.content):gsub("\n", "\n> ")))
  elseif kind == "tool_call" or kind == "tool_call_update" then
    M.tool(params.sessionId, u)
  elseif kind == "permission_request" then
    s.kind = "permission"
    append(params.sessionId, "\n\n🔐 permission: " .. (u.toolCall.title or "a tool"))
    for _, item in ipairs(u.toolCall.content or {}) do
      if item.type == "diff" then -- show what an edit will do before it is allowed
        local old = vim.split(item.oldText or "", "\n", { plain = true })
        local new = vim.split(item.newText or "", "\n", { plain = true })
        local diff = vim.diff(table.concat(old, "\n") .. "\n", table.concat(new, "\n") .. "\n")
        append(params.sessionId, "\n```diff\n--- " .. item.path .. "\n" .. diff .. "```")
      end
    end
    ask_permission(u)
  elseif kind == "note" then
    s.kind = "note"
    append(params.sessionId, "\n\n> " .. u.text)
  end
end

local function tool_line(tool)
  return "🔧 " .. tool.title .. " — " .. tool.status
end

--- A tool call is one header line, changed in place as its status changes, with its
--- output indented under it (a fold, see |goose_ls-chat|). Rows are tracked by hand: the
--- buffer only grows at its end, except for output lines inserted under a header.
function M.tool(id, u)
  local s = session(id)
  local buf = buffer(id)
  local tool = s.tools[u.toolCallId]
  if not tool then
    tool = { title = u.title or u.toolCallId, status = u.status or "pending", lines = 0 }
    s.tools[u.toolCallId] = tool
    s.kind = "tool"
    append(id, "\n\n" .. tool_line(tool) .. "\n")
    tool.row = vim.api.nvim_buf_line_count(buf) - 2
  end
  tool.title = u.title or tool.title
  tool.status = u.status or tool.status
  vim.api.nvim_buf_set_lines(buf, tool.row, tool.row + 1, false, { tool_line(tool) })
  local output = {}
  for _, item in ipairs(u.content or {}) do
    if item.type == "content" and item.content.type == "text" then
      for _, line in ipairs(vim.split(item.content.text, "\n", { plain = true })) do
        table.insert(output, "    " .. line)
      end
    end
  end
  if #output > 0 then -- content replaces: swap the old output lines for the new ones
    local first = tool.row + 1
    vim.api.nvim_buf_set_lines(buf, first, first + tool.lines, false, output)
    local shift = #output - tool.lines
    tool.lines = #output
    for _, other in pairs(s.tools) do
      if other ~= tool and other.row > tool.row then other.row = other.row + shift end
    end
  end
end

--- Fold each tool call's output under its header line.
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  if line:match("^🔧 ") then return ">1" end
  if line:match("^    ") then return "1" end
  return "0"
end

function M.on_turn_end(params)
  local s = session(params.sessionId)
  if params.index <= s.last_index then return end
  s.last_index = params.index
  s.kind = nil
  local outcome = params.error and ("⚠ " .. params.error) or params.stopReason
  if outcome ~= "end_turn" then append(params.sessionId, "\n\n_" .. outcome .. "_") end
  append(params.sessionId, "\n")
  vim.api.nvim_exec_autocmds("User", {
    pattern = "GooseTurnEnd",
    modeline = false,
    data = params,
  })
end

--- Ask goose-ls for whatever this session missed while its buffer was hidden.
function M.catch_up(id)
  require("goose_ls").request("goose/replay", { sessionId = id, afterIndex = session(id).last_index })
end

function M.open(id)
  M.current = id
  buffer(id)
end

function M.show(id)
  local buf = buffer(id)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then return end
  end
  local split = require("goose_ls").config.chat_split
  vim.cmd(split)
  vim.api.nvim_win_set_buf(0, buf)
  vim.wo.foldmethod = "expr"
  vim.wo.foldexpr = "v:lua.require'goose_ls.chat'.foldexpr(v:lnum)"
  vim.wo.foldlevel = 0
  vim.cmd("wincmd p")
end

return M
