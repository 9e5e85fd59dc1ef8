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
	o, err := parseLoadFlags(args, stderr)
	if err != nil {
		return err
	}
	tuneGC()
	switch {
	case o.hello != "":
		if err := load.CheckLoopback(o.hello); err != nil {
			return usageError{err.Error()}
		}
		return load.ServeHello(ctx, o.hello, func(a net.Addr) { fmt.Fprintf(stdout, "hello-world server on http://%s\n", a) })
	case o.suite != "":
		return runLoadSuite(ctx, loadSuiteFlags{kind: o.suite, out: o.out, dir: o.dir, parts: o.parts, postgres: o.pgURL, quietWait: o.quietWait}, stderr)
	}
	targets, err := o.targets()
	if err != nil {
		return err
	}
	pids, err := parsePIDs(o.serverPIDs)
	if err != nil {
		return usageError{err.Error()}
	}
	if o.floodPath != "" {
		if len(targets) > 1 {
			return usageError{"--flood tests one server: give one --target"}
		}
		return runFlood(ctx, o.target, o.floodPath, o.conns, o.duration, o.login, o.user, o.password, o.jsonFile, stdout)
	}
	if err := o.checkRun(); err != nil {
		return err
	}
	shares, err := loadShares(ctx, o.dbPath, o.sharesFile, o.branch, o.items, o.writeShares)
	if err != nil {
		return err
	}
	if o.writeShares != "" {
		return writeShareList(o.writeShares, shares, stdout)
	}
	if len(shares) < o.users {
		return fmt.Errorf("the library has shares for only %d virtual users (a patron in good standing and %d available items without holds each), "+
			"not %d: lower --users or --items, or test a larger demo library, e.g. stacks demo --db load.db --titles 5000 --patrons 3000",
			len(shares), o.items, o.users)
	}
	cfg, set := o.config(shares[:o.users], targets, stderr)
	extras, err := o.watch(&cfg, targets, pids, stderr)
	if err != nil {
		return err
	}
	started := time.Now()
	fmt.Fprintf(stderr, "load: signing in %d users\n", o.users)
	rep, err := load.Run(ctx, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	out := load.Output{Settings: set, Started: started.UTC().Format(time.RFC3339), Report: rep}
	extras(&out)
	readServerMemory(&out, pids, stderr)
	out.WriteTable(stdout)
	if o.jsonFile != "" {
		return writeJSON(o.jsonFile, out)
	}
	return nil
}

