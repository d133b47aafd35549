-- The goose/update and goose/turnEnd notifications drawn into the chat buffer: messages
-- under a heading per speaker, the agent's thoughts and notes, and the blocks the other
-- modules draw (goose_ls.tools, permissions, elicitation, plans, subagents). A subagent's
-- updates (those with a subagentId) go into its own block, headed by goose_ls.subagents.
-- Append-only, and each event once: by its index a replay shows nothing twice, and an
-- event after a gap is held back while what was missed is asked for again.
local M = {}

local elicitation = require("goose_ls.elicitation")
local inert = require("goose_ls.inert")
local permissions = require("goose_ls.permissions")
local plans = require("goose_ls.plans")
local queue = require("goose_ls.queue")
local subagents = require("goose_ls.subagents")
local tools = require("goose_ls.tools")

local function chat() return require("goose_ls.chat") end
local function goose() return require("goose_ls") end

--- Blocks that chunks stream into: the next chunk of the same kind goes on where it is.
local STREAMED = { agent = true, user = true, thought = true, task = true }

--- Begin a block of ``kind`` at the end of the chat, a blank line after what is there,
--- ``lead`` first (unless one of the same streamed kind goes on). ``who`` says it: "user",
--- "agent", "sub:<id>" (a subagent), or nil for goose-ls's own lines (a verdict, a note). A
--- heading names the speaker when it changes ("You", the agent's own name, a subagent's
--- heading under the agent's), so the agent's heads its turn once, over its text,
--- thoughts, tool calls and cards alike.
local function block(id, kind, who, lead)
  local c = chat()
  local s = c.session(id)
  if who and who ~= s.speaker then
    local child = who:match("^sub:(.*)$")
    if child and (s.speaker == nil or s.speaker == "user") then
      s.speaker = "agent"
      c.separate(id)
      c.append(id, "## " .. goose().agent_name() .. "\n\n")
    end
    s.speaker = who
    c.separate(id)
    if child then
      subagents.begin(id, child)
    else
      c.append(id, "## " .. (who == "user" and "You" or goose().agent_name()) .. "\n\n")
    end
  elseif s.kind == kind and STREAMED[kind] then
    return
  else
    c.separate(id)
  end
  s.kind = kind
  -- The line agent text goes on: its beginning, until it is known not to imitate the
  -- plugin's own lines (none after a lead of the plugin's own, as "> 💭 ").
  s.line = { head = (not lead) and "" or nil, check = "", col = 0 }
  if lead then c.append(id, lead) end
end

--- The names the chat heads turns with, as drawn.
local function speakers() return { "You", goose().agent_name() } end

