#!/usr/bin/env bash
# page-statements.sh prints how many SQL statements each page of both sites
# runs (the sql count of its Server-Timing header), for one or more revisions
# side by side:
#
#   scripts/page-statements.sh [REV...]     (default: the working tree)
#
# For each revision, stacks is built (scripts/build.sh) from a temporary
# checkout, started on loopback with a new demo library (serve --demo), and
# asked once for every GET route of the tables in docs/security.md ("Every GET
# of the staff site", "... of the patrons' site"), as the demo's admin on the
# staff site and as the demo patron P0001 on the patrons' site, each page after
# a first request that warms the caches of a running server. {id} is 1, {slug}
# a standard report, and a search asks for "the". The table is Markdown, a row a route; "-" where a
# revision's site does not have the route (404).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

revs=("$@")
[[ ${#revs[@]} -gt 0 ]] || revs=(WORKTREE)
work=$(mktemp -d "${TMPDIR:-/tmp}/page-statements.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for r in "${revs[@]}"; do
		[[ $r == WORKTREE ]] || git worktree remove --force "$work/src-$r" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

routes() { # site heading -> paths
	awk -v h="$1" '/^#/ {in_ = index($0, h) > 0; next} in_ && /^\| `GET / {print}' docs/security.md |
		sed -E 's/^\| `GET ([^`]+)`.*/\1/' | grep -v -E '^/(static|metrics)' |
		sed -E 's/\{slug\}/overdue/; s/\{[a-z]+\}/1/g; s/\*$//; s#^/search$#/search?q=the#'
}
staff=$(routes "Every GET of the staff site")
patron=$(routes "Every GET of the patrons' site")

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

count() { # curl args... -> the sql count, or - on 404
	local h
	h=$(curl -s -o /dev/null -D - "$@" | tr -d '\r')
	if grep -q '^HTTP/[0-9.]* 404' <<<"$h"; then echo -; return; fi
	sed -n 's/^[Ss]erver-[Tt]iming:.*sql;desc="\([0-9]*\)".*/\1/p' <<<"$h" | head -1
}

for r in "${revs[@]}"; do
	src=.
	if [[ $r != WORKTREE ]]; then
		src=$work/src-$r
		git worktree add --detach -q "$src" "$r"
	fi
	(cd "$src" && sh scripts/build.sh "$work/stacks-$r" >/dev/null)
	port=$(freeport) oport=$(freeport)
	mkdir -p "$work/data-$r"
	(cd "$work/data-$r" && exec "$work/stacks-$r" serve --demo --addr "127.0.0.1:$port" --opac-addr "127.0.0.1:$oport" \
		--notices=false >"$work/log-$r" 2>&1) &
	pids+=($!)
	for _ in $(seq 600); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && curl -sf -o /dev/null "http://127.0.0.1:$oport/healthz" && break
		sleep 0.1 # polling a server's start, not ordering events under test
	done
	jar=$work/jar-$r ojar=$work/ojar-$r
	curl -s -o /dev/null -c "$jar" -b "$jar" -H 'Sec-Fetch-Site: same-origin' -H "Origin: http://127.0.0.1:$port" \
		--data 'username=admin&password=admin&branch=CEN' "http://127.0.0.1:$port/login"
	curl -s -o /dev/null -c "$ojar" -b "$ojar" -H 'Sec-Fetch-Site: same-origin' -H "Origin: http://127.0.0.1:$oport" \
		--data 'card=P0001&pin=1234' "http://127.0.0.1:$oport/signin"
	: >"$work/counts-$r"
	for p in $staff; do
		args=(-b "$jar" -H 'Sec-Fetch-Site: same-origin' "http://127.0.0.1:$port$p")
		count "${args[@]}" >/dev/null
		printf 'staff %s\t%s\n' "$p" "$(count "${args[@]}")" >>"$work/counts-$r"
	done
	for p in $patron; do
		args=(-b "$ojar" -H 'Sec-Fetch-Site: same-origin' "http://127.0.0.1:$oport$p")
		count "${args[@]}" >/dev/null
		printf 'patrons %s\t%s\n' "$p" "$(count "${args[@]}")" >>"$work/counts-$r"
	done
done

cat <<'DOC'
# Statements per page

Every GET route of the staff site and of the patrons' site (the tables of
docs/security.md), asked once of a running demo server after a first request
that warms its caches: the SQL statements the page ran (its Server-Timing
`sql` count). Staff pages as the demo's `admin`, the patrons' pages as patron
`P0001`; `{id}` is 1, so a route whose object 1 the demo library does not have
answers 404, shown as "-". Written by `make page-statements BASE=<revision>`
(scripts/page-statements.sh), which puts that revision's counts beside the
working tree's (WORKTREE).

DOC
printf '| page |'; for r in "${revs[@]}"; do printf ' %s |' "$r"; done; echo
printf '|---|'; for _ in "${revs[@]}"; do printf -- '---:|'; done; echo
cut -f1 "$work/counts-${revs[0]}" | while read -r site path; do
	printf '| %s `%s` |' "$site" "$path"
	for r in "${revs[@]}"; do
		printf ' %s |' "$(awk -F'\t' -v k="$site $path" '$1 == k {print $2}' "$work/counts-$r")"
	done
	echo
done
