-- :Goose {ask|send|now|cancel|new|sessions|restart|review|revert|...} and the <Plug>(goose-…) maps of the goose_ls plugin.
if vim.g.loaded_goose_ls then return end
vim.g.loaded_goose_ls = true

local subcommands = {
  ask = function(opts)
    local first, last = nil, nil
    if opts.range > 0 then first, last = opts.line1, opts.line2 end
    local question = opts.fargs[2] and table.concat(vim.list_slice(opts.fargs, 2), " ") or nil
    local goose = require("goose_ls")
    if question then return goose.ask(question, first, last) end
    -- No question yet: the selection goes with the message written in the compose area.
    if first then goose.add_context(first, last) end
    goose.compose()
  end,
  send = function(opts)
    local goose = require("goose_ls")
    local text = table.concat(vim.list_slice(opts.fargs, 2), " ")
    if text ~= "" then return goose.ask(text) end
    goose.compose()
  end,
  compose = function() require("goose_ls").compose() end,
  cancel = function() require("goose_ls").cancel() end,
  now = function() require("goose_ls.steer").now() end,
  add = function(opts)
    if opts.range > 0 then return require("goose_ls").add_context(opts.line1, opts.line2) end
    require("goose_ls").add_context()
  end,
  option = function(opts)
    if not opts.fargs[2] then return require("goose_ls").pick_option() end
    if not opts.fargs[3] then
      return vim.notify("Goose option: give an option id and a value", vim.log.levels.WARN)
    end
    require("goose_ls").set_option(opts.fargs[2], opts.fargs[3])
  end,
  mode = function(opts)
    if not opts.fargs[2] then return vim.notify("Goose mode: which mode?", vim.log.levels.WARN) end
    require("goose_ls").set_mode(opts.fargs[2])
  end,
  image = function(opts)
    require("goose_ls").attach_image(table.concat(vim.list_slice(opts.fargs, 2), " "))
  end,
  new = function() require("goose_ls").new_session() end,
  signin = function() require("goose_ls.sign_in").start() end,
  restart = function(opts)
    local what = opts.fargs[2]
    if what and what ~= "server" then
      return vim.notify("Goose restart: nothing, or server", vim.log.levels.WARN)
    end
    require("goose_ls").restart(what == "server")
  end,
  sessions = function() require("goose_ls").sessions() end,
  fork = function() require("goose_ls.fork").here() end,
  review = function() require("goose_ls").turn_changes("goose.reviewTurn") end,
  revert = function() require("goose_ls").turn_changes("goose.revertTurn") end,
}

vim.api.nvim_create_user_command("Goose", function(opts)
  local name = opts.fargs[1] or "send"
  local run = subcommands[name]
  if not run then
    vim.notify("Goose: unknown subcommand " .. name, vim.log.levels.ERROR)
    return
  end
  run(opts)
end, {
  nargs = "*",
  range = true,
  complete = function(lead, line)
    if line:match("Goose%s+image%s") then return vim.fn.getcompletion(lead, "file") end
    return vim.tbl_keys(subcommands)
  end,
  desc = "goose: ask, send, compose, now, cancel, add, image, fork, mode, option, new, sessions, signin, restart, review, revert",
})

-- Maps to bind keys to (setup({ keymaps = true }) binds the <leader>g… ones).
local function plug(modes, name, rhs, desc)
  vim.keymap.set(modes, "<Plug>(goose-" .. name .. ")", rhs, { desc = "goose: " .. desc })
end
plug("x", "ask", ":Goose ask<CR>", "ask about the selection")
plug("x", "add", ":Goose add<CR>", "keep the selection for the next message")
plug("n", "compose", "<cmd>Goose compose<CR>", "write a message")
plug("n", "cancel", "<cmd>Goose cancel<CR>", "cancel the turn")
plug("n", "now", "<cmd>Goose now<CR>", "send the oldest queued message into the running turn")
plug("n", "image", "<cmd>Goose image<CR>", "attach an image file to the next message")
plug("n", "new", "<cmd>Goose new<CR>", "new chat")
plug("n", "sessions", "<cmd>Goose sessions<CR>", "sessions")
plug("n", "fork", "<cmd>Goose fork<CR>", "fork the chat at the turn under the cursor")