// targets checks the addresses a run drives (loopback only) and returns the
// staff sites' URLs.
func (o *loadOptions) targets() ([]string, error) {
	targets := splitList(o.target)
	if o.sipAddr != "" {
		if err := load.CheckLoopback(o.sipAddr); err != nil {
			return nil, usageError{err.Error()}
		}
		return targets, nil
	}
	if len(targets) == 0 {
		return nil, usageError{"--target is empty: give the staff site's URL, e.g. http://127.0.0.1:8080"}
	}
	for _, t := range targets {
		if err := load.CheckLoopback(t); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	return targets, nil
}

// checkRun refuses settings a check-out/check-in run cannot use.
func (o *loadOptions) checkRun() error {
	switch {
	case o.users < 1 || o.items < 1:
		return usageError{"--users and --items must be at least 1"}
	case o.duration <= 0 && o.count <= 0:
		return usageError{"give --duration or --count: a load test must stop by itself"}
	case o.think < 0:
		return usageError{"--think cannot be negative"}
	case o.warmup < 0:
		return usageError{"--warmup cannot be negative"}
	}
	return nil
}

// writeShareList writes the shares to path, for a later --shares.
func writeShareList(path string, shares []load.Share, stdout io.Writer) error {
	f, err := os.Create(path)
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
	fmt.Fprintf(stdout, "wrote %d shares to %s\n", len(shares), path)
	return nil
}

// config is the run's configuration, each user with its share, and the
// settings the report repeats.
func (o *loadOptions) config(shares []load.Share, targets []string, stderr io.Writer) (load.Config, load.Settings) {
	cfg := load.Config{Users: o.users, Shares: shares, Think: o.think, Duration: o.duration, Count: o.count, Warmup: o.warmup,
		Progress: func(format string, args ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", args...) }}
	set := load.Settings{Protocol: "http", Target: strings.Join(targets, ","), Users: o.users, Items: o.items, ThinkS: o.think.Seconds(), Jitter: 0.5,
		DurationS: o.duration.Seconds(), Count: o.count, Command: append([]string{"stacks", "load"}, o.args...)}
	if o.sipAddr != "" {
		cfg.Dial = load.SIPDialer(load.SIPConfig{Addr: o.sipAddr, User: o.sipUser, Password: o.sipPassword, Institution: o.institution, PIN: o.pin})
		set.Protocol, set.Target = "sip2", o.sipAddr
		return cfg, set
	}
	set.Desk = o.desk.String()
	dialers := make([]load.Dialer, len(targets))
	for i, t := range targets {
		dialers[i] = load.HTTPDeskDialer(t, o.user, o.password, o.desk)
	}
	cfg.Dial = load.RoundRobin(dialers...)
	return cfg, set
}

// watch sets cfg up to measure, over the measured time, the servers' CPU
// (--server-pid), PostgreSQL's checkpoints and autovacuum passes, and where
// the servers' writes waited (over HTTP, when their /metrics can be read:
// serve --metrics-allow 127.0.0.1). extras adds what was measured to the
// report once the run is over.
func (o *loadOptions) watch(cfg *load.Config, targets []string, pids []int, stderr io.Writer) (extras func(*load.Output), err error) {
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
	var pgActivity *load.PGActivity
	if db.IsPostgresURL(o.dbPath) && o.sharesFile == "" {
		pgWatch, err := load.WatchPostgres(o.dbPath)
		if err != nil {
			return nil, err
		}
		cfg.Around(pgWatch.Start, func() {
			var err error
			if pgActivity, err = pgWatch.Stop(); err != nil {
				fmt.Fprintf(stderr, "load: PostgreSQL's activity counters: %v\n", err)
			}
		})
	}
	var writeWaits load.WriteWaits
	if o.sipAddr == "" {
		ww := load.WatchWrites(targets)
		cfg.Around(ww.Start, func() {
			var err error
			if writeWaits, err = ww.Stop(); err != nil {
				fmt.Fprintf(stderr, "load: where the writes waited is not reported: %v\n", err)
			}
		})
	}
	return func(out *load.Output) { out.CPU, out.Postgres, out.Writes = cpu, pgActivity, writeWaits }, nil
}

// readServerMemory adds the servers' peak memory (--server-pid) to the report.
func readServerMemory(out *load.Output, pids []int, stderr io.Writer) {
	for i, pid := range pids {
		m, err := load.ReadMemory(pid)
		if err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			continue
		}
		if i == 0 {
			out.Memory = m
		} else {
			out.MoreMemory = append(out.MoreMemory, m)
		}
	}
}

// loadOptions are stacks load's flags.
type loadOptions struct {
	args        []string
	desk        load.Desk
	target      string
	dbPath      string
	sharesFile  string
	writeShares string
	users       int
	items       int
	branch      string
	think       time.Duration
	duration    time.Duration
	count       int
	warmup      time.Duration
	user        string
	password    string
	deskMode    string
	sipAddr     string
	sipUser     string
	sipPassword string
	institution string
	pin         string
	jsonFile    string
	serverPIDs  string
	floodPath   string
	conns       int
	login       bool
	hello       string
	suite       string
	out         string
	dir         string
	parts       string
	pgURL       string
	quietWait   time.Duration
}

func parseLoadFlags(args []string, stderr io.Writer) (*loadOptions, error) {
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
	o := &loadOptions{args: args}
	fs.StringVar(&o.target, "target", env("STACKS_LOAD_TARGET", "http://127.0.0.1:8080"), "the staff site's URL, or several servers' comma-separated (STACKS_LOAD_TARGET)")
	fs.StringVar(&o.dbPath, "db", env("STACKS_DB", ""), "the servers' database, a SQLite file or a postgres:// URL, to read the users' shares from (STACKS_DB)")
	fs.StringVar(&o.sharesFile, "shares", "", "read the users' shares from this list instead of --db")
	fs.StringVar(&o.writeShares, "write-shares", "", "write the shares found in --db to this file (for --shares) and exit")
	fs.IntVar(&o.users, "users", 8, "virtual users")
	fs.IntVar(&o.items, "items", 3, "items in each user's share")
	fs.StringVar(&o.branch, "branch", "CEN", "code of the branch the desk user or SIP account works at: shares use its items")
	fs.DurationVar(&o.think, "think", 3*time.Second, "mean pause before each scan, ± 50% (0: saturation)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to measure (0: until --count)")
	fs.IntVar(&o.count, "count", 0, "stop after this many check-outs and check-ins (0: until --duration)")
	fs.DurationVar(&o.warmup, "warmup", 0, "run the workload this long, unmeasured, before measuring: a server that has been running has its connections and caches warm")
	fs.StringVar(&o.user, "user", "desk", "staff user each desk signs in as")
	fs.StringVar(&o.password, "password", "desk", "the staff user's password")
	fs.StringVar(&o.deskMode, "desk", "pages", "how each desk works the staff site: pages (every scan a form post and the page it leads to, as without JavaScript) or script (one request a scan, as the desk script sends it)")
	fs.StringVar(&o.sipAddr, "sip", "", "drive SIP2 terminals at this address (host:port) instead of the staff site")
	fs.StringVar(&o.sipUser, "sip-user", "kiosk", "SIP account")
	fs.StringVar(&o.sipPassword, "sip-password", "kiosk", "SIP account's password")
	fs.StringVar(&o.institution, "institution", "CEN", "institution ID sent to the SIP server (AO)")
	fs.StringVar(&o.pin, "pin", "1234", "patrons' PIN over SIP2")
	fs.StringVar(&o.jsonFile, "json", "", "also write the settings and figures to this JSON file")
	fs.StringVar(&o.serverPIDs, "server-pid", "", "the server's process id (several servers': comma-separated): report peak resident memory (VmHWM, reset at the start) and CPU")
	fs.StringVar(&o.floodPath, "flood", "", "connection test: GET this path of --target on --conns connections for --duration")
	fs.IntVar(&o.conns, "conns", 500, "connections for --flood")
	fs.BoolVar(&o.login, "login", false, "--flood with a signed-in desk's session cookie")
	fs.StringVar(&o.hello, "serve-hello", "", "serve a bare net/http hello-world on this loopback address until stopped")
	fs.StringVar(&o.suite, "suite", "", "run make load's suite: full or quick")
	fs.StringVar(&o.out, "out", "docs/load-results.md", "--suite: the Markdown results file")
	fs.StringVar(&o.dir, "dir", "", "--suite: working directory for the database, logs and JSON (default: a new temporary one)")
	fs.StringVar(&o.parts, "parts", "", "--suite: only these parts, comma-separated: desk, saturation, flood, sip, sweep, postgres")
	fs.StringVar(&o.pgURL, "postgres", env("STACKS_LOAD_POSTGRES", ""), "--suite: a PostgreSQL server for the postgres part, as a URL to its maintenance database (it creates a database stacks_load there); default: a durable throwaway cluster started with scripts/pg.sh (STACKS_LOAD_POSTGRES)")
	fs.DurationVar(&o.quietWait, "quiet-wait", 90*time.Second, "--suite: how long each run waits, at most, for other work on the machine to stop")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("load takes no arguments, got %q", fs.Args())}
	}
	var err error
	if o.desk, err = load.ParseDesk(o.deskMode); err != nil {
		return nil, usageError{err.Error()}
	}
	return o, nil
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
