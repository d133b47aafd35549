-- Drives the goose_ls plugin in a real headless Neovim; writes what it saw as JSON.
-- Environment: GOOSE_PLUGIN, GOOSE_CMD, GOOSE_INIT (JSON), GOOSE_FILE, GOOSE_OUT, GOOSE_SCENARIO.
local out = os.getenv("GOOSE_OUT")
local scenario = os.getenv("GOOSE_SCENARIO")
local result = { scenario = scenario }

local function finish()
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("filetype on") -- -u NONE turns it off; every real config has it
  vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
  vim.cmd("runtime plugin/goose_ls.lua")
  local goose = require("goose_ls")
  local chat = require("goose_ls.chat")
  goose.setup({
    cmd = vim.json.decode(os.getenv("GOOSE_CMD")),
    init_options = vim.json.decode(os.getenv("GOOSE_INIT")),
  })
  -- The permission prompt: pick "Allow once", as the user pressing its key would.
  vim.ui.select = function(items, opts, on_choice)
    result.asked = opts.prompt
    result.choices = vim.tbl_map(opts.format_item, items)
    result.sent = vim.tbl_map(function(item) return item.label end, items)
    for _, item in ipairs(items) do
      if item.kind == "allow_once" then return on_choice(item) end
    end
  end
  local ends = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "GooseTurnEnd",
    callback = function(args) table.insert(ends, args.data) end,
  })
  vim.cmd("edit " .. os.getenv("GOOSE_FILE"))
  assert(vim.wait(20000, function() return goose.client() ~= nil end), "goose-ls did not attach")
  result.attached = true

  if scenario == "ask" then vim.cmd("%Goose add") end
  vim.cmd("1,2Goose ask What does this do?")
  if scenario == "cancel" then
    assert(vim.wait(20000, function()
      local s = chat.current and chat.sessions[chat.current]
      return s and s.last_index > 5
    end), "no stream")
    vim.cmd("Goose cancel")
  end
  assert(vim.wait(30000, function() return #ends > 0 end), "the turn did not end")
  result.stop = ends[1].stopReason or ends[1].error
  local s = chat.sessions[chat.current]
  local function text() return table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), "\n") end
  result.text = text()
  result.filetype = vim.bo[s.buf].filetype
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == s.buf then result.foldmethod = vim.wo[win].foldmethod end
  end
  result.statusline = goose.statusline()

  -- Hide the chat, show it again: it catches up with goose/replay and shows nothing twice.
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == s.buf then vim.api.nvim_win_close(win, true) end
  end
  local replayed = false
  goose.request("goose/replay", { sessionId = chat.current, afterIndex = 0 }, function(r)
    result.replay_count = r.count
    replayed = true
  end)
  chat.show(chat.current)
  assert(vim.wait(10000, function() return replayed end), "no replay answer")
  vim.wait(500)
  result.text_after_replay = text()
end)

if not ok then result.error = tostring(err) end
finish()
