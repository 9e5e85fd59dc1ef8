#!/usr/bin/env bash
# desk-statements.sh BIN: what a desk transaction costs PostgreSQL, counted
# rather than timed (counts do not move with a busy machine): a durable
# throwaway cluster with pg_stat_statements, the demo library (5,000 titles),
# one `BIN serve`, then `BIN load` with USERS desks (default 40), THINK
# (default 1s) and DUR (default 30s), DESK=pages or script; prints the load
# report, the statements run, the WAL written and the rows changed per
# table, and the statements by calls. Everything listens on 127.0.0.1 and
# stops by itself; the cluster is deleted at the end.
#
#   go build -o bin/stacks ./cmd/stacks && DESK=script bash scripts/desk-statements.sh bin/stacks
set -euo pipefail
bin=$(realpath "${1:?usage: desk-statements.sh BIN}")
here=$(cd "$(dirname "$0")" && pwd)
eval "$(PG_DURABLE=1 bash "$here/pg.sh" start)"
pgdir=${STACKS_TEST_POSTGRES#*host=}
pgdir=${pgdir%%&*}
url=$STACKS_TEST_POSTGRES
pb=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
pid=
cleanup() {
	[[ -z $pid ]] || kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	bash "$here/pg.sh" stop "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$pb/psql" -qAt "$url" -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
owner=()
[[ $(id -u) -ne 0 ]] || owner=(runuser -u postgres --)
"${owner[@]}" "$pb/pg_ctl" -D "$pgdir/data" -w restart -l "$pgdir/server.log" >/dev/null
"$pb/psql" -qAt "$url" -c "CREATE EXTENSION pg_stat_statements"
"$bin" demo --db "$url" --titles 5000 --patrons 3000 >/dev/null
"$bin" serve --db "$url" --addr 127.0.0.1:${PORT:-18191} --log-level warn --metrics-allow 127.0.0.1 &
pid=$!
for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:${PORT:-18191}/healthz" >/dev/null && break
	sleep 0.2
done
"$pb/psql" -qAt "$url" -c "CHECKPOINT" -c "SELECT pg_stat_statements_reset()" \
	-c "SELECT pg_stat_reset_shared('wal')" -c "SELECT pg_stat_reset()" >/dev/null
"$bin" load --target "http://127.0.0.1:${PORT:-18191}" --db "$url" --users "${USERS:-40}" --items 3 \
	--think "${THINK:-1s}" --duration "${DUR:-30s}" --desk "${DESK:-pages}" 2>&1 | grep -v '^load:'
"$pb/psql" "$url" -c "SELECT sum(calls) AS statements FROM pg_stat_statements" \
	-c "SELECT wal_records, wal_fpi, pg_size_pretty(wal_bytes) AS wal FROM pg_stat_wal" \
	-c "SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins + n_tup_upd + n_tup_del DESC" \
	-c "SELECT calls, round(total_exec_time::numeric, 1) AS ms, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement FROM pg_stat_statements ORDER BY calls DESC LIMIT 30"
