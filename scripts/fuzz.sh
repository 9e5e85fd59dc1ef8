#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module (each `func FuzzX(f *testing.F)` in
# a _test.go file), one after another, each for the same budget:
#
#   scripts/fuzz.sh BUDGET
#
# BUDGET is -fuzztime: a count of inputs ("10000x"). A duration ("10m") works too,
# but with go1.26 it can fail a target with a bare "context deadline exceeded" at
# the deadline although nothing crashed (golang/go#75804, fixed in go1.27), so the
# Makefile passes counts.
#
# The corpus each target grows (inputs that reached new code, minimized) is kept
# where `go test -fuzz` keeps it, $GOCACHE/fuzz/<package>, so short and long runs
# build on each other; each run first runs all of it again ("gathering baseline
# coverage"). Tried and dropped: an empty corpus for every run, to make make
# test's time independent of earlier runs. From the seeds alone nearly every input
# is new, and minimizing them (the whole-file MARC seeds above all) cost more than
# the baseline of a kept corpus (FuzzReadISO2709: 83 s instead of 8 to 17 s for
# 10,000 inputs on the shared machine), which stops growing once the parsers' code
# is covered (under 350 inputs a target here). `go clean -fuzzcache` empties it.
# A crasher is written to testdata/fuzz/FuzzX/ in the package, where `go test`
# runs it as a seed from then on.
#
# Each package's instrumented test binary is built once (`go test -c -fuzz`) and
# run for each of its targets, instead of `go test -fuzz` linking it again per target.
# FUZZ_MIN (default 1000x) is -fuzzminimizetime; FUZZ_TARGETS, a regular expression
# matched against "dir FuzzX", picks targets (FUZZ_TARGETS=marc). Exits 1 if any
# target failed.
set -euo pipefail

budget=${1:?usage: scripts/fuzz.sh BUDGET}
GO=${GO:-go}
minimize=${FUZZ_MIN:-1000x}

cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/stacks-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cachedir=$($GO env GOCACHE)/fuzz

# "dir target" lines, in order.
targets=$(grep -rE --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git --exclude-dir=node_modules \
	'^func Fuzz[A-Za-z0-9_]*\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\)' . |
	sed -E 's#^\./(.*/)?[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#; s#^ #./ #; s#^([^ ]+)/ #\1 #' |
	sort | grep -E -- "${FUZZ_TARGETS:-.}" || true)
if [[ -z $targets ]]; then
	echo "fuzz.sh: no fuzz targets found (FUZZ_TARGETS='${FUZZ_TARGETS:-}')" >&2
	exit 1
fi

passed=0 failed=0 summary=""
built=""
while read -r dir target <&3; do
	bin=$work/$(echo "$dir" | tr './' '__').test
	if [[ $dir != "$built" ]]; then
		$GO test -c -fuzz . -o "$bin" "./$dir"
		built=$dir
		importpath=$($GO list "./$dir")
	fi
	echo "fuzz: $importpath $target, $budget"
	start=$SECONDS
	if (cd "$dir" && "$bin" -test.paniconexit0 -test.timeout=0 -test.run='^$' \
		-test.fuzz="^$target\$" -test.fuzztime="$budget" -test.fuzzminimizetime="$minimize" \
		-test.fuzzcachedir="$cachedir/$importpath"); then
		passed=$((passed + 1))
		result=ok
	else
		failed=$((failed + 1))
		result=FAIL
	fi
	summary+=$(printf '%-4s %4ds  %s %s' "$result" $((SECONDS - start)) "$importpath" "$target")$'\n'
done 3<<<"$targets"

printf '%s' "$summary"
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
