#!/usr/bin/env bash
# two-server-desk.sh BIN: make load's desk-paced run on PostgreSQL with two
# servers (docs/performance.md, "Load on PostgreSQL") by hand, to see where a
# change moves it: a durable throwaway PostgreSQL cluster (PG_DURABLE=1
# scripts/pg.sh), the demo library (5,000 titles, 3,000 patrons), two fresh
# `BIN serve` on it, then
# `BIN load` with 560 desk users spread over both (3 items each, 3 s think),
# WARM (default 40s) unmeasured, then measured for DURATION (default 60s).
# WARM=0 measures the servers' first minute. RUNS (default 1) measured runs one
# after another on the same servers, each printed in full. Everything listens
# on 127.0.0.1 and stops by itself; the cluster is deleted at the end (PGLOG=FILE
# keeps its server log, which says when each checkpoint ran, in FILE). PGSET
# lists server settings to change first, for experiments: PGSET="checkpoint_timeout=1min
# wal_compression=on". DESK=script has each desk work as the desk script does
# (one request a scan; default pages: a form post and the page it leads to,
# as without JavaScript). Each run's report gives the servers' CPU and the
# checkpoints and autovacuum passes in its measured time.
#
#   go build -o bin/stacks ./cmd/stacks && bash scripts/two-server-desk.sh bin/stacks
#
# A p95 over one minute on a two-core machine shared by two servers,
# PostgreSQL and the generator moves by up to 2x between identical runs: run it
# on a quiet machine, more than once, and quote every run.
set -euo pipefail
bin=$(realpath "${1:?usage: two-server-desk.sh BIN}")
here=$(cd "$(dirname "$0")" && pwd)
warm=${WARM:-40s}
duration=${DURATION:-60s}
runs=${RUNS:-1}
desk=${DESK:-}
ports=(${PORTS:-18181 18182})

eval "$(PG_DURABLE=1 bash "$here/pg.sh" start)"
pgdir=${STACKS_TEST_POSTGRES#*host=}
pgdir=${pgdir%%&*}
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[[ -z ${PGLOG:-} ]] || cp "$pgdir/server.log" "$PGLOG" || true
	bash "$here/pg.sh" stop "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

url=$STACKS_TEST_POSTGRES
psql=$(ls /usr/lib/postgresql/*/bin/psql | tail -1)
for set in ${PGSET:-}; do
	"$psql" -qAt "$url" -c "ALTER SYSTEM SET ${set%%=*} = '${set#*=}'"
done
[[ -z ${PGSET:-} ]] || "$psql" -qAt "$url" -c "SELECT pg_reload_conf()" -c "SHOW checkpoint_timeout" -c "SHOW wal_compression"
"$bin" demo --db "$url" --titles 5000 --patrons 3000 >/dev/null
targets=
for port in "${ports[@]}"; do
	"$bin" serve --db "$url" --addr "127.0.0.1:$port" --log-level warn --metrics-allow 127.0.0.1 &
	pids+=($!)
	targets+=${targets:+,}http://127.0.0.1:$port
done
for port in "${ports[@]}"; do
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break
		sleep 0.2
	done
done
for run in $(seq "$runs"); do
	echo "== run $run, $(date -u +%T) UTC: 560 users (${desk:-pages}) on $targets, warm-up $warm, measured $duration, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	args=(load --target "$targets" --db "$url" --users 560 --items 3 --think 3s --duration "$duration"
		--server-pid "$(IFS=,; echo "${pids[*]}")")
	[[ -z $desk ]] || args+=(--desk "$desk")
	[[ $warm == 0 ]] || args+=(--warmup "$warm")
	"$bin" "${args[@]}"
	warm=0 # later runs measure servers already warm from the runs before
done
