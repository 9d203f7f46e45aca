#!/usr/bin/env bash
# warrant_now against one and three ewp-mcp replicas over one PostgreSQL
# ledger of 100,000 synthetic propositions (the load test's ledger, copied
# in with ewp-ingest copy). Prints the load test's lines for each run and
# the CPU the database's processes used during it (divide by the calls for
# the database's CPU per call). Needs PostgreSQL's binaries
# (/usr/lib/postgresql/*/bin); as root it runs them as the postgres user.
#
#   scripts/pgreplicas/run.sh                      # 64@2000 and 64, one then three replicas
#   LOADS=64@5000 DURATION=20s scripts/pgreplicas/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${EWP_BENCH_DIR:-${TMPDIR:-/tmp}/ewp-bench}
LOADS=${LOADS:-64@2000,64}
DURATION=${DURATION:-10s}
PORT=${PORT:-55439}
mkdir -p "$DIR"
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA="$DIR/pgreplicas-data"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

go build -o "$DIR/ewp-mcp" ./cmd/ewp-mcp
go build -o "$DIR/ewp-ingest" ./cmd/ewp-ingest
go build -o "$DIR/loadtest" ./scripts/loadtest
# the load test's ledger (built once and cached by the load test itself)
[ -f "$DIR/ledger-100000.sqlite" ] || "$DIR/loadtest" -dir "$DIR" -clients 1 -duration 1s -warmup 0s >/dev/null

rm -rf "$PGDATA"; mkdir -p "$PGDATA"
[ "$(id -u)" = 0 ] && chown postgres "$DIR" "$PGDATA"
as_pg "$BIN/initdb" -D "$PGDATA" -U postgres -A trust >/dev/null
as_pg "$BIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/log" -w \
	-o "-p $PORT -k $PGDATA -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=128MB -c fsync=off" start >/dev/null
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	as_pg "$BIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null || true
}
trap cleanup EXIT
as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres ewp
URL="postgres://postgres@127.0.0.1:$PORT/ewp?sslmode=disable"
"$DIR/ewp-ingest" copy --from "$DIR/ledger-100000.sqlite" --to "$URL"

URLS=()
for i in 0 1 2; do
	port=$((PORT + 10 + i))
	"$DIR/ewp-mcp" --db "$URL" --audit off --http "127.0.0.1:$port" 2>"$DIR/replica-$i.log" &
	PIDS+=($!)
	URLS+=("http://127.0.0.1:$port/mcp")
done
sleep 2

# dbcpu is the CPU time (seconds) of the database's processes so far.
dbcpu() {
	local pm; pm=$(head -1 "$PGDATA/postmaster.pid")
	local t=0
	for p in $pm $(pgrep -P "$pm"); do
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "scale=2; $t / 100" | bc
}

run() { # run N: drive the first N replicas
	local n=$1 urls pids
	urls=$(IFS=,; echo "${URLS[*]:0:$n}")
	pids=$(IFS=,; echo "${PIDS[*]:0:$n}")
	for load in ${LOADS//,/ }; do
		local before; before=$(dbcpu)
		echo "== $n replica(s), load $load"
		"$DIR/loadtest" -url "$urls" -pid "$pids" -clients "$load" -duration "$DURATION"
		echo "   database CPU during warm-up and run: $(echo "$(dbcpu) - $before" | bc) s"
	done
}
run 1
run 3
