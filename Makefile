# Stacks: build, check and test.
#
#   make test      test deps, static checks, all tests with -race, on SQLite and
#                  on a throwaway PostgreSQL (scripts/pg.sh) (packages nothing
#                  changed for come from Go's test cache); CI (.ci/run) runs it,
#                  then make fuzz-short
#   make test-fresh  the same, every package run again (make test FRESH=1)
#   make check     gofmt, go vet, staticcheck, generated templ code up to date
#   make build     the production binary in bin/stacks (scripts/build.sh, as the image)
#   make run       a server with the demo library (bin/stacks serve --demo)
#   make e2e       only the browser tests
#   make generate  regenerate *_templ.go from *.templ

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go

.PHONY: bench-cataloguing page-statements bench-import bench-db bench-demo test-fresh cgi-bench load load-quick desk-timing fuzz fuzz-short staticcheck bench bench-search bench-search-engines bench-reports bench-notices bench-oai bench-patron-import screenshots all test check fmt-check vet templ-check build run e2e generate test-deps clean

all: check build

# test lets Go's test cache work: a package's tests run again when its code, the
# code it imports, a file its tests opened (testdata, templates, the sources of the
# stacks binary the browser and hardening tests build: stackstest) or
# an environment variable they read (STACKS_SOAK, STACKS_E2E_BIN, ...) changed;
# otherwise go test prints "(cached)" and the earlier pass stands. CI starts from a
# clean clone and runs everything. Go cannot see these, so after changing one run
# make test-fresh (FRESH=1 adds -count=1, which runs every package):
#   - the programs the tests start: Chromium (/usr/bin/chromium and what it
#     loads), the Playwright driver and Node (scripts/test-deps.sh), yaz-marcdump,
#     xmllint and the go command;
#   - environment variables read only by those programs or by the stacks servers
#     the tests start (the servers inherit the environment);
#   - the clock: a test that passed today is not run again tomorrow.
# The tests run on both engines, in two passes (scripts/test-engines.sh):
# every package on SQLite, then every package whose tests take their databases
# from db/dbtest or demo/demotest again on PostgreSQL. The browser suite (e2e)
# runs its two passes in a lane of its own; the checks run in a third, followed
# there by the other packages' PostgreSQL pass, beside their SQLite pass in the
# first: each lane alone leaves a core idle
# much of the time (docs/performance.md, "The test suite"). scripts/pg.sh starts a throwaway
# PostgreSQL cluster for the whole go test run (a Unix socket in a temporary
# directory, no TCP port), exports its URL as STACKS_TEST_POSTGRES, and stops
# and deletes it when the run ends; each test that wants PostgreSQL gets its
# own database, copied from a migrated template (db/pgtest). Starting the
# cluster takes a few seconds. A plain go test (STACKS_TEST_POSTGRES unset)
# starts such a cluster itself, one per test process that asks for PostgreSQL,
# and stops it when the process ends. Its URL changes every run but is not an input of
# any test (db/pgtest reads it out of Go's test cache's sight), so it does not
# defeat the cache. The PostgreSQL pass sets STACKS_TEST_ENGINES=postgres, which
# the tests read, and a no-op flag (scripts/test-engines.sh's pgflags), so that
# the cache keeps its results apart from the SQLite pass's.
FRESH ?=
# The checks run at the head of a lane of their own beside the tests
# (scripts/test-engines.sh, FIRST; the other packages' PostgreSQL pass follows
# them there), not before the tests: the tests leave a core idle much of the
# time, the checks fill it.
test: test-deps
	GO=$(GO) FIRST='$(MAKE) --no-print-directory check' bash scripts/pg.sh run bash scripts/test-engines.sh $(RACE) $(if $(FRESH),-count=1) -timeout 20m

