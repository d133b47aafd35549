-- The session picker (:Goose sessions): goose-ls's chats, one line each, and the chosen one
-- shown in the chat window; a chat not open here is loaded first (goose/loadSession).
-- Chats of every workspace share goose-ls's data dir, and many start with the same words:
-- each line says where the chat ran and how long ago, this workspace's chats come first.
local M = {}

local chat = require("goose_ls.chat")

local function goose() return require("goose_ls") end

--- Seconds since the epoch of an ISO 8601 time as goose-ls and agents send it
--- ("2026-07-19T10:02:13+00:00", "…Z", "…T10:02:13.5-05:00"); nil when it is none.
function M.epoch(stamp)
  local y, mo, d, h, mi, s = (stamp or ""):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):?(%d*)")
  if not y then return nil end
  -- os.time reads a table as local time: the difference to UTC now makes it UTC.
  local local_time = os.time({
    year = tonumber(y), month = tonumber(mo), day = tonumber(d),
    hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) or 0, isdst = false,
  })
  local utc_offset = os.time() - os.time(os.date("!*t")) ---@diagnostic disable-line: param-type-mismatch
  local sign, oh, om = stamp:match("([+-])(%d%d):?(%d%d)$")
  local zone = sign and (sign == "-" and -1 or 1) * (tonumber(oh) * 3600 + tonumber(om) * 60) or 0
  return local_time + utc_offset - zone
end

--- "just now", "5 min ago", "3 h ago", "2 days ago", then the date.
function M.age(epoch, now)
  local seconds = math.max(0, (now or os.time()) - epoch)
  if seconds < 60 then return "just now" end
  if seconds < 3600 then return string.format("%d min ago", math.floor(seconds / 60)) end
  if seconds < 86400 then return string.format("%d h ago", math.floor(seconds / 3600)) end
  local days = math.floor(seconds / 86400)
  if days < 30 then return days == 1 and "1 day ago" or string.format("%d days ago", days) end
  return os.date("%Y-%m-%d", epoch)
end

--- A folder as a person writes it: ~/… under the home folder.
function M.place(cwd)
  if not cwd or cwd == "" then return nil end
  local home = vim.fs.normalize(vim.env.HOME or "")
  cwd = vim.fs.normalize(cwd)
  if home ~= "" and home ~= "/" and (cwd == home or vim.startswith(cwd, home .. "/")) then
    return "~" .. cwd:sub(#home + 1)
  end
  return cwd
end

local function stamp_of(s) return (s.updatedAt or "") ~= "" and s.updatedAt or s.createdAt end

--- One line of the session picker: title, workspace, age, where it is open.
function M.format(s, now)
  local parts = { require("goose_ls.inert").line(s.title or "New Session") } -- the agent's title
  local place = M.place(s.cwd)
  if place then table.insert(parts, place) end
  local epoch = M.epoch(stamp_of(s))
  if epoch then table.insert(parts, M.age(epoch, now)) end
  if s.openElsewhere then
    table.insert(parts, "open in another editor")
  elseif s.loaded then
    table.insert(parts, "open here")
  end
  return table.concat(parts, " · ")
end

local function same_folder(a, b)
  if not a or a == "" or not b then return false end
  local real = function(p) return vim.fs.normalize(vim.uv.fs_realpath(p) or p) end
  return real(a) == real(b)
end

--- The sessions as the picker lists them: this workspace's (``root``) first, each group
--- newest first.
function M.order(sessions, root)
  local keyed = {}
  for i, s in ipairs(sessions) do
    keyed[i] = { s = s, here = same_folder(s.cwd, root), at = M.epoch(stamp_of(s)) or 0, i = i }
  end
  table.sort(keyed, function(a, b)
    if a.here ~= b.here then return a.here end
    if a.at ~= b.at then return a.at > b.at end
    return a.i < b.i
  end)
  return vim.tbl_map(function(k) return k.s end, keyed)
end

function M.pick()
  goose().request("goose/listSessions", {}, function(result)
    local now = os.time()
    vim.ui.select(M.order(result.sessions or {}, goose().root()), {
      prompt = "goose sessions",
      format_item = function(s) return M.format(s, now) end,
    }, function(choice)
      if not choice then return end
      if chat.sessions[choice.sessionId] and chat.sessions[choice.sessionId].buf then
        chat.open(choice.sessionId) -- already shown here
        return chat.show(choice.sessionId)
      end
      goose().request("goose/loadSession", { sessionId = choice.sessionId }, function(loaded)
        chat.open(loaded.sessionId)
        chat.show(loaded.sessionId)
        require("goose_ls.compose").follow(loaded.sessionId)
      end)
    end)
  end)
end

return M
