-- The agent's questions (elicitation_request): a form asked field by field with
-- vim.ui.select (choices, yes/no) and vim.ui.input (text, numbers), or a page to open.
-- Decline and cancel are always offered, dismissing any prompt cancels, and only what the
-- user gave is sent: never a made-up value. A question answered or closed elsewhere
-- (elicitation_resolved) is dropped; an answer given to it after that is not sent.
local M = {
  pending = {}, -- requestId -> { session = id, update = the elicitation_request }
  answered = {}, -- requestId -> true when answered from this Neovim
}

local inert = require("goose_ls.inert")

local function goose() return require("goose_ls") end

--- The form's fields in the order they are asked: the required ones in the order of
--- `required`, then the others by name (Neovim reads a JSON object without its order).
local function fields(schema)
  local properties = schema.properties or {}
  local order, required = {}, {}
  for _, name in ipairs(schema.required or {}) do
    if properties[name] and not required[name] then
      required[name] = true
      table.insert(order, name)
    end
  end
  local rest = {}
  for name in pairs(properties) do
    if not required[name] then table.insert(rest, name) end
  end
  table.sort(rest)
  return vim.list_extend(order, rest), required
end

--- A property's choices as { value, label }: its enum or titled oneOf (its items' for a
--- list), yes and no for a boolean; nil for a value typed in.
local function choices(prop)
  if prop.type == "boolean" then
    return { { value = true, label = "yes" }, { value = false, label = "no" } }
  end
  local source = prop.type == "array" and (prop.items or {}) or prop
  local found = {}
  if type(source.enum) == "table" then
    for i, value in ipairs(source.enum) do
      local names = source.enumNames
      table.insert(found, { value = value, label = inert.line(names and names[i] or tostring(value)) })
    end
    return found
  end
  local titled = source.oneOf or source.anyOf
  if type(titled) ~= "table" then return nil end
  for _, item in ipairs(titled) do
    table.insert(found, { value = item.const, label = inert.line(item.title or tostring(item.const)) })
  end
  return found
end

--- Whether this plugin can ask for the property: a choice, a list of choices, text or a number.
local function askable(prop)
  if prop.type == "string" or prop.type == "number" or prop.type == "integer" then return true end
  return (prop.type == "boolean" or prop.type == "array") and choices(prop) ~= nil
end

--- "Workers (how many to start), optional"
local function heading(name, prop, required)
  local text = inert.line(prop.title or name)
  if prop.description then text = text .. " (" .. inert.line(prop.description) .. ")" end
  return required and text or (text .. ", optional")
end

--- The typed text as the property's value, or nil and what is wrong with it.
local function parse(prop, text)
  if prop.type == "string" then return text end
  local number = tonumber(text)
  if prop.type == "integer" then
    return text:match("^%s*[-+]?%d+%s*$") and number or nil, "an integer"
  end
  if not number or number ~= number or number == math.huge or number == -math.huge then
    return nil, "a number"
  end
  return number
end

