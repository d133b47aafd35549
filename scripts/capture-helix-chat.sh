#!/usr/bin/env bash
# Refresh docs/editors/helix-chat.txt: a real Helix in tmux with goose-ls and the scripted
# agent; "Goose: Explain selection" from the code actions on app.py, then the screen once
# the turn has ended and the transcript is still. Uses $HX when set, else `hx` from PATH, else
# the one scripts/fetch-debian-editors.sh fetches (run here when none is found); for example
# HX=~/.cache/goose-ls/editors/bin/hx-25.07 for Helix 25.07. Needs tmux and the project's .venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
editors="${GOOSE_LS_EDITORS:-$HOME/.cache/goose-ls/editors}"
hx="${HX:-$(command -v hx || true)}"
if [ -z "$hx" ]; then
  [ -x "$editors/bin/hx" ] || "$root/scripts/fetch-debian-editors.sh" hx >/dev/null
  hx="$editors/bin/hx"
fi
work="$(mktemp -d)"
session="goose-capture-helix-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT
workspace="$work/projects/calc"
mkdir -p "$workspace" "$work/config/helix"
git init -q "$workspace"
printf 'def add(x, y):\n    return x + y\n' > "$workspace/app.py"
python="$root/.venv/bin/python"
cat > "$work/script.json" <<'JSON'
{"turns": [[
  {"thought": "A small pure function.", "chunks": 3},
  {"toolCall": {"toolCallId": "t1", "title": "read · app.py", "rawInput": {"path": "app.py"}}},
  {"toolUpdate": {"toolCallId": "t1", "status": "in_progress"}},
  {"toolUpdate": {"toolCallId": "t1", "status": "completed",
                  "content": [{"type": "content", "content": {"type": "text", "text": "def add(x, y):\n    return x + y"}}]}},
  {"text": "`add` returns the sum of its two arguments.\n\nNothing surprising: it works for anything with `+`, numbers, strings or lists.", "chunks": 25, "delay": 0.02}
]]}
JSON
# The setup of docs/editors/helix.md, with goose-ls run from this checkout.
cat > "$work/config/helix/languages.toml" <<TOML
[language-server.goose-ls]
command = "$python"
args = ["-m", "goose_ls"]
config = { agent = { command = ["$python", "-m", "goose_ls.scripted", "$work/script.json"] }, dataDir = "$work/data" }

[[language]]
name = "python"
language-servers = ["goose-ls"]

[[language]]
name = "markdown"
language-servers = ["goose-ls"]
TOML
cat > "$work/config/helix/config.toml" <<'TOML'
[editor.soft-wrap]
enable = true
TOML
cd "$workspace"
tmux new-session -d -s "$session" -x 120 -y 34 \
  -e HOME="$work" -e XDG_CONFIG_HOME="$work/config" -e GOOSE_LS_LOG_DIR="$work/logs" \
  -e GOOSE_LS_AGENT_SANDBOX_READABLE="[\"$root\", \"$work/script.json\"]" \
  "$hx app.py"
screen() { tmux capture-pane -p -t "$session"; }
wait_for() {
  for _ in $(seq 300); do screen | grep -q "$1" && return 0; sleep 0.1; done
  screen >&2
  echo "gave up waiting for: $1" >&2
  exit 1
}
wait_for "app.py"
# goose-ls logs the workspace when it answers initialize; ask for code actions after that.
for _ in $(seq 300); do grep -qs "lifecycle: workspace" "$work/logs/goose-ls.log" && break; sleep 0.1; done
sleep 0.5
tmux send-keys -t "$session" x x # select both lines
for _ in $(seq 20); do
  tmux send-keys -t "$session" Space a
  for _ in $(seq 30); do
    screen | grep -q "Goose: Explain selection\|No configured language server" && break
    sleep 0.1
  done
  screen | grep -q "Goose: Explain selection" && break
  sleep 0.5 # Helix had not yet taken in what goose-ls can do; ask again
done
wait_for "Goose: Explain selection"
tmux send-keys -t "$session" Down Enter # the second action
# goose-ls logs the turn's end (Helix's spinner stops then).
for _ in $(seq 300); do grep -qs "finished (end_turn)" "$work/logs/goose-ls.log" && break; sleep 0.1; done
# The last edits of the transcript can land just after it: wait for a still screen.
previous=""
for _ in $(seq 50); do
  sleep 0.3
  current="$(screen)"
  [ "$current" = "$previous" ] && break
  previous="$current"
done
screen | sed -e 's/[[:space:]]*$//' > "$root/docs/editors/helix-chat.txt"
echo "wrote docs/editors/helix-chat.txt"
