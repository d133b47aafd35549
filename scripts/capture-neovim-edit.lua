-- Used by capture-neovim-edit.sh inside a real terminal: ask for an edit the agent makes on
-- disk itself, then show app.py's buffer once goose-ls has brought it along.
vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
vim.cmd("runtime plugin/goose_ls.lua")
vim.cmd("filetype on")
vim.cmd("syntax on")
vim.o.laststatus = 2
vim.o.statusline = "%f%m %= %{v:lua.require'goose_ls'.statusline()}"
local goose = require("goose_ls")
goose.setup({
  cmd = vim.json.decode(os.getenv("GOOSE_CMD")),
  init_options = vim.json.decode(os.getenv("GOOSE_INIT")),
})
vim.cmd("edit") -- app.py was loaded before filetype detection was on
local app = vim.api.nvim_get_current_buf()
-- Done once app.py's buffer holds the edit, marked saved (polled from the main loop: the
-- plugin's own autocommand cannot run inside another one's callback).
local function done()
  local text = table.concat(vim.api.nvim_buf_get_lines(app, 0, -1, false), "\n")
  if text:find("max(len(values), 1)", 1, true) and not vim.bo[app].modified then
    return vim.defer_fn(function() io.open(os.getenv("GOOSE_DONE"), "w"):close() end, 300)
  end
  vim.defer_fn(done, 100)
end
vim.defer_fn(done, 100)
vim.defer_fn(function()
  vim.wait(20000, function() return goose.client() ~= nil end)
  vim.cmd("5,9Goose ask Guard mean against an empty list.")
  vim.cmd("stopinsert")
end, 200)
