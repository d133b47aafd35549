-- :checkhealth goose_ls
local M = {}

--- An agent setting (init_options or settings, or vim.lsp.config), the first found, or nil.
local function agent_setting(goose, key)
  local sources = { goose.config.init_options, goose.config.settings }
  if vim.lsp.config and vim.lsp.config.goose_ls then
    local lsp = vim.lsp.config.goose_ls
    table.insert(sources, lsp.init_options or {})
    table.insert(sources, (lsp.settings or {}).goose or {})
  end
  for _, source in ipairs(sources or {}) do
    local value = type(source) == "table" and type(source.agent) == "table" and source.agent[key] or nil
    if value ~= nil and value ~= "" then return value end
  end
end

--- The agent command configured, or nil.
local function agent_command(goose)
  local command = agent_setting(goose, "command")
  if type(command) == "string" then command = vim.split(vim.trim(command), "%s+") end
  if type(command) == "table" and command[1] then return command end
end

function M.check()
  vim.health.start("goose_ls")
  local goose = require("goose_ls")
  local cmd = goose.config.cmd[1]
  if vim.fn.executable(cmd) == 1 then
    vim.health.ok("goose-ls found: " .. vim.fn.exepath(cmd))
  else
    vim.health.error("goose-ls not found: " .. cmd, { "Install goose-ls, or set cmd in setup()." })
  end
  local agent = agent_command(goose)
  local server = agent_setting(goose, "goosed") or agent_setting(goose, "url")
  if type(server) == "string" then  -- no program to find here: goose-ls reaches a server
    local flag = agent_setting(goose, "goosed") and "--goosed" or "--url"
    vim.health.ok("agent: the server at " .. server .. " (goose-ls checks it when it starts; `goose-ls doctor "
      .. flag .. " " .. server .. "` says more)")
  elseif agent and vim.fs.basename(agent[1]) ~= "goose" then
    if vim.fn.executable(agent[1]) == 1 then
      vim.health.ok("agent found: " .. table.concat(agent, " "))
    else
      vim.health.warn("agent not found: " .. agent[1], { "Check agent.command in init_options." })
    end
  elseif vim.fn.executable(agent and agent[1] or "goose") == 1 then
    local goose_bin = agent and agent[1] or "goose"
    local version = vim.trim(vim.fn.system({ goose_bin, "--version" }))
    vim.health.ok("goose found: " .. vim.fn.exepath(goose_bin) .. " (" .. version .. ")")
  else
    vim.health.warn("goose not on PATH", { "Install goose 1.16.0 or newer, or configure another agent." })
  end
  if goose.client() then
    vim.health.ok("goose-ls is running; agent: " .. (goose.status.state or "?"))
  else
    vim.health.info("goose-ls is not attached to the current buffer")
  end
end

return M
