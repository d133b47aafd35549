#!/usr/bin/env bash
# Refresh docs/editors/helix-edit.txt: a real Helix in tmux with goose-ls and the scripted
# agent, which changes app.py on disk itself (as Claude Code and Codex do); "Goose: Ask
# about selection" on app.py, the question sent, then the screen once the turn has ended
# and app.py's buffer has been brought along. Uses $HX when set, else `hx` from PATH, else
# the one scripts/fetch-debian-editors.sh fetches. Needs tmux and the project's .venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
editors="${GOOSE_LS_EDITORS:-$HOME/.cache/goose-ls/editors}"
hx="${HX:-$(command -v hx || true)}"
if [ -z "$hx" ]; then
  [ -x "$editors/bin/hx" ] || "$root/scripts/fetch-debian-editors.sh" hx >/dev/null
  hx="$editors/bin/hx"
fi
work="$(mktemp -d)"
session="goose-capture-helix-edit-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT
workspace="$work/projects/calc"
mkdir -p "$workspace" "$work/config/helix"
git init -q "$workspace"
cat > "$workspace/app.py" <<'PY'
def add(x, y):
    return x + y


def mean(values):
    total = 0
    for value in values:
        total += value
    return total / len(values)
PY
python="$root/.venv/bin/python"
"$python" - "$work" "$workspace/app.py" <<'PY'
import json, sys
from pathlib import Path
from goose_ls.scripted.script import replace_in_file
edit = replace_in_file(Path(sys.argv[2]), "total / len(values)", "total / max(len(values), 1)")
turn = [{"text": "An empty list divides by zero; `max` keeps the divisor at 1.\n\n", "chunks": 8},
        {"toolCall": {"toolCallId": "t1", "title": "Edit app.py", "kind": "edit"}},
        {**edit, "quiet": True},
        {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
        {"text": "Done: `mean([])` is 0 now.", "chunks": 4}]
(Path(sys.argv[1]) / "script.json").write_text(json.dumps({"turns": [turn]}))
PY
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
tmux new-session -d -s "$session" -x 120 -y 46 \
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
for _ in $(seq 300); do grep -qs "lifecycle: workspace" "$work/logs/goose-ls.log" && break; sleep 0.1; done
sleep 0.5
tmux send-keys -t "$session" 5 G x x x x x # mean(), lines 5-9
for _ in $(seq 20); do
  tmux send-keys -t "$session" Space a
  for _ in $(seq 30); do
    screen | grep -q "Goose: Ask about selection\|No configured language server" && break
    sleep 0.1
  done
  screen | grep -q "Goose: Ask about selection" && break
  sleep 0.5 # Helix had not yet taken in what goose-ls can do; ask again
done
wait_for "Goose: Ask about selection"
tmux send-keys -t "$session" Enter # the first action
wait_for "## You ✎"
sleep 0.5
tmux send-keys -t "$session" i
wait_for " INS "
tmux send-keys -t "$session" -l "Guard mean against an empty list."
tmux send-keys -t "$session" Escape
sleep 0.3
tmux send-keys -t "$session" ":"
sleep 0.3
tmux send-keys -t "$session" -l "lsp-workspace-command goose.send"
tmux send-keys -t "$session" Enter
for _ in $(seq 300); do grep -qs "finished (end_turn)" "$work/logs/goose-ls.log" && break; sleep 0.1; done
wait_for "max(len(values), 1)"
wait_for "your buffer"
previous=""
for _ in $(seq 50); do
  sleep 0.3
  current="$(screen)"
  [ "$current" = "$previous" ] && break
  previous="$current"
done
screen | sed -e 's/[[:space:]]*$//' > "$root/docs/editors/helix-edit.txt"
echo "wrote docs/editors/helix-edit.txt"
