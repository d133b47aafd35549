#!/usr/bin/env bash
# Refresh docs/editors/vscode-chat.md: the markdown document that the VS Code extension's
# chat model (editors/vscode/src/chat.ts, compiled) makes of a scripted turn that a real
# goose-ls served. Needs node and npm, and the project's .venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(
  cd "$root/editors/vscode"
  [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
  npm run --silent compile
)
mkdir -p "$work/projects/calc"
printf 'def add(x, y):\n    return x + y\n' > "$work/projects/calc/app.py"
cat > "$work/script.json" <<'JSON'
{"turns": [[
  {"thought": "A small pure function.", "chunks": 3},
  {"toolCall": {"toolCallId": "t1", "title": "read · app.py", "rawInput": {"path": "app.py"}}},
  {"toolUpdate": {"toolCallId": "t1", "status": "in_progress"}},
  {"toolUpdate": {"toolCallId": "t1", "status": "completed",
                  "content": [{"type": "content", "content": {"type": "text", "text": "def add(x, y):\n    return x + y"}}]}},
  {"toolCall": {"toolCallId": "t2", "title": "shell · python -m pytest -q"}},
  {"toolUpdate": {"toolCallId": "t2", "status": "completed",
                  "content": [{"type": "content", "content": {"type": "text", "text": "3 passed in 0.01s"}}]}},
  {"text": "`add` returns the sum of its two arguments.\n\nIt works for anything with `+`: numbers, strings, lists.", "chunks": 25}
]]}
JSON
# The scripted agent runs from this checkout, its script in $work: its sandbox shows it both.
GOOSE_LS_AGENT_SANDBOX_READABLE="[\"$root\", \"$work\"]" \
  "$root/.venv/bin/python" "$root/scripts/record-goose-events.py" \
  "$work/script.json" "$work/projects/calc/app.py" "$work/events.jsonl"
node "$root/scripts/render-vscode-chat.js" "$root/editors/vscode/out/src/chat.js" \
  "$work/events.jsonl" "$work/projects/calc" > "$root/docs/editors/vscode-chat.md"
echo "wrote docs/editors/vscode-chat.md"
