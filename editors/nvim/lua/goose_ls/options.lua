-- The config option picker: the chat's options grouped by category, then the option's values.
local M = {}

--- The words for the categories ACP names; other categories show as they are.
M.categories = { mode = "Mode", model = "Model", model_config = "Model settings", thought_level = "Thinking" }

--- A select option's values, those in value groups too; a boolean option's on and off.
function M.values(option)
  if option.type == "boolean" then return { { value = true, name = "on" }, { value = false, name = "off" } } end
  local found = {}
  for _, entry in ipairs(option.options or {}) do
    for _, value in ipairs(entry.options or { entry }) do
      if value.value ~= nil then table.insert(found, value) end
    end
  end
  return found
end

--- The options, those of one category together, groups in the agent's order (its priority).
function M.grouped(options)
  local first, order = {}, {}
  for i, option in ipairs(options) do
    local key = option.category or ""
    first[key] = first[key] or i
    order[option] = i
  end
  local sorted = vim.list_slice(options)
  table.sort(sorted, function(a, b)
    local ga, gb = first[a.category or ""], first[b.category or ""]
    if ga ~= gb then return ga < gb end
    return order[a] < order[b]
  end)
  return sorted
end

local function value_name(option, value)
  for _, v in ipairs(M.values(option)) do
    if v.value == value then return v.name or tostring(v.value) end
  end
  return tostring(value)
end

--- One line of the option picker: ``Model · Model: claude-sonnet-4``.
function M.format_option(option)
  local group = option.category and (M.categories[option.category] or option.category) or "Other"
  return string.format("%s · %s: %s", group, option.name or option.id, value_name(option, option.currentValue))
end

--- Pick an option of session ``session_id`` then its new value, and ``set(config_id, value)``.
function M.pick(session_id, request, set)
  request("goose/status", {}, function(status)
    local options = {}
    for _, s in ipairs(status.sessions or {}) do
      if s.sessionId == session_id then options = s.configOptions or {} end
    end
    if #options == 0 then return vim.notify("goose: the agent offers no options", vim.log.levels.WARN) end
    vim.ui.select(M.grouped(options), {
      prompt = "goose option",
      kind = "goose_option",
      format_item = M.format_option,
    }, function(option)
      if not option then return end
      vim.ui.select(M.values(option), {
        prompt = option.name or option.id,
        kind = "goose_option_value",
        format_item = function(v)
          return (v.value == option.currentValue and "• " or "  ") .. (v.name or tostring(v.value))
        end,
      }, function(v)
        if v then set(option.id, v.value) end
      end)
    end)
  end)
end

return M