--- Ask one property; ``done(outcome, value)``: "value", "skip" (an optional field left
--- empty) or "cancel" (a prompt dismissed).
local function ask_field(name, prop, required, done)
  local title = heading(name, prop, required)
  local options = choices(prop)
  if prop.type == "array" then
    local picked = {}
    local function more()
      local items = { { done = true, label = #picked > 0 and "done" or (required and "none" or "skip") } }
      for _, option in ipairs(options) do
        if not vim.tbl_contains(picked, option.value) then table.insert(items, option) end
      end
      local shown = #picked > 0 and (" [" .. table.concat(vim.tbl_map(tostring, picked), ", ") .. "]") or ""
      local opts = { prompt = title .. shown, format_item = function(i) return i.label end }
      vim.ui.select(items, opts, function(item)
        if not item then return done("cancel") end
        if not item.done then
          table.insert(picked, item.value)
          return vim.schedule(more)
        end
        if #picked == 0 and not required then return done("skip") end
        done("value", picked)
      end)
    end
    return more()
  end
  if options then
    local items = vim.deepcopy(options)
    for _, item in ipairs(items) do
      if item.value == prop.default then item.label = item.label .. " (default)" end
    end
    if not required then table.insert(items, { skip = true, label = "(leave it out)" }) end
    local opts = { prompt = title, format_item = function(i) return i.label end }
    return vim.ui.select(items, opts, function(item)
      if not item then return done("cancel") end
      if item.skip then return done("skip") end
      done("value", item.value)
    end)
  end
  local function input(problem)
    local prompt = title .. (problem and (" — " .. problem) or "") .. ": "
    local default = prop.default ~= nil and tostring(prop.default) or nil
    vim.ui.input({ prompt = prompt, default = default }, function(text)
      if text == nil then return done("cancel") end
      if text == "" then
        if required then return vim.schedule(function() input("required") end) end
        return done("skip")
      end
      local value, wanted = parse(prop, text)
      if value == nil then return vim.schedule(function() input("must be " .. wanted) end) end
      done("value", value)
    end)
  end
  input(nil)
end

--- Send the answer, unless the question was closed meanwhile. A refused form (the error is
--- shown) is asked again; a question goose-ls no longer has is dropped.
local function send(session_id, u, action, content)
  if not M.pending[u.requestId] then
    local closed = "goose: that question was closed meanwhile; your answer was not sent"
    return vim.notify(closed, vim.log.levels.WARN)
  end
  M.answered[u.requestId] = true
  local params = { sessionId = session_id, requestId = u.requestId, action = action }
  if action == "accept" and u.mode ~= "url" then params.content = content end
  goose().request("goose/elicitation", params, nil, function(err)
    M.answered[u.requestId] = nil
    if tostring(err.message):find("requestId:", 1, true) then
      M.pending[u.requestId] = nil
    elseif action == "accept" and M.pending[u.requestId] then
      vim.schedule(function() M.ask(session_id, u.requestId) end)
    end
  end)
end

--- A URL question: open it (only a web page) and accept, else decline or cancel.
local function ask_url(session_id, u)
  local url = u.url or ""
  local shown = inert.line(url)
  local web = url:match("^https?://[^%s]+$") ~= nil
  local items = web and { "Open " .. shown, "Decline", "Cancel" } or { "Decline", "Cancel" }
  local prompt = goose().agent_name() .. " asks: " .. inert.line(u.message)
    .. (web and "" or (" (" .. shown .. ": not a web page)"))
  vim.ui.select(items, { prompt = prompt }, function(choice)
    if choice == nil or choice == "Cancel" then return send(session_id, u, "cancel") end
    if choice == "Decline" then return send(session_id, u, "decline") end
    local _, err = vim.ui.open(url)
    if err then vim.notify("goose: could not open " .. shown .. ": " .. err, vim.log.levels.ERROR) end
    send(session_id, u, err and "decline" or "accept")
  end)
end

--- Ask the question ``request_id`` of the session, if it still waits.
function M.ask(session_id, request_id)
  local entry = M.pending[request_id]
  if not entry then return end
  local u = entry.update
  if u.mode == "url" then return ask_url(session_id, u) end
  local schema = u.requestedSchema or {}
  local names, required = fields(schema)
  local properties = schema.properties or {}
  local missing = {}
  for _, name in ipairs(names) do
    if required[name] and not askable(properties[name]) then table.insert(missing, name) end
  end
  local items = #missing == 0 and { "Answer", "Decline", "Cancel" } or { "Decline", "Cancel" }
  local prompt = goose().agent_name() .. " asks: " .. inert.line(u.message)
  if #missing > 0 then
    prompt = prompt .. " (this form cannot be filled in here: " .. table.concat(missing, ", ") .. ")"
  end
  vim.ui.select(items, { prompt = prompt }, function(choice)
    if choice == nil or choice == "Cancel" then return send(session_id, u, "cancel") end
    if choice == "Decline" then return send(session_id, u, "decline") end
    local content = vim.empty_dict()
    local function step(i)
      local name = names[i]
      if not name then return send(session_id, u, "accept", content) end
      if not askable(properties[name]) then return step(i + 1) end -- optional: left out
      ask_field(name, properties[name], required[name], function(outcome, value)
        if outcome == "cancel" then return send(session_id, u, "cancel") end
        if outcome == "value" then content[name] = value end
        vim.schedule(function() step(i + 1) end)
      end)
    end
    vim.schedule(function() step(1) end)
  end)
end

local OUTCOMES = { accept = "answered", decline = "declined", cancel = "cancelled" }

--- An elicitation update of the session: the line the chat shows for it. A new question
--- is asked once the chat has drawn it (not one of history, ``replay``).
function M.on_update(session_id, u, replay)
  if u.sessionUpdate == "elicitation_resolved" then
    M.pending[u.requestId] = nil
    local by = M.answered[u.requestId] and " by you" or ""
    M.answered[u.requestId] = nil
    return "❓ " .. (OUTCOMES[u.action] or u.action) .. by
  end
  if not replay then
    M.pending[u.requestId] = { session = session_id, update = u }
    vim.schedule(function() M.ask(session_id, u.requestId) end)
  end
  return "❓ " .. inert.line(u.message) .. (u.mode == "url" and ("\n\n" .. inert.line(u.url)) or "")
end

--- Whether a question of the session waits for the user.
function M.waiting(session_id)
  for _, entry in pairs(M.pending) do
    if entry.session == session_id then return true end
  end
  return false
end

return M