# RACE is make test's and make e2e's race detector: -race, but without
# instrumenting SQLite's C code translated to Go (modernc.org/sqlite/lib and
# modernc.org/libc). Instrumented, every memory access SQLite makes inside went
# through the race runtime: catalog's TestSearchRankLimit on SQLite used 56.8 s
# of CPU with it and 3 s without, and the SQLite pass spent most of its CPU
# there (docs/performance.md, "The test suite"). Our code, the standard
# library, the driver (modernc.org/sqlite itself, where our arguments and SQLite's
# results are copied) and every other module stay instrumented: a race in our
# code is found as before, also one over a query argument another goroutine
# changes (a test of that was caught with these flags, and missed with the
# driver uninstrumented too). Not looked for: a race inside SQLite's own code,
# which a cgo SQLite driver's race detector never looks at either (C is not
# instrumented). RACE=-race instruments everything (make test-fresh RACE=-race).
RACE ?= -race -gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false

test-fresh:
	$(MAKE) test FRESH=1

# fuzz-short fuzzes every fuzz target briefly, for CI after make test (.ci/run);
# make fuzz runs them long. Every target's seed corpus (its f.Add inputs and
# testdata/fuzz) already runs in make test's plain go test, so fuzz-short only
# looks a little past the seeds for a crash a change just brought in; finding the
# deep ones is make fuzz's job. It is not part of make test: it is a search, not
# a test, and its CPU is better spent on the tests (docs/performance.md, "The
# test suite").
#
# scripts/fuzz.sh finds the targets itself (a new FuzzX runs without a Makefile
# change), builds each package's fuzzing binary once, and keeps each target's
# corpus in Go's fuzz cache. Budgets are counts of inputs, never durations: with
# a duration, go1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" at the deadline although nothing crashed (golang/go#75804,
# fixed in go1.27). A count has no deadline to race; a busy machine only makes
# the run slower.
#
# FUZZ_SHORT is 5,000 inputs a target. Most of the phase's time is not those
# inputs but fixed costs: linking each package's fuzzing binary, starting the
# workers, and the baseline run over each kept corpus (a few hundred inputs a
# target).
# FUZZTIME, make fuzz's, is 600 times FUZZ_SHORT. Either can be set
# (make fuzz FUZZTIME=20000000x), and FUZZ_TARGETS=marc runs only the MARC readers.
FUZZ_SHORT ?= 5000x
FUZZTIME ?= 3000000x
fuzz-short:
	bash scripts/fuzz.sh $(FUZZ_SHORT)

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

test-deps:
	bash scripts/test-deps.sh
	bash scripts/pg.sh install

check: fmt-check vet staticcheck templ-check

fmt-check:
	@out=$$(gofmt -l .); \
	if [[ -n "$$out" ]]; then \
		echo "gofmt: these files need formatting (run gofmt -w on them):"; \
		echo "$$out"; \
		exit 1; \
	fi

# CHECKENV: vet and staticcheck compile every package for its export data; they
# do it in the production build's configuration (scripts/build.sh: CGO_ENABLED=0,
# -trimpath), so that on a cold build cache the tests' three production builds of
# stacks (cmd/stacks's TestProductionBuild, e2e's and hardening's servers) find
# the packages compiled, instead of compiling them all a second time, SQLite's
# translated C included (docs/performance.md, "The test suite"). Our code
# has no cgo files, so what the checks read of it is the same either way.
CHECKENV = CGO_ENABLED=0 GOFLAGS="$${GOFLAGS:-} -trimpath"

vet:
	$(CHECKENV) $(GO) vet ./...

# staticcheck (pinned in go.mod as a tool) finds what vet does not: unused code,
# deprecated calls, simplifications, likely bugs. staticcheck.conf would hold any
# check turned off, with the reason; none is.
staticcheck:
	$(CHECKENV) $(GO) tool staticcheck ./...

