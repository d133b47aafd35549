#!/usr/bin/env bash
# Fetch a real VS Code for the browser tests (tests/test_vscode_browser.py), pinned, from
# npm, installing nothing globally:
# - code-server (VS Code served to a browser), built for this machine's node: its npm
#   package's own install script would download ripgrep and argon2's binary from outside
#   npm, so the steps are done here instead, with argon2 and VS Code's native modules
#   built from source (a C++ compiler, make and node's headers). Debian's ripgrep is used
#   when it is installed (search and Go to File need it; nothing here does);
# - playwright-core, to drive the system's Chromium (it downloads no browser);
# - @vscode/vsce, to package the extension as a .vsix.
#
#   scripts/fetch-vscode.sh
#
# DEST is $GOOSE_LS_VSCODE, or ~/.cache/goose-ls/vscode; the tests look there too. It
# holds DEST/bin/code-server, DEST/bin/vsce and DEST/lib/playwright-core. Once a pinned
# version is there, nothing is downloaded again. Needs node 20 (code-server 4.100's),
# npm and the npm registry. The browser is Debian's: apt-get install chromium.
set -euo pipefail
dest="${GOOSE_LS_VSCODE:-$HOME/.cache/goose-ls/vscode}"
code_server=4.100.3
playwright=1.65.1
vsce=3.9.2
npm_install=(npm install --prefer-offline --no-audit --no-fund --silent)
mkdir -p "$dest/bin" "$dest/lib"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != 20 ]; then
  echo "code-server $code_server runs on node 20, not $(node --version)" >&2
  exit 1
fi

# code-server, as its postinstall.sh would leave it.
prefix="$dest/code-server-$code_server"
if [ ! -e "$prefix/complete" ]; then
  rm -rf "$prefix.partial"
  "${npm_install[@]}" --ignore-scripts --prefix "$prefix.partial" "code-server@$code_server"
  (cd "$prefix.partial" && npm_config_build_from_source=true npm rebuild --silent argon2)
  vscode="$prefix.partial/node_modules/code-server/lib/vscode"
  (
    cd "$vscode"
    "${npm_install[@]}" --ignore-scripts --omit=dev
    npm rebuild --silent @vscode/spdlog native-watchdog
    # node-pty builds, then its own postinstall wants node-gyp from the registry for
    # a compile_commands.json; the terminal needs only what was built.
    npm rebuild --silent node-pty >/dev/null 2>&1 || true
    [ -f node_modules/node-pty/build/Release/pty.node ] || {
      echo "node-pty did not build" >&2
      exit 1
    }
    ln -sfn node_modules node_modules.asar
    ln -sfn code-linux.sh bin/remote-cli/code-server
    ln -sfn browser-linux.sh bin/helpers/browser.sh
    (cd extensions && "${npm_install[@]}" --ignore-scripts --omit=dev)
  )
  touch "$prefix.partial/complete"
  rm -rf "$prefix"
  mv "$prefix.partial" "$prefix"
fi
ripgrep="$prefix/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin"
if [ ! -e "$ripgrep/rg" ] && command -v rg >/dev/null 2>&1; then
  mkdir -p "$ripgrep" && ln -sfn "$(command -v rg)" "$ripgrep/rg"
fi
cat > "$dest/bin/code-server" <<EOF
#!/bin/sh
exec node "$prefix/node_modules/code-server/out/node/entry.js" "\$@"
EOF
chmod +x "$dest/bin/code-server"

# fetch PACKAGE VERSION: install it into DEST/NAME-VERSION unless it is there.
fetch() {
  local package="$1" version="$2" prefix
  prefix="$dest/${package##*/}-$version"
  if [ ! -e "$prefix/node_modules/$package/package.json" ]; then
    rm -rf "$prefix.partial"
    "${npm_install[@]}" --prefix "$prefix.partial" "$package@$version"
    rm -rf "$prefix"
    mv "$prefix.partial" "$prefix"
  fi
  echo "$prefix/node_modules"
}
modules="$(fetch playwright-core "$playwright")"
ln -sfn "$modules/playwright-core" "$dest/lib/playwright-core"
modules="$(fetch @vscode/vsce "$vsce")"
ln -sfn "$modules/.bin/vsce" "$dest/bin/vsce"
"$dest/bin/code-server" --version | head -n 1
echo "$dest"
