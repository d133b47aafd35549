-- goose_ls: a thin Neovim client for the goose-ls language server.
-- It starts goose-ls for every file type and renders the goose/* protocol in chat buffers.
local M = {}

local chat = require("goose_ls.chat")

M.config = {
  cmd = { "goose-ls" },
  init_options = {},
  settings = {},
  keymaps = true,
  chat_split = "vsplit",
}

M.status = { state = "stopped" }

local function handlers()
  return {
    ["goose/update"] = function(_, params) chat.on_update(params) end,
    ["goose/turnEnd"] = function(_, params) chat.on_turn_end(params) end,
    ["goose/agentStatus"] = function(_, params)
      M.status = params
      vim.api.nvim_exec_autocmds("User", { pattern = "GooseStatus", modeline = false })
    end,
  }
end

local function client_config()
  return {
    name = "goose_ls",
    cmd = M.config.cmd,
    -- vim.json encodes an empty table as [], so send only what is set.
    init_options = next(M.config.init_options) and M.config.init_options or nil,
    settings = next(M.config.settings) and { goose = M.config.settings } or nil,
    handlers = handlers(),
    root_dir = vim.fs.root(0, { ".git" }) or vim.fn.getcwd(),
  }
end

--- The running goose-ls client, if any.
function M.client()
  return vim.lsp.get_clients({ name = "goose_ls" })[1]
end

--- Start goose-ls for every buffer that has a file type.
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  if vim.lsp.config and vim.lsp.enable then -- Neovim 0.11+: no filetypes = every file type
    local config = client_config()
    config.root_dir = nil
    config.root_markers = { ".git" }
    vim.lsp.config("goose_ls", config)
    vim.lsp.enable("goose_ls")
  else -- Neovim 0.10
    vim.api.nvim_create_autocmd("FileType", {
      group = vim.api.nvim_create_augroup("goose_ls", { clear = true }),
      callback = function(args)
        if vim.bo[args.buf].buftype == "" then
          vim.lsp.start(client_config(), { bufnr = args.buf })
        end
      end,
    })
  end
  if M.config.keymaps then
    vim.keymap.set("x", "<leader>ga", ":Goose ask<CR>", { desc = "goose: ask about the selection" })
    vim.keymap.set("n", "<leader>gs", "<cmd>Goose send<CR>", { desc = "goose: send a message" })
    vim.keymap.set("n", "<leader>gc", "<cmd>Goose cancel<CR>", { desc = "goose: cancel the turn" })
    vim.keymap.set("n", "<leader>gl", "<cmd>Goose sessions<CR>", { desc = "goose: sessions" })
  end
end

--- A short agent state for the statusline: "goose: running".
function M.statusline()
  return "goose: " .. (M.status.state or "stopped")
end

--- Send a request to goose-ls and call back with its result (errors are reported).
function M.request(method, params, callback)
  local client = M.client()
  if not client then
    vim.notify("goose-ls is not running in this buffer", vim.log.levels.WARN)
    return
  end
  -- Neovim 0.11 has client:request(); 0.10 has client.request() (no self).
  local send = vim.fn.has("nvim-0.11") == 1 and function(...) return client:request(...) end
    or client.request
  send(method, params, function(err, result)
    if err then
      vim.notify("goose: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if callback then callback(result) end
  end)
end

local function uuid()
  return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function(c)
    local v = (c == "x") and math.random(0, 0xf) or math.random(8, 0xb)
    return string.format("%x", v)
  end))
end

--- Make sure there is a current session, then call ``fn(session_id)``.
function M.with_session(fn)
  if chat.current then return fn(chat.current) end
  M.request("goose/newSession", { tabId = uuid() }, function(result)
    chat.open(result.sessionId)
    fn(result.sessionId)
  end)
end

--- Ask a question, with the lines ``first``-``last`` of the current buffer as context.
function M.ask(question, first, last)
  local context = M.context
  M.context = {}
  if first then
    table.insert(context, {
      type = "selection",
      uri = vim.uri_from_bufnr(0),
      startLine = first,
      endLine = last or first,
    })
  end
  M.with_session(function(session_id)
    M.request("goose/prompt", {
      sessionId = session_id,
      messageId = uuid(),
      prompt = question or "",
      context = context,
    })
    chat.show(session_id)
  end)
end

M.context = {}

--- Keep the lines ``first``-``last`` (or the whole file) for the next message.
function M.add_context(first, last)
  local item = { type = "file", uri = vim.uri_from_bufnr(0) }
  if first then
    item = { type = "selection", uri = item.uri, startLine = first, endLine = last or first }
  end
  table.insert(M.context, item)
  vim.notify(string.format("goose: %d item(s) of context for the next message", #M.context))
end

--- Switch the current session's mode (goose: auto, approve, smart_approve, chat).
function M.set_mode(mode_id)
  if not chat.current then return vim.notify("goose: no chat yet", vim.log.levels.WARN) end
  M.request("goose/setMode", { sessionId = chat.current, modeId = mode_id }, function()
    vim.notify("goose: mode " .. mode_id)
  end)
end

--- Set one of the chat's config options (model, thinking effort...) to ``value``.
function M.set_option(config_id, value)
  if not chat.current then return vim.notify("goose: no chat yet", vim.log.levels.WARN) end
  M.request(
    "goose/setConfigOption",
    { sessionId = chat.current, configId = config_id, value = value },
    function() vim.notify("goose: " .. config_id .. " = " .. tostring(value)) end
  )
end

function M.cancel()
  if chat.current then M.request("goose/cancel", { sessionId = chat.current }) end
end

function M.new_session()
  chat.current = nil
  M.with_session(function(session_id) chat.show(session_id) end)
end

function M.sessions()
  M.request("goose/listSessions", {}, function(result)
    vim.ui.select(result.sessions, {
      prompt = "goose sessions",
      format_item = function(s) return s.title .. "  (" .. s.sessionId .. ")" end,
    }, function(choice)
      if not choice then return end
      M.request("goose/loadSession", { sessionId = choice.sessionId }, function(loaded)
        chat.open(loaded.sessionId)
        chat.show(loaded.sessionId)
      end)
    end)
  end)
end

math.randomseed(vim.uv.hrtime())

return M
