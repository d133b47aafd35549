-- :checkhealth goose_ls
local M = {}

function M.check()
  vim.health.start("goose_ls")
  local goose = require("goose_ls")
  local cmd = goose.config.cmd[1]
  if vim.fn.executable(cmd) == 1 then
    vim.health.ok("goose-ls found: " .. vim.fn.exepath(cmd))
  else
    vim.health.error("goose-ls not found: " .. cmd, { "Install goose-ls, or set cmd in setup()." })
  end
  if vim.fn.executable("goose") == 1 then
    local version = vim.trim(vim.fn.system({ "goose", "--version" }))
    vim.health.ok("goose found: " .. vim.fn.exepath("goose") .. " (" .. version .. ")")
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
