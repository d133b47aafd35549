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

--- Keys as the user types them, mappings included, run to the end before returning.
local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
end

local ok, err = pcall(function()
  vim.cmd("filetype on") -- -u NONE turns it off; every real config has it
  vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
  vim.cmd("runtime plugin/goose_ls.lua")
  local goose = require("goose_ls")
  local chat = require("goose_ls.chat")
  local compose = require("goose_ls.compose")
  local cmd = vim.json.decode(os.getenv("GOOSE_CMD"))
  local init = vim.json.decode(os.getenv("GOOSE_INIT"))
  if (scenario == "cancel" or scenario == "one_client_plain") and vim.fn.has("nvim-0.11") == 1 then
    -- Without setup(): lsp/goose_ls.lua on 'runtimepath', the user's own settings on top.
    result.without_setup = true
    vim.lsp.config("goose_ls", { cmd = cmd, init_options = init })
    vim.lsp.enable("goose_ls")
  else
    goose.setup({ cmd = cmd, init_options = init })
  end

  -- The statusline each time it changes.
  result.states = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "GooseStatus",
    callback = function()
      local line = goose.statusline()
      if result.states[#result.states] ~= line then table.insert(result.states, line) end
    end,
  })
  local function chat_text(id)
    local buf = chat.sessions[id or chat.current].buf
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  end

  -- The permission prompt: pick "Allow once", as the user pressing its key would (in the
  -- compose flow, later: the turn waits on it while a second message is queued).
  local answer_later
  -- The option pickers: pick the option, then the value, that GOOSE_PICK names.
  local pick = vim.json.decode(os.getenv("GOOSE_PICK") or "[]")
  result.pickers = {}
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == "goose_option" or opts.kind == "goose_option_value" then
      local lines = vim.tbl_map(opts.format_item, items)
      table.insert(result.pickers, { prompt = opts.prompt, items = lines })
      local wanted = table.remove(pick, 1)
      for i, line in ipairs(lines) do
        if vim.trim(line) == wanted then return on_choice(items[i]) end
      end
      return on_choice(nil)
    end
    if opts.prompt == "goose sessions" then
      result.sessions = vim.tbl_map(opts.format_item, items)
      return
    end
    result.asked = opts.prompt
    result.text_at_question = chat_text()
    result.status_at_question = goose.statusline()
    result.choices = vim.tbl_map(opts.format_item, items)
    result.sent = vim.tbl_map(function(item) return item.label end, items)
    for _, item in ipairs(items) do
      if item.kind == "allow_once" then
        if scenario == "compose" then
          answer_later = function() on_choice(item) end
          return
        end
        return on_choice(item)
      end
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

  if scenario == "restart" then
    -- :Goose restart, then a word it does not take: what the user is told.
    result.told = {}
    local notify = vim.notify
    vim.notify = function(message, ...) ---@diagnostic disable-line: duplicate-set-field
      table.insert(result.told, message)
      return notify(message, ...)
    end
    local function running() return goose.status and goose.status.state == "running" end
    assert(vim.wait(20000, running), "the agent did not start")
    vim.cmd("Goose restart")
    assert(vim.wait(20000, function() return #result.told > 0 end), "no word of the restart")
    vim.cmd("Goose restart everything")
    return
  end

  if scenario == "one_client" or scenario == "one_client_plain" then
    -- A chat's transcript (outside the work tree) opened as showDocument opens it.
    local transcript = os.getenv("HOME") .. "/data/transcripts/20260101_1.md"
    vim.fn.mkdir(vim.fn.fnamemodify(transcript, ":h"), "p")
    vim.fn.writefile({ "# goose chat" }, transcript)
    vim.cmd("edit " .. transcript)
    local buf = vim.api.nvim_get_current_buf()
    vim.wait(3000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end)
    vim.wait(500, function() return false end) -- a second client would have started by now
    result.clients = #vim.lsp.get_clients({ name = "goose_ls" })
    result.transcript_attached = #vim.lsp.get_clients({ bufnr = buf, name = "goose_ls" })
    return
  end

  if scenario == "mention" then
    -- A selection made (and left) in app.py, and a diagnostic on it.
    vim.api.nvim_buf_set_mark(0, "<", 1, 0, {})
    vim.api.nvim_buf_set_mark(0, ">", 2, 0, {})
    local ns = vim.api.nvim_create_namespace("flow")
    vim.diagnostic.set(ns, 0, { { lnum = 1, col = 0, message = "x is never used", severity = vim.diagnostic.severity.WARN } })
    vim.cmd("Goose send") -- the compose area, under a new chat
    assert(vim.wait(20000, function() return compose.window() ~= nil end), "no compose area")
    vim.cmd("stopinsert")
    result.omnifunc = vim.bo.omnifunc
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "compare @ap and more" })
    vim.api.nvim_win_set_cursor(0, { 1, 11 }) -- on the space after "@ap"
    result.start = compose.complete(1, "")
    result.words = vim.tbl_map(function(item) return item.word end, compose.complete(0, "ap"))
    vim.api.nvim_win_set_cursor(0, { 1, 2 }) -- inside a word: no mention
    result.start_in_word = compose.complete(1, "")
    result.specials = vim.tbl_map(function(item) return item.word end, compose.complete(0, "s"))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "/com" })
    vim.api.nvim_win_set_cursor(0, { 1, 4 }) -- after "/com": the agent's slash commands
    result.slash_start = compose.complete(1, "")
    result.slash = vim.tbl_map(function(item) return item.abbr end, compose.complete(0, "com"))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "compare @app.py, @selection and @diagnostics" })
    type_keys("<C-s>")
    assert(vim.wait(20000, function() return #ends >= 1 end), "the turn did not end")
    return
  end

  if scenario == "compose" then
    local messages = vim.json.decode(os.getenv("GOOSE_MESSAGES"))
    local windows = #vim.api.nvim_tabpage_list_wins(0)
    vim.cmd("Goose send") -- no text: the compose area, under a new chat
    assert(vim.wait(20000, function() return compose.window() ~= nil end), "no compose area")
    result.compose_current = vim.api.nvim_get_current_win() == compose.window()
    vim.cmd("stopinsert")
    type_keys("i" .. messages[1] .. "<C-s><Esc>")
    result.compose_after_send = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local s = chat.sessions[chat.current]
    local chat_win = chat.window(chat.current)
    -- A second window on the chat, scrolled up to the top: it must stay there.
    local up = vim.api.nvim_open_win(s.buf, false, { split = "above", win = chat_win })
    vim.api.nvim_win_set_cursor(up, { 1, 0 })
    assert(vim.wait(20000, function() return answer_later ~= nil end), "no permission asked")
    result.chat_modifiable = vim.bo[s.buf].modifiable
    result.modified = vim.bo[s.buf].modified
    -- A second message while the turn runs (it waits on the permission): queued at once.
    type_keys("i" .. messages[2] .. "<Esc><CR>")
    assert(vim.wait(10000, function() return #s.queue > 0 end), "the second message is not queued")
    result.text_queued = chat_text()
    result.status_queued = goose.statusline()
    result.ends_when_queued = #ends
    answer_later()
    assert(vim.wait(30000, function() return #ends >= 2 end), "the turns did not end")
    result.text = chat_text()
    local last = vim.api.nvim_buf_line_count(s.buf)
    result.lines = last
    result.follow_cursor = vim.api.nvim_win_get_cursor(chat_win)[1]
    result.follow_top = vim.fn.getwininfo(chat_win)[1].topline
    result.up_cursor = vim.api.nvim_win_get_cursor(up)[1]
    result.up_top = vim.fn.getwininfo(up)[1].topline
    result.folds = {}
    for lnum = 1, last do
      if vim.api.nvim_win_call(chat_win, function() return vim.fn.foldclosed(lnum) end) ~= -1 then
        table.insert(result.folds, lnum)
      end
    end
    result.deepest_fold = 0
    vim.api.nvim_win_call(chat_win, function()
      for lnum = 1, last do
        result.deepest_fold = math.max(result.deepest_fold, vim.fn.foldlevel(lnum))
      end
    end)
    result.final_status = goose.statusline()
    -- History: <Up> and <Down> in the compose area (normal mode).
    vim.api.nvim_set_current_win(compose.window())
    result.history = {}
    for _, key in ipairs({ "<Up>", "<Up>", "<Down>", "<Down>" }) do
      type_keys(key)
      table.insert(result.history, table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"))
    end
    -- A new chat takes the chat window; no other split opens.
    vim.api.nvim_win_close(up, true)
    windows = #vim.api.nvim_tabpage_list_wins(0)
    local first = chat.current
    vim.cmd("Goose new")
    assert(vim.wait(20000, function() return chat.current ~= first end), "no new chat")
    result.windows_same = #vim.api.nvim_tabpage_list_wins(0) == windows
    result.chat_window_reused = vim.api.nvim_win_get_buf(chat_win) == chat.sessions[chat.current].buf
    result.compose_follows = vim.b[vim.api.nvim_win_get_buf(compose.window())].goose_compose
      == chat.current
    return
  end

  if scenario == "question" then
    -- The agent's questions, answered from GOOSE_ANSWERS as a person picks and types: each
    -- prompt is recorded with what it offered; vim.ui.open records the page it is given.
    local answers = vim.json.decode(os.getenv("GOOSE_ANSWERS"))
    result.questions, result.opened = {}, {}
    vim.ui.select = function(items, opts, on_choice)
      local labels = vim.tbl_map(opts.format_item or tostring, items)
      table.insert(result.questions, { prompt = opts.prompt, items = labels })
      local wanted = table.remove(answers, 1)
      for i, label in ipairs(labels) do
        if label == wanted then return on_choice(items[i], i) end
      end
      on_choice(nil, nil)
    end
    vim.ui.input = function(opts, on_confirm)
      table.insert(result.questions, { prompt = opts.prompt })
      on_confirm(table.remove(answers, 1))
    end
    vim.ui.open = function(url)
      table.insert(result.opened, url)
      return {}, nil
    end
    vim.cmd("Goose send Ask me")
    assert(vim.wait(30000, function() return #ends > 0 end), "the turn did not end")
    result.text = chat_text()
    return
  end

  if scenario == "plans" then
    -- Plans, a compaction, tool names and a title, as the scripted turn sends them.
    vim.cmd("Goose send Plan it")
    assert(vim.wait(30000, function() return #ends > 0 end), "the turn did not end")
    result.text = chat_text()
    result.name = vim.api.nvim_buf_get_name(chat.sessions[chat.current].buf)
    return
  end

  if scenario == "subagents" then
    -- A subagent's block: folded with zc from a line inside it, the agent's own answer after
    -- it left open.
    vim.cmd("Goose send Count with a subagent")
    assert(vim.wait(30000, function() return #ends > 0 end), "the turn did not end")
    result.text = chat_text()
    chat.show(chat.current)
    local win = chat.window(chat.current)
    local lines = vim.api.nvim_buf_get_lines(chat.sessions[chat.current].buf, 0, -1, false)
    local function row_of(text)
      for n, line in ipairs(lines) do
        if line:find(text, 1, true) then return n end
      end
    end
    result.heading_row = row_of("### 🤖 Subagent (")
    result.inside_row = row_of("There are 3 files.")
    result.parent_row = row_of("The subagent counted 3.")
    vim.api.nvim_win_call(win, function()
      result.open_before = vim.fn.foldclosed(result.inside_row)
      vim.api.nvim_win_set_cursor(win, { result.inside_row, 0 })
      vim.cmd("normal! zc")
      result.fold_start = vim.fn.foldclosed(result.inside_row)
      result.fold_end = vim.fn.foldclosedend(result.inside_row)
      result.parent_folded = vim.fn.foldclosed(result.parent_row)
    end)
    return
  end

  if scenario == "steer" or scenario == "steer_refused" then
    -- A message written while a turn runs waits in the queue; :Goose now sends it into
    -- that turn (or says why the agent cannot take it).
    result.notified = {}
    local notify = vim.notify
    vim.notify = function(message, ...) ---@diagnostic disable-line: duplicate-set-field
      table.insert(result.notified, message)
      return notify(message, ...)
    end
    vim.cmd("Goose send Refactor the parser")
    assert(vim.wait(20000, function()
      return chat.current and chat_text():find("Working on it.", 1, true) ~= nil
    end), "the turn is not under way")
    local s = chat.sessions[chat.current]
    vim.cmd("Goose send Keep the old name as an alias")
    assert(vim.wait(10000, function() return #s.queue == 1 end), "the message is not queued")
    result.text_queued = chat_text()
    vim.cmd("Goose now")
    if scenario == "steer_refused" then
      assert(vim.wait(10000, function() return #result.notified > 0 end), "nothing said")
      result.queued_after_refusal = #s.queue
      vim.cmd("Goose cancel")
    end
    assert(vim.wait(30000, function() return #ends >= 2 end), "the turns did not end")
    result.text = chat_text()
    result.queued = #s.queue
    result.statusline = goose.statusline()
    return
  end

  if scenario == "ask" then vim.cmd("Goose add") end
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
  result.text = chat_text()
  result.filetype = vim.bo[s.buf].filetype
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == s.buf then
      -- The deepest fold of the chat: none where no subagent ran (code in answers is indented).
      result.deepest_fold = 0
      vim.api.nvim_win_call(win, function()
        for lnum = 1, vim.api.nvim_buf_line_count(s.buf) do
          result.deepest_fold = math.max(result.deepest_fold, vim.fn.foldlevel(lnum))
        end
      end)
    end
  end
  result.statusline = goose.statusline()

  if scenario == "permission" then
    -- History a resumed chat replays: the agent's own <context ref> wrapping, and goose-ls's
    -- heading over a fenced block for agents without embedded context.
    local root = goose.root()
    local uri = vim.uri_from_fname(root .. "/app.py")
    chat.on_update({
      sessionId = "resumed",
      index = 1,
      messageId = vim.NIL,
      replay = true,
      update = {
        sessionUpdate = "user_message_chunk",
        content = {
          type = "text",
          text = 'Why?\n<context ref="' .. uri .. '#L8-L12">\ndef f():\n    pass\n</context>',
        },
      },
    })
    chat.on_update({
      sessionId = "resumed",
      index = 2,
      messageId = vim.NIL,
      replay = true,
      update = {
        sessionUpdate = "user_message_chunk",
        content = { type = "text", text = root .. "/app.py:1-2\n```py\ndef add(x, y):\n```" },
      },
    })
    result.resumed_text = chat_text("resumed")
    -- The session picker: title, date, where it is open.
    goose.sessions()
    assert(vim.wait(10000, function() return result.sessions ~= nil end), "no session list")
    return
  end

  if scenario == "option" then
    -- Each two picks (option, value) set one option; wait for each to be set.
    result.set = {}
    local notify = vim.notify
    vim.notify = function(message, ...) ---@diagnostic disable-line: duplicate-set-field
      if message:find(" = ", 1, true) then table.insert(result.set, message) end
      return notify(message, ...)
    end
    for round = 1, #pick / 2 do
      vim.cmd("Goose option")
      assert(vim.wait(10000, function() return #result.set == round end), "option " .. round .. " not set")
    end
    return
  end

  if scenario == "cancel" then
    vim.cmd("checkhealth goose_ls")
    result.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    return
  end

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
  -- The answer comes after every event it sent again: all of them are handled by now.
  assert(vim.wait(10000, function() return replayed end), "no replay answer")
  result.text_after_replay = chat_text()
end)

if not ok then result.error = tostring(err) end
finish()
