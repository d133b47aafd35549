#!/usr/bin/env bash
# Fetch editors that Debian bookworm lacks, from Debian's own archive, without installing
# anything: Helix 25.01 (hx) and Neovim 0.10 from trixie, Helix 25.07 (hx-25.07) from sid,
# Emacs 30 from bookworm-backports. Each is unpacked under DEST and started by a wrapper in
# DEST/bin: hx, hx-25.07, nvim-0.10, emacs-30. trixie's and sid's programs need their own
# C library (glibc 2.39 or newer); the wrappers run them with that suite's dynamic loader
# and libraries, which leaves the system's alone.
#
#   scripts/fetch-debian-editors.sh [hx] [hx-25.07] [nvim] [emacs]     (default: all four)
#
# DEST is $GOOSE_LS_EDITORS, or ~/.cache/goose-ls/editors; the tests look there too.
# Needs apt-get and dpkg-deb (any Debian or Ubuntu), and the network to deb.debian.org.
set -euo pipefail
dest="${GOOSE_LS_EDITORS:-$HOME/.cache/goose-ls/editors}"
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(hx hx-25.07 nvim emacs)
mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/bin"
cat > "$dest/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-backports main
deb http://deb.debian.org/debian trixie main
deb http://deb.debian.org/debian sid main
EOF
apt=(-o "Dir::Etc::SourceList=$dest/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$dest/apt/lists" -o "Dir::Cache=$dest/apt/cache"
  -o APT::Sandbox::User=root -qq)
apt-get "${apt[@]}" update

# unpack NAME PACKAGE/SUITE...: download the packages and unpack them into $dest/NAME.
unpack() {
  local name="$1"
  shift
  rm -rf "$dest/$name" "$dest/debs"
  mkdir -p "$dest/$name" "$dest/debs"
  (cd "$dest/debs" && apt-get "${apt[@]}" download "$@")
  for deb in "$dest"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dest/$name"
    dpkg-deb -f "$deb" Package Version | paste -sd' ' >> "$dest/$name/VERSIONS"
  done
  rm -rf "$dest/debs"
}

# A wrapper that runs a trixie (or sid) program with that suite's loader and C library.
trixie_wrapper() {
  local root="$1" program="$2" wrapper="$3" env="$4"
  cat > "$wrapper" <<EOF
#!/bin/sh
${env}exec "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" "$root/$program" "\$@"
EOF
  chmod +x "$wrapper"
}

for editor in "${wanted[@]}"; do
  case "$editor" in
    hx)
      unpack hx hx/trixie libc6/trixie libgcc-s1/trixie
      trixie_wrapper "$dest/hx" usr/lib/hx/hx "$dest/bin/hx" \
        "HELIX_RUNTIME=\"\${HELIX_RUNTIME:-$dest/hx/usr/lib/hx/runtime}\" export HELIX_RUNTIME; "
      ;;
    hx-25.07)
      # sid, not trixie: Helix 25.07 has not reached a stable suite; `hx` stays 25.01.
      unpack hx-25.07 hx/sid libc6/sid libgcc-s1/sid
      trixie_wrapper "$dest/hx-25.07" usr/lib/hx/hx "$dest/bin/hx-25.07" \
        "HELIX_RUNTIME=\"\${HELIX_RUNTIME:-$dest/hx-25.07/usr/lib/hx/runtime}\" export HELIX_RUNTIME; "
      ;;
    nvim)
      unpack nvim-0.10 neovim/trixie neovim-runtime/trixie libc6/trixie libgcc-s1/trixie \
        libluajit-5.1-2/trixie libluajit-5.1-common/trixie libmsgpack-c2/trixie \
        libtree-sitter0.22/trixie libunibilium4/trixie libuv1t64/trixie libvterm0/trixie \
        lua-lpeg/trixie lua-luv/trixie
      trixie_wrapper "$dest/nvim-0.10" usr/bin/nvim "$dest/bin/nvim-0.10" \
        "VIMRUNTIME=\"$dest/nvim-0.10/usr/share/nvim/runtime\" export VIMRUNTIME; "
      ;;
    emacs)
      # Built for bookworm: only libtree-sitter0 is missing next to Debian's emacs-nox 28.
      unpack emacs-30 emacs-nox/bookworm-backports emacs-bin-common/bookworm-backports \
        emacs-common/bookworm-backports libtree-sitter0/bookworm
      root="$dest/emacs-30"
      version="$(basename "$(echo "$root"/usr/share/emacs/[0-9]*)")"
      libexec="$(echo "$root/usr/libexec/emacs/$version"/*-linux-gnu)"
      cat > "$dest/bin/emacs-30" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" \\
EMACSLOADPATH="$root/usr/share/emacs/$version/lisp" \\
EMACSDATA="$root/usr/share/emacs/$version/etc" EMACSDOC="$root/usr/share/emacs/$version/etc" \\
EMACSPATH="$libexec" \\
  exec "$root/usr/bin/emacs-nox" --dump-file="$(echo "$libexec"/emacs-*.pdmp)" "\$@"
EOF
      chmod +x "$dest/bin/emacs-30"
      ;;
    *)
      echo "unknown editor: $editor (hx, hx-25.07, nvim or emacs)" >&2
      exit 2
      ;;
  esac
done
rm -rf "$dest/apt"
"$dest/bin/hx" --version 2>/dev/null || true
"$dest/bin/hx-25.07" --version 2>/dev/null || true
"$dest/bin/nvim-0.10" --version 2>/dev/null | head -1 || true
"$dest/bin/emacs-30" --version 2>/dev/null | head -1 || true
