#!/usr/bin/env bash
# pg-standby-check.sh runs docs/deploy.md's consortium recipe ("A consortium:
# several servers on PostgreSQL") for real on this machine, with Debian's
# PostgreSQL binaries, lighttpd and a stacks binary, and fails loudly at the
# first step that does not do what the page says:
#
#   1. a primary cluster; the role and database for Stacks, a replication role
#      and a physical replication slot; stacks migrate --db;
#   2. a streaming standby made with pg_basebackup -R -X stream -S (it writes
#      standby.signal and primary_conninfo itself); the standby is in recovery,
#      the primary lists it in pg_stat_replication and its slot is active;
#   3. stacks writes on the primary (stacks demo, a small library; stacks user
#      add) appear on the standby, which refuses a write of its own; a
#      multi-host URL with target_session_attrs=read-write picks the primary
#      even when the standby is listed first;
#   4. two stacks serve processes behind lighttpd's mod_proxy (the page's
#      balancer configuration), and stacks load through the balancer: desks
#      check out and in, no errors;
#   5. failover: the primary stops as a crash would (pg_ctl stop -m immediate),
#      the standby is promoted (pg_ctl promote), the servers are started again
#      with --db pointed at it, and they serve writes again through the balancer;
#   6. stacks backup --db on the new primary writes a pg_dump archive that
#      pg_restore --list reads.
#
# Everything lives in a new temporary directory: both clusters listen on Unix
# sockets there only (no TCP port), the servers and lighttpd on 127.0.0.1 with
# free ports. Every step is bounded by a timeout, and the directory, the
# clusters and every process are removed however the script ends. About a
# minute on a quiet machine (most of it building stacks and the demo library).
#
#   scripts/pg-standby-check.sh             builds stacks from this tree
#   STACKS=bin/stacks scripts/pg-standby-check.sh   uses that binary
#   KEEP=1 ...                              keeps the directory for a look
set -euo pipefail

