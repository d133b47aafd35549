-- The config of the Neovim that tests/test_nvim.py runs in tmux: the plugin as a user sets
-- it up (GOOSE_PLUGIN on 'runtimepath', setup()), a statusline with its state.
vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
vim.cmd("filetype plugin on")
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'goose_ls'.statusline()}"
require("goose_ls").setup({
  cmd = vim.json.decode(os.getenv("GOOSE_CMD")),
  init_options = vim.json.decode(os.getenv("GOOSE_INIT")),
})
