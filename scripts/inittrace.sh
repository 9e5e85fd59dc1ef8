#!/bin/bash
# inittrace.sh BINARY [N]: the package initialisation of BINARY, from N runs
# (default 40) of `BINARY version` under GODEBUG=inittrace=1: the number of
# packages, the median over runs of the total init clock, and each package's
# median clock, largest first. docs/performance.md ("CGI and FastCGI") gives
# the package count it reports; on a busy machine compare two binaries run one
# after the other, not with another day's figures.
set -euo pipefail
bin=$1
n=${2:-40}
for i in $(seq "$n"); do
	GODEBUG=inittrace=1 "$bin" version 2>&1 >/dev/null | awk -v r="$i" '$1 == "init" {print r, $2, $5}'
done | python3 -c '
import sys, statistics, collections
per = collections.defaultdict(list)
total = collections.defaultdict(float)
for line in sys.stdin:
    run, pkg, ms = line.split()
    per[pkg].append(float(ms))
    total[run] += float(ms)
rows = sorted(((statistics.median(v), p) for p, v in per.items()), reverse=True)
print("packages: %d, median total init clock %.2f ms, sum of per-package medians %.2f ms" % (len(per), statistics.median(total.values()), sum(m for m, _ in rows)))
for m, p in rows:
    print("%7.3f ms  %s" % (m, p))
'
