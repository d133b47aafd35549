-- Neovim 0.11+: `vim.lsp.enable("goose_ls")` finds this file on 'runtimepath' and starts
-- goose-ls with the plugin's goose/* handlers, without setup(). Override with
-- vim.lsp.config("goose_ls", { cmd = ..., init_options = ... }).
return require("goose_ls").lsp_config()
