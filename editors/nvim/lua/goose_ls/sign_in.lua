-- Signing in to the agent: its terminal sign-in (named in goose/agentStatus `signIn`, its
-- command given by goose/signInCommand) run in a terminal split, where the user answers
-- it; once it exits 0, goose-ls connects to the agent again (goose/authenticate with its
-- methodId). An agent without one is asked to sign in with the methods that work on their
-- own (goose/authenticate alone).
local M = {}

local function goose() return require("goose_ls") end

local function report(result)
  if result.signedIn then return vim.notify("goose: signed in") end
  local agent = result.agent or {}
  vim.notify("goose: not signed in: " .. (agent.message or "?"), vim.log.levels.WARN)
end

--- Run one sign-in's command (goose/signInCommand) in a terminal split; the split closes
--- when it worked, and stays to be read when it did not.
local function start(sign_in, command)
  vim.cmd("botright new")
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.bo[buf].bufhidden = "wipe"
  local cmd = vim.list_extend({ command.command }, command.args or {})
  local opts = {
    on_exit = function(_, code)
      vim.schedule(function()
        if code ~= 0 then
          local failed = "goose: the sign-in exited with code " .. code .. "; not signed in"
          return vim.notify(failed, vim.log.levels.WARN)
        end
        if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_close(win, true) end
        goose().request("goose/authenticate", { methodId = sign_in.methodId }, report)
      end)
    end,
  }
  if next(command.env or {}) then opts.env = command.env end
  if vim.fn.has("nvim-0.11") == 1 then
    opts.term = true
    vim.fn.jobstart(cmd, opts)
  else
    vim.fn.termopen(cmd, opts)
  end
  vim.cmd("startinsert")
end

local function run(sign_in)
  local params = { methodId = sign_in.methodId }
  goose().request("goose/signInCommand", params, function(command) start(sign_in, command) end)
end

--- Run a terminal sign-in; with several, the user picks one.
local function choose(sign_ins)
  if #sign_ins == 1 then return run(sign_ins[1]) end
  vim.ui.select(sign_ins, {
    prompt = "goose: sign in with",
    format_item = function(s) return s.label end,
  }, function(choice)
    if choice then run(choice) end
  end)
end

--- :Goose signin. The agent's terminal sign-in when goose-ls gave one; else goose-ls
--- tries the methods that work on their own, and gives it when none did.
function M.start()
  local known = goose().status.signIn
  if known and #known > 0 then return choose(known) end
  goose().request("goose/authenticate", vim.empty_dict(), function(result)
    local sign_ins = (result.agent or {}).signIn or {}
    if result.signedIn or #sign_ins == 0 then return report(result) end
    choose(sign_ins)
  end)
end

return M
