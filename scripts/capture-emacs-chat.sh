#!/usr/bin/env bash
# Refresh docs/editors/emacs-chat.txt: a real `emacs -nw` in tmux, goose-ls.el over eglot,
# a scripted turn. Needs tmux, emacs-nox and elpa-eglot (Debian), and the project's .venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
session="goose-capture-emacs-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/workspace"
git init -q "$work/workspace"
printf 'def add(x, y):\n    return x + y\n' > "$work/workspace/app.py"
python="$root/.venv/bin/python"
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
  {"text": "`add` returns the sum of its two arguments.\n\nIt works for anything with `+`: numbers, strings, lists.", "chunks": 25, "delay": 0.02}
]]}
JSON
load_path=(-L "$root/editors/emacs")
for dir in /usr/share/emacs/site-lisp/elpa/eglot-*; do [ -d "$dir" ] && load_path+=(-L "$dir"); done
export GOOSE_CMD="[\"$python\", \"-m\", \"goose_ls\"]"
export GOOSE_INIT="{\"agent\": {\"command\": [\"$python\", \"-m\", \"goose_ls.scripted\", \"$work/script.json\"]}, \"dataDir\": \"$work/data\"}"
export GOOSE_DONE="$work/done"
export GOOSE_LS_LOG_DIR="$work/logs" HOME="$work"
# The scripted agent runs from this checkout, its script and record in $work: its sandbox
# shows it both.
export GOOSE_LS_AGENT_SANDBOX_READABLE="[\"$root\"]" GOOSE_LS_AGENT_SANDBOX_WRITABLE="[\"$work\"]"
cd "$work/workspace"
tmux new-session -d -s "$session" -x 110 -y 28 \
  "emacs -nw -Q ${load_path[*]} -l $root/scripts/capture-emacs-chat.el"
for _ in $(seq 300); do [ -e "$GOOSE_DONE" ] && break; sleep 0.1; done
[ -e "$GOOSE_DONE" ] || { tmux capture-pane -p -t "$session" >&2; echo "the turn did not end" >&2; exit 1; }
tmux capture-pane -p -t "$session" | sed -e 's/[[:space:]]*$//' > "$root/docs/editors/emacs-chat.txt"
echo "wrote docs/editors/emacs-chat.txt"
