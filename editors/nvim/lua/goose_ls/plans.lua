-- Blocks of a chat that are drawn again where they are as they change: the agent's plan
-- (one checklist), its plans by id (plan_update, plan_removed) and its compactions of the
-- conversation (one line each, the summary it kept under it). Worded as goose-ls's own
-- transcript words them. Each block is held by two extmarks, so text inserted above it
-- (a tool call's output) moves it along.
local M = {}

local inert = require("goose_ls.inert")
local tools = require("goose_ls.tools")

local ns = vim.api.nvim_create_namespace("goose_ls_plans")

--- The goose/update kinds drawn here.
M.kinds = {
  plan = true,
  plan_update = true,
  plan_removed = true,
  compaction_update = true,
  compaction_summary_chunk = true,
}

local function chat() return require("goose_ls.chat") end

--- The end of the transcript (above the queue): row and column, 0-based.
local function transcript_end(buf, s)
  local row = vim.api.nvim_buf_line_count(buf) - 1 - s.tail
  return row, #(vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or "")
end

--- Draw block ``key`` of chat ``id`` as ``text``: at the end of the chat the first time,
--- else in place of its earlier text, wherever it is, what follows it kept.
local function draw(id, key, text)
  local c = chat()
  local s = c.session(id)
  local buf = c.buffer(id)
  s.drawn = s.drawn or {}
  local marks = s.drawn[key]
  local first = marks and vim.api.nvim_buf_get_extmark_by_id(buf, ns, marks[1], {})
  local last = marks and vim.api.nvim_buf_get_extmark_by_id(buf, ns, marks[2], {})
  local lines = vim.split(text, "\n", { plain = true })
  if not (first and first[1] and last and last[1]) then -- new (or its buffer was wiped)
    s.kind = "block"
    local row, col = transcript_end(buf, s)
    local above = vim.api.nvim_buf_get_lines(buf, math.max(row - 1, 0), row + 1, false)
    c.append(id, col > 0 and "\n\n" or (above[1] == "" and "" or "\n")) -- one blank line
    row, col = transcript_end(buf, s)
    local start = vim.api.nvim_buf_set_extmark(buf, ns, row, col, { right_gravity = false })
    c.append(id, text)
    row, col = transcript_end(buf, s)
    local stop = vim.api.nvim_buf_set_extmark(buf, ns, row, col, { right_gravity = false })
    s.drawn[key] = { start, stop }
    return
  end
  c.write(buf, function()
    vim.api.nvim_buf_set_text(buf, first[1], first[2], last[1], last[2], lines)
  end)
  local row = first[1] + #lines - 1
  local col = (#lines == 1 and first[2] or 0) + #lines[#lines]
  vim.api.nvim_buf_set_extmark(buf, ns, row, col, { id = marks[2], right_gravity = false })
  tools.shifted(id, first[1], row - last[1]) -- tool calls below keep their rows
end

--- A checklist under ``head`` (``**Plan**``): entries that are not objects are skipped.
local function checklist(entries, head)
  local lines = { head or "**Plan**" }
  for _, entry in ipairs(type(entries) == "table" and entries or {}) do
    if type(entry) == "table" then
      local done = entry.status == "completed" and "x" or " "
      table.insert(lines, string.format("- [%s] %s", done, inert.line(entry.content)))
    end
  end
  return table.concat(lines, "\n")
end

--- The file a plan names (a path or a file URI), on one line: relative to the project
--- when inside it, never a link (the agent chose it).
local function file_of(location)
  return "`" .. inert.line(chat().relative(tostring(location or ""))) .. "`"
end

--- One plan of several: a checklist, markdown (and the file it names), or a file; a plan
--- of a kind goose-ls does not know by what it carries of those.
local function document(plan)
  if plan.type == "items" then return checklist(plan.entries) end
  if plan.type == "file" then return "**Plan**: " .. file_of(plan.uri) end
  local head = "**Plan**"
  if plan.type ~= "markdown" then
    head = head .. " of a kind goose-ls does not know: `" .. inert.line(plan.type) .. "`"
  end
  local where = plan.path or plan.uri
  if type(where) == "string" then head = head .. " · " .. file_of(where) end
  if plan.type ~= "markdown" and type(plan.entries) == "table" then
    return checklist(plan.entries, head)
  end
  local content = type(plan.content) == "string" and vim.trim(plan.content) or ""
  if content == "" then return head end
  return head .. "\n\n" .. inert.lines(inert.block(content), {})
end

local COMPACTION_WORDS = {
  in_progress = "🗜 Compacting the conversation…",
  completed = "🗜 The conversation was compacted.",
  cancelled = "🗜 Compacting the conversation was cancelled.",
}

local function text_of(blocks)
  local texts = {}
  for _, block in ipairs(type(blocks) == "table" and blocks or {}) do
    if type(block) == "table" and block.type == "text" then table.insert(texts, tostring(block.text)) end
  end
  return table.concat(texts)
end

--- Where a compaction stands, and the summary the agent kept (or streams) under it.
local function compaction(state)
  if state.status == "failed" then
    return "> ⚠ **Compacting the conversation failed:** " .. inert.line(state.error or "no reason given")
  end
  local status = tostring(state.status)
  local text = "_" .. (COMPACTION_WORDS[status] or ("🗜 Compaction: " .. inert.line(status))) .. "_"
  local summary = vim.trim(text_of(state.summary) ~= "" and text_of(state.summary) or state.streamed)
  summary = inert.lines(inert.block(summary), {}):gsub("\n", "\n> ")
  if summary ~= "" then text = text .. "\n\n> " .. summary end
  return text
end

function M.on_update(id, u)
  local kind = u.sessionUpdate
  if kind == "plan" then return draw(id, "plan", checklist(u.entries)) end
  if kind == "plan_update" and type(u.plan) == "table" then
    return draw(id, "plan:" .. tostring(u.plan.planId), document(u.plan))
  end
  if kind == "plan_removed" then return draw(id, "plan:" .. tostring(u.planId), "_Plan removed._") end
  if kind ~= "compaction_update" and kind ~= "compaction_summary_chunk" then return end
  local s = chat().session(id)
  s.compactions = s.compactions or {}
  local key = tostring(u.compactionId)
  local state = s.compactions[key] or { status = "in_progress", streamed = "" }
  if kind == "compaction_update" then
    state.status, state.error, state.summary = u.status, u.error, u.summary
  else
    state.streamed = state.streamed .. text_of({ u.content })
  end
  s.compactions[key] = state
  draw(id, "compaction:" .. key, compaction(state))
end

return M
