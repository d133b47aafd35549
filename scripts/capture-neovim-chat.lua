-- Used by capture-neovim-chat.sh inside a real terminal: ask about app.py, show the chat.
vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
vim.cmd("runtime plugin/goose_ls.lua")
vim.cmd("filetype on")
vim.cmd("syntax on")
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'goose_ls'.statusline()}"
local goose = require("goose_ls")
goose.setup({
  cmd = vim.json.decode(os.getenv("GOOSE_CMD")),
  init_options = vim.json.decode(os.getenv("GOOSE_INIT")),
})
vim.cmd("edit") -- app.py was loaded before filetype detection was on
vim.ui.select = function(items, _, on_choice)
  for _, item in ipairs(items) do
    if item.kind == "allow_once" then return on_choice(item) end
  end
end
vim.api.nvim_create_autocmd("User", {
  pattern = "GooseTurnEnd",
  callback = function()
    vim.defer_fn(function() io.open(os.getenv("GOOSE_DONE"), "w"):close() end, 300)
  end,
})
vim.defer_fn(function()
  vim.wait(20000, function() return goose.client() ~= nil end)
  vim.cmd("1,2Goose ask What does this function do?")
end, 200)
