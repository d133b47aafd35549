-- The agent's tool calls in a chat: one header line each ("🔧 title · `name` — status"),
-- changed in place as its status changes, with the tool's output indented under it. Rows
-- are tracked by hand: the transcript only grows at its end, except for what is drawn
-- again above it (a tool's output, a plan), which moves the tool calls below.
local M = {}

local inert = require("goose_ls.inert")

local function chat() return require("goose_ls.chat") end

--- "🔧 title · `name` — status": the tool's own name when it says more than the title.
local function tool_line(tool)
  local name = tool.name and tool.name ~= tool.title and (" · `" .. tool.name .. "`") or ""
  return "🔧 " .. inert.line(tool.title) .. inert.line(name) .. " — " .. inert.line(tool.status)
end

--- Tool calls (and subagents' headings) below ``row`` moved ``delta`` lines (the text
--- above them changed).
function M.shifted(id, row, delta)
  for _, tool in pairs(chat().session(id).tools) do
    if tool.row > row then tool.row = tool.row + delta end
  end
  require("goose_ls.subagents").shifted(id, row, delta)
end

--- A tool_call or tool_call_update: a new header at the end, or the known one redrawn.
function M.on_update(id, u)
  local c = chat()
  local s = c.session(id)
  local buf = c.buffer(id)
  local tool = s.tools[u.toolCallId]
  if not tool then
    tool = { title = u.title or u.toolCallId, status = u.status or "pending", lines = 0 }
    s.tools[u.toolCallId] = tool
    c.append(id, tool_line(tool) .. "\n") -- its block begun by the transcript
    tool.row = vim.api.nvim_buf_line_count(buf) - 2 - s.tail
  end
  tool.title = u.title or tool.title
  tool.status = u.status or tool.status
  tool.name = type(u.name) == "string" and u.name or tool.name
  tool.content = u.content or tool.content
  local output = {}
  for _, item in ipairs(u.content or {}) do
    if item.type == "content" and item.content.type == "text" then
      for _, line in ipairs(vim.split(inert.block(item.content.text), "\n", { plain = true })) do
        table.insert(output, "    " .. line)
      end
    elseif item.type == "content" and item.content.type == "image" then
      local shown = require("goose_ls.transcript").image_text(item.content)
      for _, line in ipairs(vim.split(shown, "\n", { plain = true })) do
        table.insert(output, "    " .. line)
      end
    end
  end
  c.write(buf, function()
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

--- What a tool call really changed on disk (goose-ls's disk_changes): a line naming the
--- files, under the tool call's title, then each diff indented (a code block nothing in
--- it can end).
function M.disk_changes(id, u)
  local tool = u.toolCallId and chat().session(id).tools[u.toolCallId]
  local by = tool and (" by " .. inert.line(tool.title)) or " during the turn"
  local named, diffs = {}, {}
  for _, file in ipairs(u.files or {}) do
    local name = vim.fn.fnamemodify(tostring(file.path or ""), ":.")
    local counts = (file.diff or "") ~= "" and string.format(" +%d -%d", file.added or 0, file.removed or 0)
      or " (not shown)"
    table.insert(named, inert.line(name) .. " " .. inert.line(file.state or "changed") .. counts)
    for _, line in ipairs(vim.split(inert.block(file.diff or ""), "\n", { plain = true, trimempty = true })) do
      table.insert(diffs, "    " .. line)
    end
  end
  local text = "💾 Changed on disk" .. by .. ": " .. table.concat(named, ", ") .. "\n"
  if #diffs > 0 then text = text .. "\n" .. table.concat(diffs, "\n") .. "\n" end
  return text
end

return M
