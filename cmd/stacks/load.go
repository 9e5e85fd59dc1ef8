package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/load"
)

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load", "load [flags]",
		`Load-tests a Stacks server on this machine with FOLIO's check-in/check-out
(CICO) workflow: --users virtual users each sign in as a desk (over HTTP, as a
browser does) or as a self-check terminal (--sip), then serve their own patron
with their own items: scan the card, check each item out, end the visit, check
each item in, again and again, pausing --think before every scan (0: no pause,
a saturation run). It stops after --duration or --count check-outs and
check-ins and prints each operation's count, average, median, p95, p99,
longest, errors and transactions a second; --json writes the same figures.
Signing in is not measured. Items still out at the end are checked in.

--target may list several servers, comma-separated (a consortium's servers on
one PostgreSQL database): the users are spread round-robin, user i on server
i mod N for the whole run, as behind a balancer.

Each user's share (a patron in good standing and --items available items with
no holds, at the desk's branch) is read from the server's database (--db: a
SQLite file or a postgres:// URL; read-only in effect, SELECTs only, safe while
the servers run) or from a list (--shares FILE: one user a line, CARD
BARCODE..., as --write-shares makes).
The demo library has shares for about 1,200 users with
  stacks demo --db load.db --titles 5000 --patrons 3000

Only loopback targets are accepted (127.0.0.0/8, ::1, localhost). Over SIP2
every terminal connects from this host: serve with --sip-max-conns-per-addr of at
least --users (the default allows 16 connections an address).

Other modes:
  --flood PATH       --conns keep-alive connections GET PATH back to back for
                     --duration (--login: with a signed-in desk's cookie)
  --serve-hello ADDR a bare net/http hello-world server, to compare with
  --suite full|quick what make load and make load-quick run: starts servers
                     on a fresh demo library and writes --out; its postgres
                     part compares SQLite with PostgreSQL (one and two
                     servers) on --postgres, or on a durable throwaway cluster
                     it starts with scripts/pg.sh

Examples:
  stacks load --target http://127.0.0.1:8080 --db stacks.db --users 75 --think 3s --duration 60s
  stacks load --target http://127.0.0.1:8080 --db stacks.db --users 8 --think 0 --count 10000 --json sat.json
  stacks load --target http://127.0.0.1:8081,http://127.0.0.1:8082 --db postgres://stacks@/stacks?host=/run/postgresql --users 560 --duration 60s
  stacks load --sip 127.0.0.1:6001 --db stacks.db --users 20 --think 0 --duration 30s   # serve --sip-max-conns-per-addr 20
  stacks load --target http://127.0.0.1:8080 --flood /healthz --conns 500 --duration 30s`, stderr)
	target := fs.String("target", env("STACKS_LOAD_TARGET", "http://127.0.0.1:8080"), "the staff site's URL, or several servers' comma-separated (STACKS_LOAD_TARGET)")
	dbPath := fs.String("db", env("STACKS_DB", ""), "the servers' database, a SQLite file or a postgres:// URL, to read the users' shares from (STACKS_DB)")
	sharesFile := fs.String("shares", "", "read the users' shares from this list instead of --db")
	writeShares := fs.String("write-shares", "", "write the shares found in --db to this file (for --shares) and exit")
	users := fs.Int("users", 8, "virtual users")
	items := fs.Int("items", 3, "items in each user's share")
	branch := fs.String("branch", "CEN", "code of the branch the desk user or SIP account works at: shares use its items")
	think := fs.Duration("think", 3*time.Second, "mean pause before each scan, ± 50% (0: saturation)")
	duration := fs.Duration("duration", 60*time.Second, "how long to measure (0: until --count)")
	count := fs.Int("count", 0, "stop after this many check-outs and check-ins (0: until --duration)")
	warmup := fs.Duration("warmup", 0, "run the workload this long, unmeasured, before measuring: a server that has been running has its connections and caches warm")
	user := fs.String("user", "desk", "staff user each desk signs in as")
	password := fs.String("password", "desk", "the staff user's password")
	deskMode := fs.String("desk", "pages", "how each desk works the staff site: pages (every scan a form post and the page it leads to, as without JavaScript) or script (one request a scan, as the desk script sends it)")
	sipAddr := fs.String("sip", "", "drive SIP2 terminals at this address (host:port) instead of the staff site")
	sipUser := fs.String("sip-user", "kiosk", "SIP account")
	sipPassword := fs.String("sip-password", "kiosk", "SIP account's password")
	institution := fs.String("institution", "CEN", "institution ID sent to the SIP server (AO)")
	pin := fs.String("pin", "1234", "patrons' PIN over SIP2")
	jsonFile := fs.String("json", "", "also write the settings and figures to this JSON file")
	serverPIDs := fs.String("server-pid", "", "the server's process id (several servers': comma-separated): report peak resident memory (VmHWM, reset at the start) and CPU")
	floodPath := fs.String("flood", "", "connection test: GET this path of --target on --conns connections for --duration")
	conns := fs.Int("conns", 500, "connections for --flood")
	login := fs.Bool("login", false, "--flood with a signed-in desk's session cookie")
	hello := fs.String("serve-hello", "", "serve a bare net/http hello-world on this loopback address until stopped")
	suite := fs.String("suite", "", "run make load's suite: full or quick")
	out := fs.String("out", "docs/load-results.md", "--suite: the Markdown results file")
	dir := fs.String("dir", "", "--suite: working directory for the database, logs and JSON (default: a new temporary one)")
	parts := fs.String("parts", "", "--suite: only these parts, comma-separated: desk, saturation, flood, sip, sweep, postgres")
	pgURL := fs.String("postgres", env("STACKS_LOAD_POSTGRES", ""), "--suite: a PostgreSQL server for the postgres part, as a URL to its maintenance database (it creates a database stacks_load there); default: a durable throwaway cluster started with scripts/pg.sh (STACKS_LOAD_POSTGRES)")
	quietWait := fs.Duration("quiet-wait", 90*time.Second, "--suite: how long each run waits, at most, for other work on the machine to stop")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tuneGC()
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("load takes no arguments, got %q", fs.Args())}
	}
	desk, err := load.ParseDesk(*deskMode)
	if err != nil {
		return usageError{err.Error()}
	}

	switch {
	case *hello != "":
		if err := load.CheckLoopback(*hello); err != nil {
			return usageError{err.Error()}
		}
		return load.ServeHello(ctx, *hello, func(a net.Addr) { fmt.Fprintf(stdout, "hello-world server on http://%s\n", a) })
	case *suite != "":
		return runLoadSuite(ctx, loadSuiteFlags{kind: *suite, out: *out, dir: *dir, parts: *parts, postgres: *pgURL, quietWait: *quietWait}, stderr)
	}

	targets := splitList(*target)
	if *sipAddr != "" {
		if err := load.CheckLoopback(*sipAddr); err != nil {
			return usageError{err.Error()}
		}
	} else {
		if len(targets) == 0 {
			return usageError{"--target is empty: give the staff site's URL, e.g. http://127.0.0.1:8080"}
		}
		for _, t := range targets {
			if err := load.CheckLoopback(t); err != nil {
				return usageError{err.Error()}
			}
		}
	}
	pids, err := parsePIDs(*serverPIDs)
	if err != nil {
		return usageError{err.Error()}
	}
	if *floodPath != "" {
		if len(targets) > 1 {
			return usageError{"--flood tests one server: give one --target"}
		}
		return runFlood(ctx, *target, *floodPath, *conns, *duration, *login, *user, *password, *jsonFile, stdout)
	}
	if *users < 1 || *items < 1 {
		return usageError{"--users and --items must be at least 1"}
	}
	if *duration <= 0 && *count <= 0 {
		return usageError{"give --duration or --count: a load test must stop by itself"}
	}
	if *think < 0 {
		return usageError{"--think cannot be negative"}
	}
	if *warmup < 0 {
		return usageError{"--warmup cannot be negative"}
	}

	shares, err := loadShares(ctx, *dbPath, *sharesFile, *branch, *items, *writeShares)
	if err != nil {
		return err
	}
	if *writeShares != "" {
		f, err := os.Create(*writeShares)
		if err != nil {
			return err
		}
		if err := load.WriteShares(f, shares); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d shares to %s\n", len(shares), *writeShares)
		return nil
	}
	if len(shares) < *users {
		return fmt.Errorf("the library has shares for only %d virtual users (a patron in good standing and %d available items without holds each), "+
			"not %d: lower --users or --items, or test a larger demo library, e.g. stacks demo --db load.db --titles 5000 --patrons 3000",
			len(shares), *items, *users)
	}
	shares = shares[:*users]

	cfg := load.Config{Users: *users, Shares: shares, Think: *think, Duration: *duration, Count: *count, Warmup: *warmup,
		Progress: func(format string, args ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", args...) }}
	set := load.Settings{Protocol: "http", Target: strings.Join(targets, ","), Users: *users, Items: *items, ThinkS: think.Seconds(), Jitter: 0.5,
		DurationS: duration.Seconds(), Count: *count, Command: append([]string{"stacks", "load"}, args...)}
	if *sipAddr != "" {
		cfg.Dial = load.SIPDialer(load.SIPConfig{Addr: *sipAddr, User: *sipUser, Password: *sipPassword, Institution: *institution, PIN: *pin})
		set.Protocol, set.Target = "sip2", *sipAddr
	} else {
		set.Desk = desk.String()
		dialers := make([]load.Dialer, len(targets))
		for i, t := range targets {
			dialers[i] = load.HTTPDeskDialer(t, *user, *password, desk)
		}
		cfg.Dial = load.RoundRobin(dialers...)
	}
	for _, pid := range pids {
		if err := load.ResetPeakMemory(pid); err != nil {
			fmt.Fprintf(stderr, "load: cannot reset the server's peak memory (the figure will be its peak since it started): %v\n", err)
		}
	}
	var meter *load.CPUMeter
	var cpu *load.CPUUse
	if len(pids) > 0 {
		cfg.OnStart = func() { meter = load.StartCPUProcs(load.Procs{Servers: pids}) }
		cfg.OnStop = func() { cpu = meter.Stop() }
	}
	// On PostgreSQL the report says which checkpoints and autovacuum passes
	// fell in the measured time.
	var pgWatch *load.PGWatch
	var pgActivity *load.PGActivity
	if db.IsPostgresURL(*dbPath) && *sharesFile == "" {
		if pgWatch, err = load.WatchPostgres(*dbPath); err != nil {
			return err
		}
		cfg.Around(pgWatch.Start, func() {
			var err error
			if pgActivity, err = pgWatch.Stop(); err != nil {
				fmt.Fprintf(stderr, "load: PostgreSQL's activity counters: %v\n", err)
			}
		})
	}
	// Over HTTP the report says where the servers' writes waited, when their
	// /metrics can be read (serve --metrics-allow 127.0.0.1).
	var writeWaits load.WriteWaits
	if *sipAddr == "" {
		ww := load.WatchWrites(targets)
		cfg.Around(ww.Start, func() {
			var err error
			if writeWaits, err = ww.Stop(); err != nil {
				fmt.Fprintf(stderr, "load: where the writes waited is not reported: %v\n", err)
			}
		})
	}
	started := time.Now()
	fmt.Fprintf(stderr, "load: signing in %d users\n", *users)
	rep, err := load.Run(ctx, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	o := load.Output{Settings: set, Started: started.UTC().Format(time.RFC3339), Report: rep, CPU: cpu, Postgres: pgActivity, Writes: writeWaits}
	for i, pid := range pids {
		m, err := load.ReadMemory(pid)
		if err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			continue
		}
		if i == 0 {
			o.Memory = m
		} else {
			o.MoreMemory = append(o.MoreMemory, m)
		}
	}
	o.WriteTable(stdout)
	if *jsonFile != "" {
		if err := writeJSON(*jsonFile, o); err != nil {
			return err
		}
	}
	return nil
}

// loadShares reads the shares from a list file or the database.
func loadShares(ctx context.Context, dbPath, sharesFile, branch string, items int, writing string) ([]load.Share, error) {
	switch {
	case sharesFile != "" && dbPath != "" && writing == "":
		return nil, usageError{"give --db or --shares, not both"}
	case sharesFile != "" && writing == "":
		f, err := os.Open(sharesFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		shares, err := load.ReadShares(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sharesFile, err)
		}
		return shares, nil
	case dbPath == "":
		return nil, usageError{"give the server's database with --db (read for each user's patron and items), or a list with --shares"}
	}
	return load.SharesFromDB(ctx, dbPath, load.ShareQuery{Branch: branch, Items: items})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func runFlood(ctx context.Context, target, path string, conns int, d time.Duration, login bool, user, password, jsonFile string, stdout io.Writer) error {
	if d <= 0 || conns < 1 {
		return usageError{"--flood needs --duration and --conns"}
	}
	if !strings.HasPrefix(path, "/") {
		return usageError{fmt.Sprintf("--flood %q: give a path such as /healthz", path)}
	}
	cfg := load.FloodConfig{URL: strings.TrimRight(target, "/") + path, Conns: conns, Duration: d}
	if login {
		h, err := load.SessionHeader(ctx, target, user, password)
		if err != nil {
			return err
		}
		cfg.Header = h
	}
	res, err := load.Flood(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d connections for %.1fs: %.0f requests/s, %d errors; median %.2f ms, p99 %.2f ms, max %.2f ms\n",
		cfg.URL, conns, res.Elapsed.Seconds(), res.RPS, res.Errors, ms(res.Latency.Median), ms(res.Latency.P99), ms(res.Latency.Max))
	for msg, n := range res.ErrorKinds {
		fmt.Fprintf(stdout, "  error ×%d: %s\n", n, msg)
	}
	if jsonFile != "" {
		return writeJSON(jsonFile, map[string]any{"url": cfg.URL, "connections": conns, "elapsed_s": res.Elapsed.Seconds(),
			"requests": res.Requests, "errors": res.Errors, "rps": res.RPS, "median_ms": ms(res.Latency.Median),
			"p99_ms": ms(res.Latency.P99), "max_ms": ms(res.Latency.Max), "error_kinds": res.ErrorKinds})
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadSuiteFlags are stacks load's --suite settings.
type loadSuiteFlags struct {
	kind, out, dir, parts, postgres string
	quietWait                       time.Duration
}

func runLoadSuite(ctx context.Context, f loadSuiteFlags, stderr io.Writer) error {
	if f.kind != "full" && f.kind != "quick" {
		return usageError{fmt.Sprintf("--suite %q: use full or quick", f.kind)}
	}
	if f.postgres != "" && !db.IsPostgresURL(f.postgres) {
		return usageError{fmt.Sprintf("--postgres %q: give a postgres:// URL", db.DisplayName(f.postgres))}
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "stacks-load-"); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load: working in %s (database, server logs, JSON of each run)\n", dir)
	}
	s := &load.Suite{Bin: bin, Dir: dir, Quick: f.kind == "quick", Log: stderr, Results: f.out,
		Postgres: f.postgres, PGScript: filepath.Join("scripts", "pg.sh"), QuietWait: f.quietWait}
	if f.out != "" {
		if abs, err := filepath.Abs(f.out); err == nil {
			s.Results = abs
		}
	}
	s.Parts = splitList(f.parts)
	return s.Run(ctx)
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parsePIDs parses --server-pid: process ids, comma-separated.
func parsePIDs(s string) ([]int, error) {
	var pids []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--server-pid %q: give process ids, comma-separated", s)
		}
		pids = append(pids, n)
	}
	return pids, nil
}
