#!/usr/bin/env bash
# Fetch the real ACP agents the end-to-end tests run (tests/test_second_agent*.py,
# tests/test_claude_agent.py), pinned, from npm, installing nothing globally:
# - codex-acp (Codex's ACP adapter, a native program shipped as per-platform optional npm
#   packages), linked as DEST/bin/codex-acp: the native one, not npm's node launcher, so
#   that a signal from goose-ls reaches the agent itself;
# - claude-agent-acp (Claude Code's ACP adapter, a node program; the Claude Code it runs is
#   a native program in a per-platform optional package of @anthropic-ai/claude-agent-sdk),
#   linked as DEST/bin/claude-agent-acp. Node 22 is what it asks for; it runs on 20.
#
#   scripts/fetch-agents.sh
#
# DEST is $GOOSE_LS_AGENTS, or ~/.cache/goose-ls/agents; the tests look there too. Once a
# pinned version is there, nothing is downloaded again. Needs node and npm, and the npm
# registry (or npm's cache). Each agent is fetched apart: one failing leaves the other.
set -euo pipefail
dest="${GOOSE_LS_AGENTS:-$HOME/.cache/goose-ls/agents}"
platform="$(node -p 'process.platform + "-" + process.arch')"
failed=0

# first PREFIX GLOB: the first file under PREFIX that GLOB names, if any.
first() { compgen -G "$1/$2" | head -n 1 || true; }

# fetch NAME PACKAGE VERSION PROGRAM [NEEDED...]: install PACKAGE@VERSION into
# DEST/NAME-VERSION unless PROGRAM and every NEEDED (globs under it) are there; then link
# PROGRAM as DEST/bin/NAME.
fetch() {
  local name="$1" package="$2" version="$3"
  shift 3
  local prefix="$dest/$name-$version" glob missing=""
  for glob in "$@"; do [ -n "$(first "$prefix" "$glob")" ] || missing=1; done
  if [ -n "$missing" ]; then
    rm -rf "$prefix.partial"
    npm install --prefix "$prefix.partial" --prefer-offline --no-audit --no-fund --silent \
      "$package@$version" || return 1
    rm -rf "$prefix"
    mv "$prefix.partial" "$prefix"
  fi
  for glob in "$@"; do
    local found
    found="$(first "$prefix" "$glob")"
    if [ -z "$found" ] || [ ! -x "$found" ]; then
      echo "no $glob for $platform in $package@$version" >&2
      return 1
    fi
  done
  mkdir -p "$dest/bin"
  ln -sfn "$(first "$prefix" "$1")" "$dest/bin/$name"
  echo "$dest/bin/$name"
}

fetch codex-acp @zed-industries/codex-acp 0.16.0 \
  "node_modules/@zed-industries/codex-acp-$platform/bin/codex-acp" || failed=1
# The adapter, and the Claude Code it runs (the glibc or the musl build).
fetch claude-agent-acp @agentclientprotocol/claude-agent-acp 0.101.0 \
  "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js" \
  "node_modules/@anthropic-ai/claude-agent-sdk-$platform*/claude" || failed=1
exit "$failed"
