-- goose_ls: a thin Neovim client for the goose-ls language server.
-- It starts goose-ls for every file type and renders the goose/* protocol in chat buffers.
local M = {}

local chat = require("goose_ls.chat")

M.config = {
  cmd = { "goose-ls" },
  init_options = {},
  settings = {},
  keymaps = false, -- true: the <leader>g… maps of |goose_ls-keymaps|
  chat_split = "vsplit",
  compose_height = 4,
}

--- The agent's state as goose/agentStatus (or goose/status) last told it.
M.status = { state = "stopped" }

--- The agent's name for people, as goose-ls last gave it (goose/agentStatus `name`, only
--- while it runs: kept through a crash or a restart), on one line; "agent" until then,
--- and for a name that would pass for the user's own heading.
local agent_name = "agent"

function M.agent_name() return agent_name end

--- Take the agent's state from goose/agentStatus or goose/status.
local function set_status(status)
  M.status = status
  if type(status.name) == "string" then
    local name = vim.trim((status.name:gsub("%s+", " ")))
    name = require("goose_ls.inert").line(name) -- shown in headings, prompts, statuslines
    agent_name = (name == "" or name:lower() == "you") and "agent" or name
  end
end

--- Tell statuslines and User GooseStatus autocommands that something they show changed.
function M.changed()
  vim.api.nvim_exec_autocmds("User", { pattern = "GooseStatus", modeline = false })
  pcall(vim.cmd, "redrawstatus!")
end

--- The handlers of the goose/* notifications, and of goose-ls's edits (used by setup()
--- and by lsp/goose_ls.lua).
function M.handlers()
  return {
    ["goose/update"] = function(_, params) chat.on_update(params) end,
    ["goose/turnEnd"] = function(_, params) chat.on_turn_end(params) end,
    ["goose/agentStatus"] = function(_, params) set_status(params); M.changed() end,
    ["goose/diskSynced"] = function(_, params) require("goose_ls.disk").synced(params.uri) end,
    ["workspace/applyEdit"] = function(...) return require("goose_ls.disk").apply_edit(...) end,
  }
end

--- What `vim.lsp.enable("goose_ls")` starts, without setup(): editors/nvim/lsp/goose_ls.lua.
--- Where goose-ls runs for a buffer (Neovim 0.11's root_dir): its git work tree. A file in
--- none (a chat's transcript, in goose-ls's data dir) goes to the goose-ls already running,
--- so one goose-ls serves the code and its chats.
function M.root_dir(bufnr, on_dir)
  local running = M.client()
  on_dir(vim.fs.root(bufnr, { ".git" }) or (running and running.root_dir) or vim.fn.getcwd())
end

function M.lsp_config()
  return {
    cmd = { "goose-ls" },
    init_options = { gooseUpdates = true },
    root_dir = M.root_dir,
    handlers = M.handlers(),
    on_attach = function() M.refresh() end,
  }
end

local function client_config()
  return {
    name = "goose_ls",
    cmd = M.config.cmd,
    -- gooseUpdates: goose/update from the start (docs/protocol.md).
    init_options = vim.tbl_extend("force", { gooseUpdates = true }, M.config.init_options),
    -- vim.json encodes an empty table as [], so send only what is set.
    settings = next(M.config.settings) and { goose = M.config.settings } or nil,
    handlers = M.handlers(),
    on_attach = function() M.refresh() end,
    root_dir = vim.fs.root(0, { ".git" }) or vim.fn.getcwd(),
  }
end

--- The running goose-ls client, if any.
function M.client()
  return vim.lsp.get_clients({ name = "goose_ls" })[1]
end

--- The workspace root: where context paths are shown relative to.
function M.root()
  local client = M.client()
  return client and client.root_dir or vim.fn.getcwd()
end

--- Start goose-ls for every buffer that has a file type.
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  if vim.lsp.config and vim.lsp.enable then -- Neovim 0.11+: no filetypes = every file type
    local config = client_config()
    config.root_dir = M.root_dir
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
    vim.keymap.set("x", "<leader>ga", "<Plug>(goose-ask)", { desc = "goose: ask about the selection" })
    vim.keymap.set("n", "<leader>gs", "<Plug>(goose-compose)", { desc = "goose: write a message" })
    vim.keymap.set("n", "<leader>gc", "<Plug>(goose-cancel)", { desc = "goose: cancel the turn" })
    vim.keymap.set("n", "<leader>gj", "<Plug>(goose-now)", { desc = "goose: send the queued message now" })
    vim.keymap.set("n", "<leader>gl", "<Plug>(goose-sessions)", { desc = "goose: sessions" })
    vim.keymap.set("n", "<leader>gn", "<Plug>(goose-new)", { desc = "goose: new chat" })
    vim.keymap.set("n", "<leader>gi", "<Plug>(goose-image)", { desc = "goose: attach an image" })
  end
end

--- A token count in a few characters: 950, 12k, 1.2M.
local function tokens(n)
  if n >= 999500 then return (string.format("%.1f", n / 1e6):gsub("%.0$", "")) .. "M" end
  if n >= 1000 then return string.format("%dk", math.floor(n / 1000 + 0.5)) end
  return tostring(math.floor(n))
end

--- How full the current chat's context is, "12k/200k"; nil until the chat has used some.
function M.usage()
  local s = chat.current and chat.sessions[chat.current]
  local usage = s and s.usage
  if not usage or (usage.used or 0) <= 0 or not usage.size then return nil end
  return tokens(usage.used) .. "/" .. tokens(usage.size)
end

--- The state of the current chat for a statusline, after the agent's name: "goose: idle",
--- "Claude Agent: running", "goose: waiting for you" (a permission question is open),
--- "goose: running, queued 2", then how full its context is ("goose: idle · 12k/200k");
--- the agent's own state when it is not running ("goose: starting", "goose: error",
--- "goose: needs sign-in"; "agent: starting" before it first ran).
function M.statusline()
  local agent = M.status.state or "stopped"
  local who = agent_name .. ": "
  if M.status.reason == "auth_required" then return who .. "needs sign-in" end
  if agent == "starting" or agent == "error" then return who .. agent end
  if not chat.current and agent ~= "running" then return who .. agent end
  local line = who .. (chat.current and chat.state(chat.current) or "idle")
  local usage = M.usage()
  return usage and (line .. " · " .. usage) or line
end

--- Send a request to goose-ls and call back with its result (errors are reported, then
--- ``on_error`` is called with the error).
function M.request(method, params, callback, on_error)
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
      if on_error then on_error(err) end
      return
    end
    if callback then callback(result) end
  end)
end

--- Ask goose-ls for the agent's state and each open session's running and waiting turns.
function M.refresh()
  M.request("goose/status", {}, function(result)
    set_status(result.agent or M.status)
    for _, summary in ipairs(result.sessions or {}) do
      chat.sync(summary)
    end
    M.changed()
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

M.context = {}

--- Send ``text`` to the session, with the context kept for the next message (and ``extra``).
--- When goose-ls refuses it (an image it may not read, an agent that takes none), the
--- context kept is kept again and ``on_refused`` is called: nothing the user gave is lost.
function M.send(session_id, text, extra, on_refused)
  local kept = M.context
  M.context = {}
  local context = vim.list_extend(vim.list_extend({}, kept), extra or {})
  local message_id = uuid()
  chat.show(session_id)
  M.request("goose/prompt", {
    sessionId = session_id,
    messageId = message_id,
    prompt = text or "",
    context = context,
  }, function(result) chat.accepted(session_id, message_id, text or "", result.queued) end,
  function(err)
    M.context = vim.list_extend(kept, M.context)
    if on_refused then on_refused(err.message or vim.inspect(err)) end
  end)
end

local function selection(first, last)
  return { type = "selection", uri = vim.uri_from_bufnr(0), startLine = first, endLine = last or first }
end

--- Ask a question, with the lines ``first``-``last`` of the current buffer as context.
function M.ask(question, first, last)
  local extra = first and { selection(first, last) } or {}
  M.with_session(function(session_id) M.send(session_id, question, extra) end)
end

--- Keep the lines ``first``-``last`` (or the whole file) for the next message.
function M.add_context(first, last)
  local item = first and selection(first, last) or { type = "file", uri = vim.uri_from_bufnr(0) }
  table.insert(M.context, item)
  vim.notify(string.format("goose: %d item(s) of context for the next message", #M.context))
end

--- Attach an image file to the next message (:Goose image [path]): goose-ls reads it
--- when the message is sent and sends the image itself, to an agent that takes images
--- (else the message is refused, and kept). Without ``path``, ask for one (<Tab>
--- completes file names).
function M.attach_image(path)
  if path == "clear" then -- :Goose image clear: the images attached so far are dropped
    local before = #M.context
    M.context = vim.tbl_filter(function(item) return item.type ~= "image" end, M.context)
    return vim.notify(string.format("goose: %d image(s) dropped from the next message", before - #M.context))
  end
  if not path or path == "" then
    return vim.ui.input({ prompt = "Image to attach: ", completion = "file" }, function(given)
      if given and given ~= "" then M.attach_image(given) end
    end)
  end
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  if vim.fn.filereadable(full) == 0 then
    return vim.notify("goose: no file " .. path, vim.log.levels.WARN)
  end
  table.insert(M.context, { type = "image", uri = vim.uri_from_fname(full) })
  vim.notify(string.format("goose: image %s attached to the next message (%d item(s))",
    vim.fn.fnamemodify(full, ":t"), #M.context))
end

--- Open the compose area under the chat (a new chat when there is none), in insert mode.
function M.compose()
  M.with_session(function(session_id) require("goose_ls.compose").open(session_id) end)
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

--- Choose one of the chat's config options, grouped by category, then its new value.
function M.pick_option()
  if not chat.current then return vim.notify("goose: no chat yet", vim.log.levels.WARN) end
  require("goose_ls.options").pick(chat.current, M.request, M.set_option)
end

function M.cancel()
  if chat.current then M.request("goose/cancel", { sessionId = chat.current }) end
end

--- A new chat, shown in the chat window (reused when there is one).
function M.new_session()
  M.request("goose/newSession", { tabId = uuid() }, function(result)
    chat.open(result.sessionId)
    chat.show(result.sessionId)
    require("goose_ls.compose").follow(result.sessionId)
  end)
end

--- Review or revert the chat's last turn that changed files, whoever changed them
--- (:Goose review, :Goose revert): goose-ls's goose.reviewTurn / goose.revertTurn on the
--- chat's transcript.
function M.turn_changes(command)
  if not chat.current then return vim.notify("goose: no chat yet", vim.log.levels.WARN) end
  local current = chat.current
  M.request("goose/status", {}, function(status)
    for _, session in ipairs(status.sessions or {}) do
      if session.sessionId == current then
        local params = { command = command, arguments = { session.transcript } }
        return M.request("workspace/executeCommand", params)
      end
    end
    vim.notify("goose: this chat is not open in goose-ls", vim.log.levels.WARN)
  end)
end

--- The session picker (:Goose sessions).
function M.sessions() require("goose_ls.sessions").pick() end

--- Restart the agent and take the open chats back (:Goose restart); with ``server``, the
--- shared goose serve too (agent.share: every window then reconnects to a new one).
function M.restart(server)
  M.request("goose/restart", { server = server }, function()
    local what = server and "the agent and its shared goose serve" or "the agent"
    vim.notify("goose: " .. what .. " restarted", vim.log.levels.INFO)
  end)
end

math.randomseed(vim.uv.hrtime())

return M
