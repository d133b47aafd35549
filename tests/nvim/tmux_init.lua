-- The config of the Neovim that tests/test_nvim.py runs in tmux: the plugin as a user sets
-- it up (GOOSE_PLUGIN on 'runtimepath', setup()), the <Plug> maps bound as
-- docs/editors/neovim.md advises, a statusline with the chat's state (and, for the tests,
-- the window's line/line count: what a person reads to see that a chat grew).
vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
vim.cmd("filetype plugin on")
vim.o.laststatus = 2
vim.o.statusline = "%f%m %l/%L %= %{v:lua.require'goose_ls'.statusline()}"
require("goose_ls").setup({
  cmd = vim.json.decode(os.getenv("GOOSE_CMD")),
  init_options = vim.json.decode(os.getenv("GOOSE_INIT")),
})
vim.keymap.set("x", "<leader>ga", "<Plug>(goose-ask)")
vim.keymap.set("n", "<leader>gs", "<Plug>(goose-compose)")
vim.keymap.set("n", "<leader>gc", "<Plug>(goose-cancel)")
vim.keymap.set("n", "<leader>gl", "<Plug>(goose-sessions)")
vim.keymap.set("n", "<leader>gi", "<Plug>(goose-image)")
