-- Text the agent controls, made inert before the chat, a prompt or a buffer name shows it.
-- goose-ls forwards the agent's raw text (docs/protocol.md), so what would act instead of
-- being read is neutralised here, as goose-ls's goose_ls/inert.py does for its own views:
-- C0 and C1 controls (ESC starts terminal sequences; OSC 52 writes the clipboard), DEL,
-- `\r` (overwrites a line with a forged one), bidirectional controls (reorder a line),
-- zero-width and invisible characters (hide text), and the Unicode line and paragraph
-- separators are each shown as their escape (`\x1b`, `\u202e`). A zero-width joiner
-- between two emoji stays (👩‍💻). And a line of agent text that begins as the plugin's own
-- lines do (a speaker's heading, a tool, permission or question line) is led by a
-- backslash, so it cannot pass for one of them.
local M = {}

local SHORT = { ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }

--- The code point of a UTF-8 sequence of 1 to 3 bytes.
local function code_point(char)
  local a, b, c = char:byte(1, 3)
  if not b then return a end
  if not c then return (a % 32) * 64 + b % 64 end
  return (a % 16) * 4096 + (b % 64) * 64 + c % 64
end

local function escaped(char)
  if SHORT[char] then return SHORT[char] end
  local code = code_point(char)
  return code < 0x100 and string.format("\\x%02x", code) or string.format("\\u%04x", code)
end

--- Whether the UTF-8 text around ``at`` (the byte before) ends with an emoji, or (after)
--- starts with one: four-byte symbols, U+2600–27BF, and the emoji variation selector.
local function emoji_before(text, at)
  local lead = text:sub(math.max(at - 3, 1), at)
  return lead:match("[\240-\244][\128-\191][\128-\191][\128-\191]$") ~= nil
    or lead:match("\226[\152-\158][\128-\191]$") ~= nil
    or lead:match("\239\184\143$") ~= nil
end
local function emoji_after(text, at)
  local rest = text:sub(at, at + 3)
  return rest:match("^[\240-\244]") ~= nil or rest:match("^\226[\152-\158]") ~= nil
end

-- Multi-byte characters that act or hide, by their UTF-8 bytes (no other character's bytes
-- can match: each pattern starts with a lead byte).
local WIDE = {
  "\194[\128-\159\173]", -- C1 controls, soft hyphen
  "\216\156", -- U+061C arabic letter mark
  "\225\160\142", -- U+180E mongolian vowel separator
  "\226\128[\139-\143\168-\174]", -- U+200B–200F, U+2028–202E
  "\226\129[\160-\164\166-\169]", -- U+2060–2064, U+2066–2069
  "\239\187\191", -- U+FEFF
}

local function neutralise(text, controls)
  text = text:gsub(controls, escaped)
  for _, pattern in ipairs(WIDE) do
    text = text:gsub("()(" .. pattern .. ")()", function(from, char, to)
      if char == "\226\128\141" and emoji_before(text, from - 1) and emoji_after(text, to) then
        return char -- a joiner inside one emoji
      end
      return escaped(char)
    end)
  end
  return text
end

--- A block of agent text (a reply, a tool's output) inert; newlines and tabs kept.
function M.block(text)
  return neutralise(tostring(text or ""), "[%z\1-\8\11-\31\127]")
end

--- One line of agent text (a title, a label, a name, a question) inert, its newlines and
--- tabs escaped too: it cannot start a line of its own.
function M.line(text)
  return neutralise(tostring(text or ""), "[%z\1-\31\127]")
end

-- How the plugin's own lines begin (goose_ls.transcript, tools, permissions, elicitation,
-- plans): a line of agent text beginning so is escaped. "## <speaker>" is checked apart.
local OWN = { "# ", "🔧", "🔐", "❓", "📎", "🖼", "⚠", "💾", "_", "**Plan**", "> 💭", "> ⚠", "> 📋", "### 🤖" }

--- How much of a line decides whether it imitates (a heading with a long name too).
M.decides = 200

--- A line as markdown shows it: up to three spaces of indent dropped, `>x` read as `> x`.
local function as_shown(line)
  local indent = #line:match("^ *")
  if indent <= 3 then line = line:sub(indent + 1) end
  if line:sub(1, 1) == ">" and line:sub(2, 2) ~= " " then line = "> " .. line:sub(2) end
  return line
end

--- Whether a line (its beginning) reads as one of the plugin's own: ``speakers`` are the
--- names the chat heads turns with ("You", the agent's).
function M.imitates(line, speakers)
  line = as_shown(line)
  for _, opener in ipairs(OWN) do
    if line:sub(1, #opener) == opener then return true end
  end
  if line:sub(1, 3) == "## " then
    local name = line:sub(4)
    for _, speaker in ipairs(speakers or {}) do
      if #speaker > 0 and name:sub(1, #speaker) == speaker then return true end
    end
  end
  return false
end

--- A whole text's lines, each escaped if it imitates (text that comes in one piece).
function M.lines(text, speakers)
  local out = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    table.insert(out, M.imitates(line, speakers) and ("\\" .. line) or line)
  end
  return table.concat(out, "\n")
end

return M