# templ-check regenerates the templ code and fails if that changed anything:
# a tracked *_templ.go that differs from the commit, or a generated file that
# is new or changed but untracked.
templ-check:
	@sums() { git ls-files --cached --others --exclude-standard -- '*_templ.go' | sort | while read -r f; do [[ ! -f "$$f" ]] || sha256sum "$$f"; done; }; \
	before=$$(sums); \
	$(GO) tool templ generate; \
	after=$$(sums); \
	if ! git diff --quiet --exit-code -- '*_templ.go' || [[ "$$before" != "$$after" ]]; then \
		echo "changed by templ generate:"; \
		{ git diff --name-only -- '*_templ.go'; diff <(echo "$$before") <(echo "$$after") | sed -n 's/^[<>] [0-9a-f]*  //p' || true; } | sort -u | sed 's/^/  /'; \
		echo "generated templ code is out of date: run go tool templ generate and commit"; \
		exit 1; \
	fi

# build and run use scripts/build.sh, as the container image and the tests do:
# one binary whoever builds it. run lists the packages as they compile: the
# first build compiles SQLite's C translated to Go, minutes of silence otherwise.
build:
	GO=$(GO) sh scripts/build.sh bin/stacks

run:
	@echo "building bin/stacks: the first build takes several minutes (SQLite compiles), later ones seconds"
	GO=$(GO) BUILD_VERBOSE=1 sh scripts/build.sh bin/stacks
	bin/stacks serve --demo

e2e: test-deps
	$(GO) test $(RACE) $(if $(FRESH),-count=1) -timeout 10m ./e2e/...

generate:
	$(GO) tool templ generate

clean:
	rm -rf bin

# screenshots runs the browser desk session and saves a picture of each step in
# docs/screenshots/ (docs/screenshot.png in the README is step 5's).
screenshots: test-deps
	mkdir -p docs/screenshots
	STACKS_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run TestDeskSession ./e2e/
	cp docs/screenshots/5-checkout-B.png docs/screenshot.png

# bench-cataloguing times a batch edit of 10,000 items in one transaction (a
# shelving location, a withdrawal, its undo) and a staged import of 10,000 MARC
# records (stage and commit) on both engines under a throwaway
# PostgreSQL cluster, matching by 035 in a catalogue of 20,000 records, and
# one copy cataloguing search per protocol against yaz-ztest
# (docs/performance.md, "Cataloguing"). Not part of make test.
bench-cataloguing:
	$(GO) test -run '^$$' -bench BatchEdit10000 -benchtime 3x -count 1 -timeout 20m ./catalog/
	GO=$(GO) bash scripts/pg.sh run env STACKS_TEST_ENGINES=postgres $(GO) test -run '^$$' -bench BatchEdit10000 -benchtime 3x -count 1 -timeout 20m ./catalog/
	$(GO) test -run '^$$' -bench StagedImport10000 -benchtime 1x -count 1 -timeout 20m ./catalog/
	GO=$(GO) bash scripts/pg.sh run env STACKS_TEST_ENGINES=postgres $(GO) test -run '^$$' -bench StagedImport10000 -benchtime 1x -count 1 -timeout 20m ./catalog/
	GO=$(GO) bash scripts/pg.sh run $(GO) test -run '^$$' -bench MatchBy035 -count 1 -timeout 20m ./catalog/
	$(GO) test -run '^$$' -bench SearchYaz -benchtime 1x -count 20 ./copycat/

# page-statements asks a demo server for every GET route of both sites (the
# tables of docs/security.md) and writes each page's SQL statement count to
# docs/page-statements.md; with BASE=<revision>, that revision's counts beside
# the working tree's (scripts/page-statements.sh). Not part of make test, whose
# tests assert the counts of the pages that matter.
BASE ?=
page-statements:
	bash scripts/page-statements.sh $(BASE) WORKTREE > docs/page-statements.md.new
	mv docs/page-statements.md.new docs/page-statements.md
	@cat docs/page-statements.md

