#!/usr/bin/env bash
# test-engines.sh runs make test's go test in two passes (issue 17), under the
# throwaway PostgreSQL cluster scripts/pg.sh runs:
#
#   1. every package on SQLite (the tests that compare the engines side by
#      side run on both here: db, catalog's search, the commands);
#   2. again on PostgreSQL (STACKS_TEST_ENGINES=postgres): every package whose
#      tests get their databases from db/dbtest or demo/demotest (the domain
#      packages, the staff and patrons' sites, the browser suite), found from
#      the test imports, so a new package joins by using them.
#
# Both passes run even when the first fails, and the script fails if either
# did. Arguments go to both go test commands (-race, -count=1, -timeout).
set -euo pipefail

GO=${GO:-go}

pass() {
	local name=$1
	shift
	local start=$SECONDS
	printf '== go test on %s ==\n' "$name"
	if "$@"; then
		printf '== %s: passed in %d s ==\n' "$name" $((SECONDS - start))
		return 0
	fi
	printf '== %s: FAILED after %d s ==\n' "$name" $((SECONDS - start))
	return 1
}

pkgs=$("$GO" list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
	awk '/ github.com\/stacks-ils\/stacks\/(db\/dbtest|demo\/demotest)( |$)/ {print $1}')
[[ -n $pkgs ]] || {
	echo "test-engines.sh: found no package whose tests use db/dbtest or demo/demotest" >&2
	exit 1
}

status=0
pass SQLite "$GO" test "$@" ./... || status=1
# shellcheck disable=SC2086 # one package a word
pass PostgreSQL env STACKS_TEST_ENGINES=postgres "$GO" test "$@" $pkgs || status=1
exit $status
