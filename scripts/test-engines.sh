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
# Three lanes run side by side, each one thing after another:
#
#   - every package but the browser suite on SQLite;
#   - the browser suite (e2e) on SQLite, then on PostgreSQL;
#   - FIRST, if set (make test's checks: gofmt, vet, staticcheck, the templ
#     check), then every package but the browser suite on PostgreSQL.
#
# The PostgreSQL pass of the packages follows the checks, not the SQLite pass,
# so that it does not wait for the SQLite pass's longest tests; by the time the
# checks end, the SQLite pass has compiled most of the test binaries both passes
# share (a binary not yet in Go's cache may be compiled by both). Without FIRST
# it follows the SQLite pass in the first lane.
#
# One after another they left a core idle a third of the time: the browser
# tests mostly wait for Chromium, the servers they start and the network latency
# they emulate, the other packages' tests for PostgreSQL and their own servers,
# while the checks keep both cores busy compiling
# (docs/performance.md, "The test suite"). The lanes in the background print
# their output when all have ended, after the first lane's, so that none
# interleave.
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

out=$(mktemp -d "${TMPDIR:-/tmp}/test-engines.XXXXXX")
lanes=()
cleanup() {
	for l in "${lanes[@]}"; do
		kill -TERM "$l" 2>/dev/null || true
		wait "$l" 2>/dev/null || true
	done
	rm -rf "$out"
}
trap cleanup EXIT

# lanepass is pass for a lane in the background: the output of its command goes
# to a file of its own, added to the lane's file ($1) when it ends. A TERM (from
# the trap above) stops the command.
lanepass() {
	local file=$1 name=$2
	shift 2
	local start=$SECONDS status=0
	"$@" >"$file.pass" 2>&1 &
	child=$!
	wait "$child" || status=1
	child=
	{
		printf '== %s ==\n' "$name"
		cat "$file.pass"
		if [[ $status == 0 ]]; then
			printf '== %s: passed in %d s ==\n' "$name" $((SECONDS - start))
		else
			printf '== %s: FAILED after %d s ==\n' "$name" $((SECONDS - start))
		fi
	} >>"$file"
	rm -f "$file.pass"
	return $status
}

browserlane() {
	local status=0
	lanepass "$out/browser" "go test on SQLite (the browser suite)" "$GO" test "$@" "$browser" || status=1
	if [[ -n $pgbrowser ]]; then
		lanepass "$out/browser" "go test on PostgreSQL (the browser suite)" env STACKS_TEST_ENGINES=postgres "$GO" test "$@" "${pgflags[@]}" "$browser" || status=1
	fi
	return $status
}

checkslane() {
	local status=0
	lanepass "$out/checks" "$FIRST" bash -c "$FIRST" || status=1
	pgpass "$out/checks" "$@" || status=1
	return $status
}

# pgpass runs the PostgreSQL pass of every package but the browser suite, in a
# lane (its file $1).
pgpass() {
	local file=$1
	shift
	[[ -n $pgrest ]] || return 0
	# shellcheck disable=SC2086 # one package a word
	lanepass "$file" "go test on PostgreSQL (all but the browser suite)" env STACKS_TEST_ENGINES=postgres "$GO" test "$@" "${pgflags[@]}" $pgrest
}

# startlane runs a lane function in the background, its output in $out/NAME.
startlane() {
	local name=$1
	shift
	: >"$out/$name"
	(
		child=
		trap '[[ -z $child ]] || kill -TERM "$child" 2>/dev/null; exit 143' TERM
		"$@"
	) &
	lanes+=($!)
}

startlane browser browserlane "$@"
if [[ -n ${FIRST:-} ]]; then
	startlane checks checkslane "$@"
fi

status=0
# shellcheck disable=SC2086 # one package a word
pass "go test on SQLite (all but the browser suite)" "$GO" test "$@" $rest || status=1
if [[ -z ${FIRST:-} && -n $pgrest ]]; then
	# shellcheck disable=SC2086
	pass "go test on PostgreSQL (all but the browser suite)" env STACKS_TEST_ENGINES=postgres "$GO" test "$@" "${pgflags[@]}" $pgrest || status=1
fi
start=$SECONDS
for i in "${!lanes[@]}"; do
	wait "${lanes[$i]}" || status=1
done
lanes=()
printf '== the other lanes, waited for %d s after this one ==\n' $((SECONDS - start))
cat "$out/checks" 2>/dev/null || true
cat "$out/browser"
exit $status