--- Append text the agent controls: inert, each new line led by ``lead`` (the plugin's),
--- and a line that begins as the plugin's own lines do led by a backslash. Chunks split
--- lines anywhere, so a line's beginning is judged as it is assembled, over chunks.
local function agent_text(id, text, lead)
  local c = chat()
  local s = c.session(id)
  lead = lead or ""
  for n, piece in ipairs(vim.split(inert.block(text), "\n", { plain = true })) do
    if n > 1 then
      c.append(id, "\n" .. lead)
      s.line = { head = "", check = lead, col = #lead }
    end
    c.append(id, piece)
    local line = s.line
    if line and line.head and #line.head < inert.decides then
      line.head = line.head .. piece
      if inert.imitates(line.check .. line.head, speakers()) then
        local buf = c.buffer(id)
        local row = vim.api.nvim_buf_line_count(buf) - 1 - s.tail
        c.write(buf, function()
          vim.api.nvim_buf_set_text(buf, row, line.col, row, line.col, { "\\" })
        end)
        line.head = nil
      end
    end
  end
end

--- "📎 app.py:8-12" for a URI with a "#L8-L12" fragment, "📎 app.py" without one.
local function attachment(uri)
  local first, last = uri:match("#L(%d+)%-L(%d+)$")
  first = first or uri:match("#L(%d+)$")
  local lines = first and (":" .. first .. (last and last ~= first and ("-" .. last) or "")) or ""
  return "📎 " .. chat().relative(uri) .. lines
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

local KINDS = { ["image/png"] = "PNG", ["image/jpeg"] = "JPEG", ["image/gif"] = "GIF", ["image/webp"] = "WebP" }

--- A size in bytes as a person reads it: 812 bytes, 14 KB, 2.4 MB.
local function size_text(size)
  if size < 1000 then return string.format("%d bytes", size) end
  if size < 1000000 then return string.format("%.0f KB", size / 1000) end
  return string.format("%.1f MB", size / 1000000)
end

--- An image of the chat as lines of the plugin's own: the file the user's was read from,
--- then the copy goose-ls kept of it (`gf` on its path opens it), or why it was not kept
--- (docs/protocol.md, "Images in updates").
function M.image_text(content)
  local lines = {}
  if type(content.source) == "string" then
    table.insert(lines, "📎 " .. inert.line(chat().relative(content.source)) .. " (image)")
  end
  if type(content.refused) == "string" or type(content.uri) ~= "string" then
    local why = type(content.refused) == "string" and content.refused or "goose-ls kept no copy of it"
    table.insert(lines, "⚠ image not shown: " .. inert.line(why))
  else
    local size = type(content.size) == "number" and (", " .. size_text(content.size)) or ""
    local file = content.uri:match("^file://") and vim.uri_to_fname(content.uri) or content.uri
    local kind = KINDS[content.mimeType] or "image"
    table.insert(lines, "🖼 " .. kind .. " image" .. size .. ": " .. inert.line(file))
  end
  return table.concat(lines, "\n")
end

local function text_of(content, user)
  if content.type == "image" then return M.image_text(content) end
  if content.type == "text" then
    if not user then return content.text end
    -- A resumed chat's user messages are replayed by the agent: inert, no line of ours.
    return user_text(inert.lines(inert.block(content.text), speakers()))
  end
  if content.type == "resource_link" then return attachment(content.uri or content.name or "") end
  if content.type == "resource" then return attachment(content.resource.uri or "") end
  return "[" .. tostring(content.type) .. "]"
end

--- Whether events came before this one that were not shown: history goose-ls sent before
--- the buffer existed (a chat loaded again: what the agent kept beyond goose-ls's journal
--- comes before goose/loadSession answers, after the journaled history's indices). This
--- one is held back, and all that followed the last shown asked for again, in order. When
--- that goose/replay answers, the journal has sent all it holds up to here: what is held
--- back is then drawn, in order, past indices the journal never had (a goose-ls killed
--- mid-chat leaves such a gap: indices skip).
local function after_gap(params, draw)
  local id, index = params.sessionId, params.index
  local s = chat().session(id)
  if index <= s.last_index + 1 then return false end
  s.held = s.held or {}
  s.held[index] = { params = params, draw = draw }
  if not s.catching_up then
    s.catching_up = true
    local function answered()
      s.catching_up = false
      local held = s.held
      s.held = nil
      local order = vim.tbl_keys(held)
      table.sort(order)
      for _, at in ipairs(order) do
        if at > s.last_index then
          s.last_index = at - 1 -- the replay had nothing between: the gap is the journal's
          held[at].draw(held[at].params)
        end
      end
    end
    local function failed()
      s.catching_up = false
      s.held = nil -- the next event after the gap asks again
    end
    goose().request("goose/replay", { sessionId = id, afterIndex = s.last_index }, answered, failed)
  end
  return true
end

--- Whether the event is the next one to show (then it counts as shown): not one shown
--- already (a replay), nor one after a gap (``draw`` draws it once the gap is settled).
local function next_event(params, draw)
  local s = chat().session(params.sessionId)
  if params.index <= s.last_index then return false end
  if after_gap(params, draw) then return false end
  s.last_index = params.index
  return true
end

function M.on_update(params)
  if not next_event(params, function(p) chat().on_update(p) end) then return end
  local id = params.sessionId
  local c = chat()
  local s = c.session(id)
  if not params.replay then queue.started(id, params.messageId) end
  local u = params.update
  local kind = u.sessionUpdate
  -- Who speaks: the agent, or one of its subagents (then in the subagent's block, its
  -- verdicts and notes too).
  local child = type(u.subagentId) == "string" and u.subagentId or nil
  local agent = child and ("sub:" .. child) or "agent"
  local ours = child and agent or nil
  if kind == "subagent_update" and child then
    if not subagents.on_update(id, u) then block(id, "subagent", agent) end
  elseif (kind == "agent_message_chunk" or kind == "agent_thought_chunk") and u.content.type == "image" then
    block(id, "image", agent)
    c.append(id, M.image_text(u.content) .. "\n")
  elseif kind == "agent_message_chunk" then
    block(id, "agent", agent)
    agent_text(id, text_of(u.content))
  elseif kind == "user_message_chunk" and child then -- the task its agent gave it
    block(id, "task", agent, "> 📋 Task: ")
    agent_text(id, text_of(u.content), "> ")
  elseif kind == "user_message_chunk" then
    block(id, "user", "user")
    c.append(id, text_of(u.content, true) .. "\n")
  elseif kind == "agent_thought_chunk" then
    block(id, "thought", agent, "> 💭 ")
    agent_text(id, text_of(u.content), "> ")
  elseif kind == "tool_call" or kind == "tool_call_update" then
    if not s.tools[u.toolCallId] then block(id, "tool", agent) end
    tools.on_update(id, u)
  elseif kind == "permission_request" or kind == "permission_resolved" then
    block(id, "permission", kind == "permission_request" and agent or ours)
    c.append(id, permissions.on_update(id, u))
    goose().changed()
  elseif kind == "elicitation_request" or kind == "elicitation_resolved" then
    block(id, "question", kind == "elicitation_request" and agent or ours)
    c.append(id, elicitation.on_update(id, u, params.replay))
    goose().changed()
  elseif kind == "note" then
    block(id, "note", ours, "> ")
    c.append(id, inert.line(u.text)) -- goose-ls's words, with the agent's in them: one line
  elseif kind == "disk_changes" then
    block(id, "disk", nil)
    c.append(id, tools.disk_changes(id, u))
  elseif kind == "usage_update" then
    s.usage = u
    goose().changed()
  elseif kind == "available_commands_update" then
    s.commands = u.availableCommands or {}
  elseif kind == "session_info_update" and type(u.title) == "string" then
    c.retitle(id, inert.line(u.title))
  elseif plans.kinds[kind] then
    plans.on_update(id, u)
  end
end

--- A turn ended: how, when it did not simply end, then a blank line; and the GooseTurnEnd
--- User autocommand. A message sent into another turn ended with it, said just above.
function M.on_turn_end(params)
  if not next_event(params, function(p) chat().on_turn_end(p) end) then return end
  local id = params.sessionId
  local c = chat()
  local s = c.session(id)
  if not queue.ended(id, params.messageId) then
    s.kind, s.speaker = nil, nil -- the next turn's agent is headed anew
    local outcome = inert.line(params.error and ("⚠ " .. params.error) or params.stopReason)
    if outcome ~= "end_turn" then c.append(id, "\n\n_" .. outcome .. "_") end
    c.append(id, "\n")
  end
  goose().changed()
  vim.api.nvim_exec_autocmds("User", {
    pattern = "GooseTurnEnd",
    modeline = false,
    data = params,
  })
end

return M