# bench runs the desk benchmarks: checkout and checkin as service calls and through
# the HTTP handlers, with SQLite synchronous=FULL (durable) and NORMAL (no fsync).
# Not part of make test. docs/performance.md records the results.
BENCHTIME ?= 2000x
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 3 ./circulation/ ./web/

# bench-notices times the daily notices run over 100,000 loans (10,000 overdue):
# its time and SQL statements per notice, and desk checkouts alone and while it
# runs, side by side (docs/performance.md). About a minute; not part of make test.
bench-notices:
	$(GO) test -run '^$$' -bench BenchmarkDailyRun -benchtime 1x -count 1 -timeout 20m -v ./notices/

# bench-patron-import times patron loads: 10,000 new patrons from one
# CSV file, a school's yearly update of 6,000 students matched by student id, and
# 100 PINs at bcrypt's real cost; each reports rows/s, how long the one write
# transaction held the write connection, and the slowest write of a desk writing
# every 10 ms meanwhile. Results: docs/performance.md.
# bench-import exports a 20,000-title demo catalogue as MARC and imports it;
# bench-db times durable writes with and without group commit; bench-demo
# creates the default demo library (docs/performance.md).
bench-import:
	$(GO) test -run '^$$' -bench BenchmarkImport -benchtime 3x -timeout 20m ./catalog/

bench-db:
	$(GO) test -run '^$$' -bench BenchmarkDurableWrites -benchtime 2s -timeout 20m ./db/

bench-demo:
	$(GO) test -run '^$$' -bench BenchmarkCreate -timeout 20m ./demo/

bench-patron-import:
	$(GO) test -run '^$$' -bench BenchmarkLoad -benchtime 1x -count 3 -timeout 20m ./patrons/

# bench-search times catalogue search on a 100,000-title demo catalogue
# (STACKS_BENCH_TITLES changes the size). Not part of make test.
bench-search:
	$(GO) test -run '^$$' -bench BenchmarkSearch -benchtime 200x -v ./catalog/

# bench-search-engines runs BenchmarkSearchEngines: one mix of 26 searches (the one-word,
# three-word and field searches above, and sorted, filtered and second pages) on
# SQLite and PostgreSQL side by side in one run, each search on both engines one
# after the other, with each engine's p50, p95 and p99 in milliseconds. The
# catalogue (STACKS_BENCH_TITLES, 100,000 by default) is made on SQLite and
# copied to a database of a throwaway cluster (scripts/pg.sh), or of the one
# STACKS_TEST_POSTGRES names. Building 100,000 titles takes minutes: set
# STACKS_BENCH_SQLITE to a file and STACKS_BENCH_POSTGRES to the URL of an
# existing database to keep both between runs. Search keeps what a search's
# words match under the catalogue's version, and the mix repeats its searches,
# so after the first pass each search finds its matches kept (warm);
# STACKS_BENCH_COLD=1 forgets them before every search, as the first search of
# its words since a change to the records. Not part of make test.
BENCH_SEARCH_ROUNDS ?= 20
bench-search-engines:
	cmd=($(GO) test -run '^$$' -bench BenchmarkSearchEngines -benchtime $$(( $(BENCH_SEARCH_ROUNDS) * 26 ))x -timeout 60m ./catalog/); \
	if [[ -n "$${STACKS_TEST_POSTGRES:-}$${STACKS_BENCH_POSTGRES:-}" ]]; then "$${cmd[@]}"; else bash scripts/pg.sh run "$${cmd[@]}"; fi

# bench-reports times each standard report on a 100,000-title demo
# library with 20,000 patrons (STACKS_BENCH_TITLES changes the size): median and
# worst of 20 runs each. Not part of make test. docs/performance.md records it.
bench-reports:
	$(GO) test -run '^$$' -bench BenchmarkReports -benchtime 20x -timeout 20m ./reports/
