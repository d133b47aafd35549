#!/usr/bin/env bash
# Fetch the real ACP agents the second-agent tests run (tests/test_second_agent*.py), pinned,
# from npm, installing nothing globally: codex-acp (Codex's ACP adapter, a native program
# shipped as per-platform optional npm packages).
#
#   scripts/fetch-agents.sh
#
# DEST is $GOOSE_LS_AGENTS, or ~/.cache/goose-ls/agents; the tests look there too. The
# program is linked as DEST/bin/codex-acp: the native one, not npm's node launcher, so that
# a signal from goose-ls reaches the agent itself. Once the pinned version is there, nothing
# is downloaded again. Needs node and npm, and the npm registry (or npm's cache).
set -euo pipefail
dest="${GOOSE_LS_AGENTS:-$HOME/.cache/goose-ls/agents}"
package="@zed-industries/codex-acp"
version="0.16.0"

prefix="$dest/codex-acp-$version"
platform="$(node -p 'process.platform + "-" + process.arch')"
native="$prefix/node_modules/$package-$platform/bin/codex-acp"
if [ ! -x "$native" ]; then
  rm -rf "$prefix.partial"
  npm install --prefix "$prefix.partial" --prefer-offline --no-audit --no-fund --silent \
    "$package@$version"
  rm -rf "$prefix"
  mv "$prefix.partial" "$prefix"
fi
[ -x "$native" ] || { echo "no codex-acp for $platform in $package@$version" >&2; exit 1; }
mkdir -p "$dest/bin"
ln -sfn "$native" "$dest/bin/codex-acp"
echo "$dest/bin/codex-acp"
