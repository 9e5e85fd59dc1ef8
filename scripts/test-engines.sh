#!/usr/bin/env bash
# test-engines.sh runs make test's go test on both engines, under the
# throwaway PostgreSQL cluster scripts/pg.sh runs:
#
#   1. every package on SQLite (the tests that compare the engines side by
#      side run on both here: db, catalog's search, the commands);
#   2. again on PostgreSQL (STACKS_TEST_ENGINES=postgres): every package whose
#      tests get their databases from db/dbtest or demo/demotest (the domain
#      packages, the staff and patrons' sites, the browser suite), found from
#      the test imports, so a new package joins by using them.
#
# The browser suite (e2e) runs in a lane of its own, beside the rest: its
# SQLite pass, then its PostgreSQL pass, while the other lane runs every other
# package's SQLite pass, then their PostgreSQL pass. The browser tests spend
# most of their time waiting for Chromium, the servers they start and the
# network latency they emulate (the suite alone keeps under half a core busy),
# so in one go test with the others it held one of go test's two package slots
# for 8 minutes a pass with that slot's core mostly idle, and it was each
# pass's last package to finish. Beside the others it overlaps them instead
# (docs/performance.md, "The test suite"). Its output is printed when
# its lane ends, after the other lane's, so that the two do not interleave.
#
# FIRST, if set, is a command run at the head of the other lane, before its
# passes: make test's checks (gofmt, vet, staticcheck, the templ check) and
# its short fuzzing. The browser suite's lane starts at once beside it: the
# checks keep both cores busy compiling, the browser tests mostly wait, so
# the lane no longer waits for the checks to begin, and it is done sooner
# beside the passes of the other lane.
#
# Every pass runs even when another fails (the checks too), and the script
# fails if any did.
# Arguments go to every go test command (the Makefile's RACE: -race and its
# -gcflags; -count=1, -timeout).
set -euo pipefail

GO=${GO:-go}

pass() {
	local name=$1
	shift
	local start=$SECONDS
	printf '== %s ==\n' "$name"
	if "$@"; then
		printf '== %s: passed in %d s ==\n' "$name" $((SECONDS - start))
		return 0
	fi
	printf '== %s: FAILED after %d s ==\n' "$name" $((SECONDS - start))
	return 1
}

browser=github.com/stacks-ils/stacks/e2e

# pgflags give the PostgreSQL pass a test ID of its own in Go's test cache. The
# cache keeps one entry per package test binary and flags, and checks the
# environment the tests read (STACKS_TEST_ENGINES) only against that entry: with
# the same flags, each pass replaced the other's entry and every package of both
# passes ran again on every make test. -skip '^$' skips nothing (no test has an
# empty name) but is part of the test ID.
pgflags=(-skip '^$')

all=$("$GO" list ./...)
pg=$("$GO" list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
	awk '/ github.com\/stacks-ils\/stacks\/(db\/dbtest|demo\/demotest)( |$)/ {print $1}')
[[ -n $pg ]] || {
	echo "test-engines.sh: found no package whose tests use db/dbtest or demo/demotest" >&2
	exit 1
}
grep -qx "$browser" <<<"$all" || {
	echo "test-engines.sh: $browser is not among the packages" >&2
	exit 1
}
rest=$(grep -vx "$browser" <<<"$all")
pgrest=$(grep -vx "$browser" <<<"$pg" || true)
pgbrowser=$(grep -x "$browser" <<<"$pg" || true)

out=$(mktemp "${TMPDIR:-/tmp}/test-engines.XXXXXX")
lane=
cleanup() {
	if [[ -n $lane ]]; then
		kill -TERM "$lane" 2>/dev/null || true
		wait "$lane" 2>/dev/null || true
	fi
	rm -f "$out" "$out.pass"
}
trap cleanup EXIT

# lanepass is pass for the browser lane: its output goes to a file of its own,
# added to $out when it ends. A TERM (from the trap above) stops its go test.
lanepass() {
	local name=$1
	shift
	local start=$SECONDS status=0
	"$@" >"$out.pass" 2>&1 &
	child=$!
	wait "$child" || status=1
	child=
	{
		printf '== go test on %s ==\n' "$name"
		cat "$out.pass"
		if [[ $status == 0 ]]; then
			printf '== %s: passed in %d s ==\n' "$name" $((SECONDS - start))
		else
			printf '== %s: FAILED after %d s ==\n' "$name" $((SECONDS - start))
		fi
	} >>"$out"
	rm -f "$out.pass"
	return $status
}

(
	child=
	trap '[[ -z $child ]] || kill -TERM "$child" 2>/dev/null; exit 143' TERM
	status=0
	lanepass "SQLite (the browser suite)" "$GO" test "$@" "$browser" || status=1
	if [[ -n $pgbrowser ]]; then
		lanepass "PostgreSQL (the browser suite)" env STACKS_TEST_ENGINES=postgres "$GO" test "$@" "${pgflags[@]}" "$browser" || status=1
	fi
	exit $status
) &
lane=$!

status=0
if [[ -n ${FIRST:-} ]]; then
	pass "$FIRST" bash -c "$FIRST" || status=1
fi
# shellcheck disable=SC2086 # one package a word
pass "go test on SQLite (all but the browser suite)" "$GO" test "$@" $rest || status=1
if [[ -n $pgrest ]]; then
	# shellcheck disable=SC2086
	pass "go test on PostgreSQL (all but the browser suite)" env STACKS_TEST_ENGINES=postgres "$GO" test "$@" "${pgflags[@]}" $pgrest || status=1
fi
start=$SECONDS
lanestatus=0
wait "$lane" || lanestatus=$?
lane=
printf '== the browser suite'"'"'s lane, waited for %d s after the other ==\n' $((SECONDS - start))
cat "$out"
[[ $lanestatus == 0 ]] || status=1
exit $status
