-- Buffers goose-ls brings along when the agent changes their file on disk itself
-- (goose/diskSynced, docs/protocol.md). The edit arrives as workspace/applyEdit, so the
-- buffer is modified and Neovim still holds the file's old time: :w would ask whether to
-- write over a file "changed since reading it", and :checktime (or focus, or a shell
-- command) would warn W12. Once the buffer holds exactly the file, it is marked saved and
-- the file's new time is taken, without reloading it: a reload would add an undo step, so
-- one u would no longer take the agent's change back.
local M = {}

--- The label of goose-ls's edit that brings a buffer to the disk's text.
M.LABEL = "goose: changed on disk"

--- The loaded buffer of ``uri``, or nil (none is made or loaded for it).
local function loaded(uri)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.uri_from_bufnr(buf) == uri then return buf end
  end
end

--- The URIs a workspace edit changes, each with the version of the text it was made for
--- (or nil).
local function targets(edit)
  local found = {}
  for _, change in ipairs(edit and edit.documentChanges or {}) do
    if change.textDocument then
      table.insert(found, { uri = change.textDocument.uri, version = change.textDocument.version })
    end
  end
  for uri in pairs(edit and edit.changes or {}) do
    table.insert(found, { uri = uri })
  end
  return found
end

--- workspace/applyEdit: Neovim's own handler, but for goose-ls's edit that brings a buffer
--- along with the disk. That one is applied without a message (the chat says it), and a
--- buffer without unsaved changes is marked modified first, so that the edit's undo step
--- remembers a buffer Neovim counts as changed: undone, once marked saved, the buffer is
--- modified again (it no longer holds the file), as after a reload.
---
--- An edit made for an older text of the buffer is refused: the user typed since, and
--- goose-ls has not heard of it yet (Neovim sends changes a moment later). Neovim itself
--- would skip it and answer that it was applied; refused, goose-ls keeps the buffer and
--- the disk apart as a conflict instead.
function M.apply_edit(err, params, ctx, config)
  if not (params and params.label == M.LABEL) then
    return vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, config)
  end
  local buffers = {}
  for _, target in ipairs(targets(params.edit)) do
    local buf = loaded(target.uri)
    local now = buf and vim.lsp.util.buf_versions[buf]
    if type(target.version) == "number" and now and now > target.version then
      return { applied = false, failureReason = "the buffer changed meanwhile" }
    end
    if buf then table.insert(buffers, buf) end
  end
  local marked = {}
  for _, buf in ipairs(buffers) do
    if not vim.bo[buf].modified then
      vim.bo[buf].modified = true
      table.insert(marked, buf)
    end
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or "utf-16"
  local applied, problem = pcall(vim.lsp.util.apply_workspace_edit, params.edit, encoding)
  if not applied then
    for _, buf in ipairs(marked) do
      if vim.api.nvim_buf_is_valid(buf) then vim.bo[buf].modified = false end
    end
  end
  return { applied = applied, failureReason = not applied and tostring(problem) or nil }
end

--- The buffer's text as it would be in its file (the LSP client's view of it: the
--- 'fileformat' line ends, a last one as 'eol' says, and a UTF-8 byte order mark).
local function text_of(buf)
  local ending = ({ dos = "\r\n", mac = "\r" })[vim.bo[buf].fileformat] or "\n"
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true)
  local text = table.concat(lines, ending)
  if vim.bo[buf].eol and not (#lines == 1 and lines[1] == "") then text = text .. ending end
  if vim.bo[buf].bomb and vim.bo[buf].fileencoding:lower():match("^utf%-?8$") then
    text = "\239\187\191" .. text
  end
  return text
end

local function read(name)
  local file = io.open(name, "rb")
  if not file then return nil end
  local data = file:read("*a")
  file:close()
  return data
end

--- One :checktime of ``buf`` that asks nothing and reloads nothing: 'autoread' off meanwhile
--- (else Neovim reloads a saved buffer whose file is newer), and a FileChangedShell of our
--- own. When only the file's time changed ("time": the size and the text are the buffer's),
--- "ask" lets Neovim keep that time for itself and for :w, silently; anything else is left
--- alone. The reason Neovim gave, or nil when the file's time had not changed.
local function check(buf)
  local reason
  vim.api.nvim_buf_call(buf, function()
    local group = vim.api.nvim_create_augroup("goose_ls_disk_" .. buf, { clear = true })
    vim.api.nvim_create_autocmd("FileChangedShell", {
      group = group,
      buffer = buf,
      callback = function()
        reason = vim.v.fcs_reason
        vim.v.fcs_choice = reason == "time" and "ask" or ""
      end,
    })
    local autoread = vim.api.nvim_get_option_value("autoread", { scope = "local" })
    vim.bo[buf].autoread = false
    pcall(vim.cmd, "checktime " .. buf)
    if autoread == nil then
      vim.cmd("set autoread<") -- the global value again
    else
      vim.bo[buf].autoread = autoread
    end
    vim.api.nvim_del_augroup_by_id(group)
  end)
  return reason
end

--- Move the file's modification time on by a microsecond (its text untouched).
local function touch(name)
  local info = vim.uv.fs_stat(name)
  if not info then return false end
  local function seconds(t) return t.sec + t.nsec / 1e9 end
  return vim.uv.fs_utime(name, seconds(info.atime), seconds(info.mtime) + 1e-6) == true
end

--- Take the file's time as if the buffer had just been read from it, without reading it
--- again (a reload would add an undo step: one u would then not take the change back).
--- Neovim keeps the time of a file whose text and size are the buffer's ("time"); the
--- size of a file the agent changed is new, so the first check only learns it, and the
--- file's time moved on by a microsecond makes the second find only the time changed.
--- Should the file differ from the buffer meanwhile (the agent again), the buffer is
--- modified again, and :w asks as it should.
local function take_time(buf, name)
  local reason = check(buf)
  if reason == "changed" and touch(name) then reason = check(buf) end
  if reason ~= nil and reason ~= "time" then vim.bo[buf].modified = true end
end

--- goose/diskSynced: mark the buffer of ``uri`` saved if it holds exactly its file (not if
--- the user typed since, or the file changed again: goose-ls then tells again).
function M.synced(uri)
  local buf = type(uri) == "string" and loaded(uri)
  if not buf or vim.bo[buf].buftype ~= "" then return end
  local name = vim.api.nvim_buf_get_name(buf)
  local disk = read(name)
  local text = text_of(buf)
  if disk == nil or (disk ~= text and not (text == "" and disk == "\n")) then return end
  vim.bo[buf].modified = false
  take_time(buf, name)
end

return M