# bench-oai harvests a 100,000-title demo catalogue over OAI-PMH through its
# resumption tokens (ListIdentifiers, ListRecords in oai_dc and marc21) and
# reports records a second (STACKS_BENCH_TITLES changes the size). Not part of
# make test. docs/performance.md records the results.
bench-oai:
	$(GO) test -run '^$$' -bench BenchmarkOAIHarvest -benchtime 1x -timeout 60m -v ./opac/

# cgi-bench times CGI requests (/healthz, /login, a signed-in /checkout) side
# by side in one run (docs/performance.md, "CGI and FastCGI"): hyperfine's
# process start of /bin/true and `stacks version`, then e2e's TestCGICost, which runs
# scripts/cgibench over stacks under Go's CGI host beside the floors built from
# scripts/cgibench/floors (a shell CGI script, a bare Go CGI program, Go with the
# database opened and its schema checked), and stacks through lighttpd as CGI and
# as FastCGI beside the persistent server, alternating request by request. The
# table goes to bin/cgi-bench.md. CGI_BINS adds other stacks builds to compare
# with (make cgi-bench CGI_BINS=/tmp/stacks-old). Not part of make test.
CGI_N ?= 200
CGI_BINS ?=
cgi-bench: test-deps
	@command -v hyperfine >/dev/null || { echo "cgi-bench: hyperfine not found (Debian: apt-get install hyperfine)"; exit 1; }
	sh scripts/build.sh bin/stacks
	hyperfine -N --warmup 10 --runs $(CGI_N) --export-markdown bin/cgi-bench-exec.md --export-json bin/cgi-bench-exec.json /bin/true 'bin/stacks version'
	STACKS_CGI_BENCH=$(CGI_N) STACKS_CGI_BINS='$(CGI_BINS)' $(GO) test -count=1 -timeout 60m -run '^TestCGICost$$' ./e2e/
	@cat bin/cgi-bench-exec.md bin/cgi-bench.md

# desk-timing runs the desk session N times (default 5) in each mode (persistent
# server; CGI under Go's CGI host, stacks serve --cgi; CGI under lighttpd's
# mod_cgi; stacks fcgi under lighttpd's mod_fastcgi), in headless Chromium and with
# the scripted client, and writes the medians side by side to
# desk-timing/results.md and results.json. Not part of make test.
N ?= 5
desk-timing: test-deps
	STACKS_DESK_TIMING=$(N) $(GO) test -count=1 -timeout 60m -run '^TestDeskTiming$$' -v ./e2e/ | grep -v '^=== \|^    --- PASS\|^        --- PASS'
	@cat desk-timing/results.md

# sip-bench times SIP2 checkin round trips over loopback (a server on 127.0.0.1 on a
# fresh default demo library): median and p99 for one terminal and for 50 at once,
# messages per second, log level info against debug, synchronous FULL against
# NORMAL. Then it runs the rush (make sip-rush). Not part of make test.
# docs/performance.md records the results.
SIPBENCHTIME ?= 3000x
sip-bench:
	$(GO) test -run '^$$' -bench BenchmarkCheckin -benchtime $(SIPBENCHTIME) -count 3 -timeout 10m ./sip/
	$(MAKE) sip-rush

# sip-rush is a school's rush at the self-check machines (TestSIPRush,
# sip/rush_test.go): RUSH_TERMINALS terminals, each serving a new patron every 20
# to 40 s (63 with the PIN, two to five checkouts or checkins, 35) for
# RUSH_DURATION, with PINs and passwords at bcrypt's real cost; then the server
# restarts and every terminal logs in at the same moment. It fails if a message is
# refused, a right password gets 940, a message type's p99 reaches 500 ms or a
# login after the restart takes 5 s. The table goes to bin/sip-rush.md.
# RUSH_ACCOUNTS=shared has all terminals log in as one account (default own: one
# each); RUSH_GAP=1s-2s makes a harsher rush (the wait between a terminal's
# patrons, default 20s-40s). Not part of make test.
.PHONY: sip-rush
RUSH_DURATION ?= 3m
RUSH_TERMINALS ?= 50
RUSH_ACCOUNTS ?= own
RUSH_GAP ?= 20s-40s
sip-rush:
	STACKS_SIP_RUSH=$(RUSH_DURATION) STACKS_SIP_RUSH_TERMINALS=$(RUSH_TERMINALS) STACKS_SIP_RUSH_ACCOUNTS=$(RUSH_ACCOUNTS) STACKS_SIP_RUSH_GAP=$(RUSH_GAP) STACKS_SIP_RUSH_OUT=$(CURDIR)/bin/sip-rush.md \
		$(GO) test -count=1 -timeout 60m -run '^TestSIPRush$$' -v ./sip/ | grep -v '^=== '
	@cat bin/sip-rush.md

