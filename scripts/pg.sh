#!/usr/bin/env bash
# pg.sh runs a throwaway PostgreSQL cluster for the tests, from Debian's
# packages:
#
#   scripts/pg.sh run CMD [ARG...]   start a cluster, run CMD with
#                                    STACKS_TEST_POSTGRES set to its URL, stop
#                                    and delete the cluster however CMD ends;
#                                    exits with CMD's status
#   scripts/pg.sh start              start one and print the lines to export
#                                    (for running go test by hand)
#   scripts/pg.sh stop DIR           stop and delete the cluster in DIR
#   scripts/pg.sh install            install PostgreSQL if it is missing
#
# `make test` runs the whole `go test ./...` under `pg.sh run`: one cluster for
# the run, and each test that wants PostgreSQL gets a fresh database copied from
# a migrated template (db/pgtest). A go test run without STACKS_TEST_POSTGRES
# starts one per test process with `pg.sh start` and stops it with `pg.sh stop`
# (db/pgtest), so their output lines are an interface.
#
# The cluster lives in a new temporary directory, listens on a Unix socket in
# that directory only (no TCP port at all), trusts local connections, and runs
# as the postgres user when started by root (PostgreSQL refuses to run as root).
# fsync, synchronous_commit and full_page_writes are off: TEST-ONLY settings
# that make a crash lose or corrupt the data, which is thrown away anyway.
# PG_DURABLE=1 turns all three on (PostgreSQL's defaults: a commit is on disk
# when acknowledged), for measurements that compare with SQLite's durable
# default (stacks load --suite starts its cluster so). max_connections is 400
# either way: enough for the load suite's pool sweep, two servers with 64 write
# and 64 read connections each (256), beside the tests' own. shared_buffers is
# 64 MB, enough for the tests' small databases; PG_SHARED_BUFFERS sets another
# size (for measurements: docs/deploy.md advises one that holds the catalogue).
set -euo pipefail

log() { printf 'pg.sh: %s\n' "$*" >&2; }
die() {
	printf 'pg.sh: ERROR: %s\n' "$*" >&2
	exit 1
}

START_WAIT=${PG_START_WAIT:-60}

# bindir finds initdb and pg_ctl: PG_BINDIR, else the newest of Debian's.
bindir() {
	if [[ -n ${PG_BINDIR:-} ]]; then
		[[ -x $PG_BINDIR/initdb ]] || die "PG_BINDIR=$PG_BINDIR has no initdb"
		echo "$PG_BINDIR"
		return
	fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	[[ -n $d && -x $d/initdb ]] && echo "$d"
}

install() {
	if [[ -n $(bindir) ]]; then
		log "postgresql: $(bindir) present"
		return
	fi
	log "installing Debian's postgresql (about a minute)"
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null 2>&1 ||
			die "not root and no sudo: install PostgreSQL by hand with 'apt-get update && apt-get install -y --no-install-recommends postgresql', then run again"
		sudo=(sudo)
	fi
	command -v apt-get >/dev/null 2>&1 ||
		die "apt-get not found: install PostgreSQL (initdb and pg_ctl) and set PG_BINDIR to their directory"
	"${sudo[@]}" apt-get update -qq ||
		die "apt-get update failed: check that the Debian mirrors are reachable, then run again"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql ||
		die "apt-get install postgresql failed (see above); fix apt, then run again"
	[[ -n $(bindir) ]] || die "postgresql was installed but no /usr/lib/postgresql/*/bin/initdb exists"
	log "installed: $(bindir)"
}

# as_owner runs a command as the cluster's owner: postgres when we are root.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# start creates and starts a cluster and prints its directory.
start() {
	install
	local bin dir
	bin=$(bindir)
	if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /usr/sbin/nologin postgres ||
			die "could not create the postgres user to run the server as (PostgreSQL refuses to run as root)"
	fi
	dir=$(mktemp -d "${TMPDIR:-/tmp}/stacks-pg.XXXXXX")
	chmod 0755 "$dir"
	[[ $(id -u) -ne 0 ]] || chown postgres: "$dir"
	as_owner "$bin/initdb" -D "$dir/data" -U stacks --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		rm -rf "$dir"
		die "initdb failed (its output is above)"
	}
	# Test-only settings unless PG_DURABLE=1: see the top of this file.
	local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	[[ ${PG_DURABLE:-} != 1 ]] || durability="-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
	as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t "$START_WAIT" \
		-o "-c listen_addresses='' -c unix_socket_directories='$dir' -c port=5432 $durability -c max_connections=400 -c shared_buffers=${PG_SHARED_BUFFERS:-64MB}" \
		start >/dev/null || {
		log "the server did not start within ${START_WAIT}s; its log:"
		cat "$dir/server.log" >&2 || true
		as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
		rm -rf "$dir"
		die "PostgreSQL did not start (log above)"
	}
	echo "$dir"
}

url() { echo "postgres://stacks@/postgres?host=$1&port=5432&sslmode=disable"; }

stop() {
	local dir=$1 bin
	[[ -d $dir/data ]] || die "$dir holds no cluster"
	bin=$(bindir)
	as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null ||
		as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null || true
	rm -rf "$dir"
}

case ${1:-} in
run)
	shift
	(($# > 0)) || die "usage: scripts/pg.sh run CMD [ARG...]"
	dir=$(start)
	trap 'stop "$dir"' EXIT
	trap 'exit 130' INT TERM
	log "PostgreSQL running in $dir"
	status=0
	STACKS_TEST_POSTGRES=$(url "$dir") "$@" || status=$?
	exit "$status"
	;;
start)
	dir=$(start)
	echo "export STACKS_TEST_POSTGRES='$(url "$dir")'"
	echo "# stop it with: scripts/pg.sh stop $dir"
	;;
stop)
	[[ -n ${2:-} ]] || die "usage: scripts/pg.sh stop DIR"
	stop "$2"
	;;
install)
	install
	;;
*)
	die "usage: scripts/pg.sh run CMD [ARG...] | start | stop DIR | install"
	;;
esac