log() { printf 'pg-standby-check: %s\n' "$*" >&2; }
die() {
	printf 'pg-standby-check: FAILED: %s\n' "$*" >&2
	exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[[ -n $bin && -x $bin/initdb && -x $bin/pg_basebackup ]] ||
	die "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin: bash scripts/pg.sh install"
command -v lighttpd >/dev/null || die "lighttpd not found (Debian: apt-get install lighttpd)"
command -v pg_restore >/dev/null || die "pg_restore not found (Debian: apt-get install postgresql-client)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stacks-standby.XXXXXX")
chmod 0755 "$tmp"
pids=()
cleanup() {
	local status=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for c in primary standby; do
		[[ -f $tmp/$c/postmaster.pid ]] && as_owner "$bin/pg_ctl" -D "$tmp/$c" -m immediate stop >/dev/null 2>&1 || true
	done
	if [[ -n ${KEEP:-} ]]; then
		log "kept $tmp"
	else
		rm -rf "$tmp"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# PostgreSQL refuses to run as root: the clusters run as postgres then.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}
if [[ $(id -u) -eq 0 ]]; then
	id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /usr/sbin/nologin postgres
fi
mkdir -p "$tmp/sock-primary" "$tmp/sock-standby" "$tmp/log"
[[ $(id -u) -ne 0 ]] || chown postgres: "$tmp" "$tmp/sock-primary" "$tmp/sock-standby"

stacks=${STACKS:-}
if [[ -z $stacks ]]; then
	log "building stacks"
	(cd "$root" && timeout 600 go build -o "$tmp/stacks" ./cmd/stacks) || die "go build ./cmd/stacks failed"
	stacks=$tmp/stacks
fi
stacks=$(realpath "$stacks")

# psql as the superuser made by initdb (stacks-admin) on cluster $1.
sql() {
	local sock=$tmp/sock-$1
	shift
	timeout 30 psql -X -q -At -h "$sock" -p 5432 -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}
url() { echo "postgres://stacks@/stacks?host=$tmp/sock-$1&port=5432&sslmode=disable"; }
start_cluster() {
	as_owner "$bin/pg_ctl" -D "$tmp/$1" -l "$tmp/$1.log" -w -t 60 \
		-o "-c listen_addresses='' -c unix_socket_directories='$tmp/sock-$1' -c port=5432" start >/dev/null ||
		{ cat "$tmp/$1.log" >&2; die "the $1 cluster did not start (its log is above)"; }
}

# 1. The primary: PostgreSQL's defaults already allow streaming replication
# (wal_level replica, max_wal_senders 10, max_replication_slots 10). Local
# connections are trusted here; on real hosts pg_hba.conf has the host lines of
# docs/deploy.md.
log "1. primary: initdb, roles, database, replication slot, stacks migrate"
as_owner "$bin/initdb" -D "$tmp/primary" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$tmp/log/initdb.log" 2>&1 ||
	{ cat "$tmp/log/initdb.log" >&2; die "initdb failed"; }
start_cluster primary
sql primary -c "CREATE ROLE stacks LOGIN" \
	-c "CREATE ROLE replicator WITH REPLICATION LOGIN" \
	-c "CREATE DATABASE stacks OWNER stacks" \
	-c "SELECT pg_create_physical_replication_slot('standby1')" >/dev/null
timeout 60 "$stacks" migrate --db "$(url primary)" >"$tmp/log/migrate.log" 2>&1 ||
	{ cat "$tmp/log/migrate.log" >&2; die "stacks migrate on the primary failed"; }

# 2. The standby, from a base backup that streams the WAL it needs (-X stream)
# through the slot (-S) and writes the standby's settings (-R).
log "2. standby: pg_basebackup -R -X stream -S standby1 -c fast, then start it"
as_owner timeout 300 "$bin/pg_basebackup" -h "$tmp/sock-primary" -p 5432 -U replicator \
	-D "$tmp/standby" -R -X stream -S standby1 -c fast >"$tmp/log/basebackup.log" 2>&1 ||
	{ cat "$tmp/log/basebackup.log" >&2; die "pg_basebackup failed or took over 300 s (its output, if any, is above)"; }
[[ -f $tmp/standby/standby.signal ]] || die "pg_basebackup -R wrote no standby.signal"
grep -q "primary_conninfo = '.*user=replicator" "$tmp/standby/postgresql.auto.conf" ||
	die "pg_basebackup -R wrote no primary_conninfo with user=replicator: $(cat "$tmp/standby/postgresql.auto.conf")"
grep -q "primary_slot_name = 'standby1'" "$tmp/standby/postgresql.auto.conf" ||
	die "pg_basebackup -R -S wrote no primary_slot_name"
start_cluster standby
[[ $(sql standby -c "SELECT pg_is_in_recovery()") == t ]] || die "the standby is not in recovery"
for _ in $(seq 60); do
	state=$(sql primary -c "SELECT state FROM pg_stat_replication WHERE usename = 'replicator'")
	[[ $state == streaming ]] && break
	sleep 0.5
done
[[ $state == streaming ]] || die "the primary lists no streaming standby (pg_stat_replication: '$state')"
[[ $(sql primary -c "SELECT active FROM pg_replication_slots WHERE slot_name = 'standby1'") == t ]] ||
	die "the replication slot standby1 is not active"

# 3. Writes through stacks on the primary appear on the standby.
log "3. stacks demo and stacks user add on the primary; the standby replays them and refuses writes"
timeout 120 "$stacks" demo --db "$(url primary)" --titles 200 --patrons 100 >"$tmp/log/demo.log" 2>&1 ||
	{ cat "$tmp/log/demo.log" >&2; die "stacks demo on the primary failed"; }
STACKS_PASSWORD=standby-check-1 timeout 60 "$stacks" user add --db "$(url primary)" --username clerk9 --name "Clerk Nine" \
	--branch CEN >"$tmp/log/user-add.log" 2>&1 || { cat "$tmp/log/user-add.log" >&2; die "stacks user add on the primary failed"; }
lsn=$(sql primary -c "SELECT pg_current_wal_lsn()")
for _ in $(seq 60); do
	[[ $(sql standby -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn") == t ]] && break
	sleep 0.5
done
count() { timeout 30 psql -X -At -h "$tmp/sock-$1" -p 5432 -U stacks -d stacks -c "$2"; }
p=$(count primary "SELECT count(*) FROM patrons")
s=$(count standby "SELECT count(*) FROM patrons")
[[ $p -gt 0 && $p == "$s" ]] || die "patrons: $p on the primary, $s on the standby"
[[ $(count standby "SELECT count(*) FROM staff_users WHERE username = 'clerk9'") == 1 ]] ||
	die "the staff account added on the primary is not on the standby"
log "   $p patrons and the new staff account on both"
# The standby refuses writes: a stacks write there fails, it does not fork the data.
if STACKS_PASSWORD=standby-check-2 timeout 60 "$stacks" user add --db "$(url standby)" --username clerk10 --name "Clerk Ten" \
	--branch CEN >"$tmp/log/user-add-standby.log" 2>&1; then
	die "stacks user add on the standby succeeded: a standby must refuse writes"
fi
grep -q "read-only transaction" "$tmp/log/user-add-standby.log" ||
	{ cat "$tmp/log/user-add-standby.log" >&2; die "stacks user add on the standby failed, but not as a read-only standby would"; }
# With both hosts in the URL and target_session_attrs=read-write, pgx connects
# to the one that takes writes, whichever is listed first.
both="postgres://stacks@/stacks?host=$tmp/sock-standby,$tmp/sock-primary&port=5432,5432&target_session_attrs=read-write&sslmode=disable"
timeout 60 "$stacks" migrate --db "$both" >"$tmp/log/migrate-both.log" 2>&1 ||
	{ cat "$tmp/log/migrate-both.log" >&2; die "stacks migrate with a multi-host read-write URL failed"; }

# 4. Two servers behind lighttpd's mod_proxy.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p1=$(free_port)
p2=$(free_port)
pb=$(free_port)
serve() { # serve DBURL
	"$stacks" serve --db "$1" --addr "127.0.0.1:$p1" --log-level warn >>"$tmp/log/serve1.log" 2>&1 &
	s1=$!
	"$stacks" serve --db "$1" --addr "127.0.0.1:$p2" --log-level warn >>"$tmp/log/serve2.log" 2>&1 &
	s2=$!
	pids+=("$s1" "$s2")
	for port in "$p1" "$p2"; do
		for _ in $(seq 100); do
			curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && continue 2
			sleep 0.2
		done
		cat "$tmp/log/serve1.log" "$tmp/log/serve2.log" >&2
		die "stacks serve on 127.0.0.1:$port did not answer /healthz"
	done
}
stop_servers() {
	kill "$s1" "$s2"
	wait "$s1" "$s2" 2>/dev/null || true
}
cat >"$tmp/lighttpd.conf" <<EOF
server.document-root = "$tmp"
server.bind = "127.0.0.1"
server.port = $pb
server.errorlog = "$tmp/log/lighttpd.log"
server.modules += ( "mod_proxy" )
proxy.balance = "fair"
proxy.forwarded = ( "for" => 1, "proto" => 1 )
proxy.server = ( "" => (
    ( "host" => "127.0.0.1", "port" => $p1 ),
    ( "host" => "127.0.0.1", "port" => $p2 ),
) )
EOF
lighttpd -tt -f "$tmp/lighttpd.conf" >"$tmp/log/lighttpd-test.log" 2>&1 ||
	{ cat "$tmp/log/lighttpd-test.log" >&2; die "lighttpd refuses the configuration"; }
lighttpd -D -f "$tmp/lighttpd.conf" >>"$tmp/log/lighttpd.log" 2>&1 &
pids+=($!)

through_balancer() { # through_balancer DBURL what
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$pb/healthz" >/dev/null && break
		sleep 0.2
	done
	timeout 120 "$stacks" load --target "http://127.0.0.1:$pb" --db "$1" --users 4 --think 0 --count 40 \
		--json "$tmp/log/load-$2.json" >"$tmp/log/load-$2.log" 2>&1 ||
		{ cat "$tmp/log/load-$2.log" >&2; die "stacks load through lighttpd ($2) failed"; }
	python3 - "$tmp/log/load-$2.json" <<'PY' || { cat "$tmp/log/load-$2.log" >&2; die "stacks load through lighttpd ($2): errors or no transactions"; }
import json, sys
r = json.load(open(sys.argv[1]))
ops = r["operations"]
sys.exit(0 if sum(o["errors"] for o in ops.values()) == 0 and ops["check-out"]["count"] > 0 and ops["check-in"]["count"] > 0 else 1)
PY
}
log "4. two stacks serve on the primary behind lighttpd (mod_proxy); stacks load through it"
serve "$(url primary)"
through_balancer "$(url primary)" before

# 5. Failover.
log "5. failover: the primary stops as in a crash; pg_ctl promote; the servers move to the new primary"
loans=$(timeout 30 psql -X -At -h "$tmp/sock-primary" -p 5432 -U stacks -d stacks -c "SELECT count(*) FROM loans")
as_owner "$bin/pg_ctl" -D "$tmp/primary" -m immediate stop >/dev/null
as_owner "$bin/pg_ctl" -D "$tmp/standby" -w -t 60 promote >/dev/null || die "pg_ctl promote failed"
[[ $(sql standby -c "SELECT pg_is_in_recovery()") == f ]] || die "the promoted standby is still in recovery"
[[ $(timeout 30 psql -X -At -h "$tmp/sock-standby" -p 5432 -U stacks -d stacks -c "SELECT count(*) FROM loans") == "$loans" ]] ||
	die "the promoted standby does not have the primary's last loans"
stop_servers
serve "$(url standby)"
through_balancer "$(url standby)" after

# 6. Backups on the new primary.
log "6. stacks backup on the new primary; pg_restore --list reads it"
timeout 120 "$stacks" backup --db "$(url standby)" "$tmp/stacks.dump" >"$tmp/log/backup.log" 2>&1 ||
	{ cat "$tmp/log/backup.log" >&2; die "stacks backup failed"; }
pg_restore --list "$tmp/stacks.dump" | grep -q "TABLE DATA public loans" || die "the backup has no loans table data"

log "OK: standby, balancer, failover and backup behave as docs/deploy.md says"