# pin-cost measures bcrypt at costs 8, 10 and 12 on this machine: one comparison,
# comparisons a second on one slot of the pool, and the CPU time to try every
# four-digit PIN against one patron's hash and against 10,000 patrons' hashes.
# docs/sip.md ("PIN hashing cost") quotes it. Not part of make test.
.PHONY: pin-cost
pin-cost:
	$(GO) test -run '^$$' -bench BenchmarkPINCost -benchtime 20x ./passwords/

# load runs the check-out/check-in (CICO) load test (stacks load --suite full,
# about 15 minutes): it builds bin/stacks, creates a fresh demo library (5,000 titles, 3,000
# patrons), then, each run on its own `stacks serve` on 127.0.0.1 with a free port:
# desk-paced check-out/check-in (think 3 s) at 8, 20 and 75 users; saturation (no
# think time, synchronous FULL) at 8 and 75 users, with group commit and with
# --commit-each; 500 keep-alive connections for 30 s against /healthz, the
# signed-in search page and a bare net/http hello-world server; SIP2 saturation at
# 8 and 75 terminals; the read pool sweep (--read-conns 1, 2, 4, 8, 16) at 560
# desk-paced users; and the postgres part: 560 desk-paced users and
# saturation at 75 users on SQLite, on PostgreSQL with one server and with two
# servers sharing the database (users round-robin over them), then the pool sweep
# (--write-conns = --read-conns 2 to 64 on two servers at saturation). The
# postgres part runs on STACKS_LOAD_POSTGRES (a URL) if set, else on a durable
# throwaway cluster it starts with PG_DURABLE=1 scripts/pg.sh (fsync and
# synchronous_commit on, as SQLite's synchronous FULL) and deletes after, about
# 15 more minutes. Tables, commands and the server's peak memory go to
# docs/load-results.md; LOAD_DIR keeps the database, server logs and JSON.
# load-quick is the smoke run (a few users, 10 s each, about four minutes).
# LOAD_PARTS=desk,flood runs only some parts (desk, saturation, flood, sip,
# sweep, postgres). Not part of make test.
LOAD_DIR ?= $(CURDIR)/bin/load
LOAD_PARTS ?=
load: build
	bin/stacks load --suite full --dir $(LOAD_DIR) --out docs/load-results.md --parts '$(LOAD_PARTS)'

load-quick: build
	bin/stacks load --suite quick --dir $(LOAD_DIR)-quick --out $(LOAD_DIR)-quick/results.md --parts '$(LOAD_PARTS)'
	@cat $(LOAD_DIR)-quick/results.md

# soak runs the hardening tests long and large (STACKS_SOAK=1, docs/security.md): a
# minute of slowloris with 1,000 connections, six SIGKILLs in a row under eight
# desks, twenty backups under load, a request body slower than the 60 s read
# timeout, and more hostile input on every route. A few minutes. Not part of make test.
.PHONY: soak
soak:
	STACKS_SOAK=1 $(GO) test -count=1 -timeout 30m -v -run '^(TestSlowloris|TestCrashRecovery|TestShutdownDrainsSlowRequest|TestServerLimits|TestBackupUnderLoad|TestHostileInput)$$' ./hardening/ ./web/ | grep -v '^=== '
