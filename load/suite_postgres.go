package load

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	// The pgx driver for database/sql, to create the suite's database and read
	// the server's settings (package db opens it the same way).
	_ "github.com/jackc/pgx/v5/stdlib"
)

// pgTarget is the PostgreSQL database the postgres part runs on.
type pgTarget struct {
	// url is the suite's own database (stacks_load); display is how commands
	// show it (no password, the throwaway cluster's directory as PGDIR).
	url, display string
	// postmaster is the server's process id when it runs on this machine (0
	// otherwise): its CPU and its backends' are reported as PostgreSQL's.
	postmaster int
	// settings describes the server: version and durability settings.
	settings string
	// durable is false when fsync or synchronous_commit is off.
	durable bool
	// maxConns is max_connections less the superuser's reserve.
	maxConns int
	// stop deletes a cluster the suite started (nil for one it was given).
	stop func()
}

// pgDatabase is the database the suite creates, afresh, on the PostgreSQL server.
const pgDatabase = "stacks_load"

// startPostgres finds or starts the PostgreSQL server and creates the suite's
// database on it.
func (s *Suite) startPostgres(ctx context.Context) (*pgTarget, error) {
	t := &pgTarget{}
	admin, origin := s.Postgres, "given with --postgres (STACKS_LOAD_POSTGRES)"
	clusterDir := ""
	if admin == "" {
		script := s.PGScript
		if script == "" {
			script = "scripts/pg.sh"
		}
		if _, err := os.Stat(script); err != nil {
			return nil, fmt.Errorf("no PostgreSQL: give one with --postgres URL (STACKS_LOAD_POSTGRES), or run from the source tree so that the suite can start one with %s: %w", script, err)
		}
		cmd := exec.CommandContext(ctx, "bash", script, "start")
		cmd.Env = append(os.Environ(), "PG_DURABLE=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s start: %w: %s", script, err, tail(stderr.Bytes(), 2000))
		}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "export STACKS_TEST_POSTGRES='"); ok {
				admin = strings.TrimSuffix(v, "'")
			}
			if v, ok := strings.CutPrefix(line, "# stop it with: scripts/pg.sh stop "); ok {
				clusterDir = strings.TrimSpace(v)
			}
		}
		if admin == "" || clusterDir == "" {
			return nil, fmt.Errorf("%s start printed no URL and directory: %s", script, out)
		}
		t.stop = func() {
			if out, err := exec.Command("bash", script, "stop", clusterDir).CombinedOutput(); err != nil {
				s.logf("stop the PostgreSQL cluster in %s: %v: %s", clusterDir, err, out)
			}
		}
		origin = "a throwaway cluster the suite started (`PG_DURABLE=1 scripts/pg.sh start`, on this machine's disk)"
	}
	fail := func(err error) (*pgTarget, error) {
		if t.stop != nil {
			t.stop()
		}
		return nil, err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return fail(fmt.Errorf("PostgreSQL URL: %v", err))
	}
	conn, err := sql.Open("pgx", admin)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pgDatabase); err != nil {
		return fail(fmt.Errorf("drop the suite's database %s: %w", pgDatabase, err))
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+pgDatabase); err != nil {
		return fail(fmt.Errorf("create the suite's database %s: %w", pgDatabase, err))
	}
	u.Path = "/" + pgDatabase
	t.url = u.String()
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	t.display = u.String()
	if clusterDir != "" {
		t.display = strings.ReplaceAll(t.display, url.QueryEscape(clusterDir), "PGDIR")
		t.display = strings.ReplaceAll(t.display, clusterDir, "PGDIR")
	}

	show := map[string]string{}
	for _, name := range []string{"server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method",
		"max_connections", "superuser_reserved_connections", "shared_buffers", "commit_delay"} {
		var v string
		if err := conn.QueryRowContext(ctx, "SHOW "+name).Scan(&v); err != nil {
			return fail(fmt.Errorf("SHOW %s: %w", name, err))
		}
		show[name] = v
	}
	maxConns, _ := strconv.Atoi(show["max_connections"])
	reserved, _ := strconv.Atoi(show["superuser_reserved_connections"])
	t.maxConns = maxConns - reserved
	t.durable = show["fsync"] == "on" && show["synchronous_commit"] == "on"
	durability := "durable: every acknowledged commit has been flushed to disk, as SQLite's synchronous FULL"
	if !t.durable {
		durability = "NOT durable: a commit may be acknowledged before it is on disk, so these figures do not compare with SQLite's synchronous FULL"
	}
	t.settings = fmt.Sprintf("PostgreSQL %s, %s; fsync %s, synchronous_commit %s, full_page_writes %s, wal_sync_method %s, commit_delay %s "+
		"(%s); max_connections %s, shared_buffers %s; connections over a Unix socket",
		show["server_version"], origin, show["fsync"], show["synchronous_commit"], show["full_page_writes"], show["wal_sync_method"],
		show["commit_delay"], durability, show["max_connections"], show["shared_buffers"])

	// The postmaster is the parent of the backend serving this connection,
	// when the server runs here.
	var backend int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err == nil {
		if f, err := statFields(strconv.Itoa(backend)); err == nil && len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid > 1 {
				t.postmaster = ppid
			}
		}
	}
	return t, nil
}

// coldLabel names the desk-paced run measured without a warm-up.
const coldLabel = "PostgreSQL, 2 servers, first minute"

// postgresPart is the engines' load test: the CICO workflow on SQLite (one
// server) beside PostgreSQL (one server, then two sharing the database, the
// users spread over them as behind a balancer), desk-paced and at saturation,
// in one report; then the connection pool sweep on PostgreSQL.
func (s *Suite) postgresPart(ctx context.Context) {
	users, satUsers, long, sat := 560, 75, 60*time.Second, 30*time.Second
	pools := []int{2, 4, 8, 16, 32, 64}
	think := 3 * time.Second
	// Every run but one measures servers that have been working (warm: their
	// connections open, statements prepared and planned, caches filled), as a
	// library's servers are all day; the last desk-paced run measures two
	// servers from their first minute, to show what a restart costs.
	warm, satWarm := 30*time.Second, 10*time.Second
	if s.Quick {
		users, satUsers, long, sat, think = 20, 8, 10*time.Second, 10*time.Second, time.Second
		pools = []int{2, 8}
		warm, satWarm = 3*time.Second, 3*time.Second
	}
	const items, sweepServers = 3, 2

	intro := "The same CICO workflow on SQLite, on PostgreSQL with one server, and on PostgreSQL with two servers " +
		"serving the same database (the users spread round-robin, each pinned to one server, as behind a balancer). " +
		"Server defaults on both engines: read pool 4, write pool 8 (PostgreSQL), SQLite synchronous FULL with group commit. "
	desk := s.addSection(fmt.Sprintf("SQLite and PostgreSQL: %d desk-paced users", users), intro+
		fmt.Sprintf("Think %s ± 50%% before every scan, %s measured after a warm-up of %s: the same workload, not measured, "+
			"so that the servers are measured as they work all day (connections open, statements prepared and planned, caches filled). "+
			"The last row, \"%s\", is the two-server run measured from the start: the servers' first minute after starting, "+
			"right after the users signed in.", think, long, warm, coldLabel))
	satSec := s.addSection(fmt.Sprintf("SQLite and PostgreSQL: saturation at %d users", satUsers), intro+
		fmt.Sprintf("No think time, %s measured after a warm-up of %s (not measured): durable check-outs and check-ins a second.", sat, satWarm))
	sweep := s.addSection(fmt.Sprintf("PostgreSQL pool sweep: %d servers, saturation at %d users", sweepServers, satUsers),
		fmt.Sprintf("Two servers on the PostgreSQL database, each restarted with --write-conns N --read-conns N "+
			"(both pools the same size: every transaction is a write, the form post, then a read, the page it redirects "+
			"to); %d users with no think time for %s each, after a warm-up of %s. The bar is the row's check-outs and check-ins a second.", satUsers, sat, satWarm))
	sweep.header = "| pool (write = read, per server) | PostgreSQL connections | CO median | CO p95 | CI median | CI p95 | errors | CO + CI a second | |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"

	note := func(err error) {
		s.logf("postgres part: %v", err)
		desk.after = append(desk.after, "The PostgreSQL runs did not run: "+err.Error())
		s.write()
	}
	pg, err := s.startPostgres(ctx)
	if err != nil {
		note(err)
		return
	}
	if pg.stop != nil {
		defer pg.stop()
	}
	s.pg = pg
	defer func() { s.pg = nil }()
	s.logf("%s", pg.settings)

	start := time.Now()
	out, err := exec.CommandContext(ctx, s.Bin, "demo", "--db", pg.url, "--titles", "5000", "--patrons", "3000").CombinedOutput()
	if err != nil {
		note(fmt.Errorf("create the demo library on PostgreSQL: %w: %s", err, out))
		return
	}
	demoPG := fmt.Sprintf("`stacks demo --db %s --titles 5000 --patrons 3000` took %.1f s", pg.display, time.Since(start).Seconds())
	s.logf("%s", demoPG)
	for _, sec := range []*section{desk, satSec, sweep} {
		sec.intro += "\n\nPostgreSQL: " + pg.settings + ". Its demo library: " + demoPG + " (SQLite's: see the top)."
		if pg.postmaster > 0 {
			sec.intro += " The CPU notes give PostgreSQL's (the postmaster and its backends) apart from the servers'."
		}
	}

	type engineRun struct {
		label   string
		db      string
		servers int
	}
	runs := []engineRun{{"SQLite, 1 server", "", 1}, {"PostgreSQL, 1 server", pg.url, 1}, {"PostgreSQL, 2 servers", pg.url, 2}}
	deskOut, satOut := map[string]Output{}, map[string]Output{}
	for _, r := range runs {
		s.cico(ctx, desk, scenario{part: "pg-desk", label: r.label, users: users, items: items, think: think, duration: long,
			warmup: warm, db: r.db, servers: r.servers, done: func(o Output) { deskOut[r.label] = o }})
	}
	s.cico(ctx, desk, scenario{part: "pg-desk-cold", label: coldLabel, users: users, items: items, think: think, duration: long,
		db: pg.url, servers: 2})
	for _, r := range runs {
		s.cico(ctx, satSec, scenario{part: "pg-saturation", label: r.label, users: satUsers, items: items, duration: sat,
			warmup: satWarm, db: r.db, servers: r.servers, done: func(o Output) { satOut[r.label] = o }})
	}
	s.sideBySide(runs[0].label, []string{runs[0].label, runs[1].label, runs[2].label}, deskOut, satOut, users, satUsers)

	best := 0.0
	type point struct {
		pool int
		out  *Output
		err  string
	}
	var points []point
	for _, n := range pools {
		if ctx.Err() != nil {
			break
		}
		need := sweepServers*2*n + 2
		if pg.maxConns > 0 && need > pg.maxConns {
			points = append(points, point{pool: n, err: fmt.Sprintf("skipped: needs %d connections, the server allows %d", need, pg.maxConns)})
			continue
		}
		p := point{pool: n}
		var got Output
		ok := false
		sc := scenario{part: "pg-sweep", label: fmt.Sprintf("pool %d", n), users: satUsers, items: items, duration: sat,
			warmup: satWarm, db: pg.url, servers: sweepServers, serve: []string{"--write-conns", strconv.Itoa(n), "--read-conns", strconv.Itoa(n)},
			done: func(o Output) { got, ok = o, true }}
		// The sweep's rows are written below, with the curve: the run's own
		// rows go to a section that is not printed.
		scratch := &section{title: sweep.title}
		err := s.cico(ctx, scratch, sc)
		sweep.commands = append(sweep.commands, scratch.commands...)
		sweep.after = append(sweep.after, scratch.after...)
		switch {
		case ok:
			p.out = &got
			best = max(best, got.Report.TotalTPS)
		case err != nil:
			p.err = "failed: " + strings.ReplaceAll(err.Error(), "|", "/")
		default:
			p.err = "failed"
		}
		points = append(points, p)
		sweep.rows.Reset()
		for _, q := range points {
			if q.out == nil {
				fmt.Fprintf(&sweep.rows, "| %d | %d | | | | | | %s | |\n", q.pool, sweepServers*2*q.pool, strings.Trim(q.err, "| "))
				continue
			}
			r := q.out.Report
			co, ci := r.Ops[OpCheckout], r.Ops[OpCheckin]
			fmt.Fprintf(&sweep.rows, "| %d | %d | %s | %s | %s | %s | %d | %.0f | `%s` |\n", q.pool, sweepServers*2*q.pool,
				fmtMS(co.Median), fmtMS(co.P95), fmtMS(ci.Median), fmtMS(ci.P95), r.ErrorCount(), r.TotalTPS, bar(r.TotalTPS, best, 40))
		}
		s.write()
	}
}

// bar draws v as a bar of up to width characters, full at top.
func bar(v, top float64, width int) string {
	if top <= 0 || v <= 0 {
		return ""
	}
	n := int(v/top*float64(width) + 0.5)
	return strings.Repeat("#", max(1, n))
}

// sideBySide adds the summary table: each engine's desk-paced times and
// saturation rate, with its ratio to SQLite's, from this suite's runs.
func (s *Suite) sideBySide(base string, labels []string, desk, sat map[string]Output, users, satUsers int) {
	sec := &section{title: "SQLite and PostgreSQL side by side",
		intro: fmt.Sprintf("From the two tables below, measured in this run one after the other: the desk-paced times at %d users "+
			"(the bar a desk must meet: p95 under 100 ms, 0 errors) and the saturation rate at %d users. Ratios are to SQLite's figure "+
			"in the same run.", users, satUsers)}
	sec.header = "| run | desk CO median | desk CO p95 | desk CI median | desk CI p95 | desk errors | p95 < 100 ms, 0 errors | saturation CO + CI a second | ratio to SQLite | saturation CO p95 | saturation errors |\n" +
		"|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n"
	// Placed before the tables it sums up.
	idx := len(s.sections)
	for i, x := range s.sections {
		if strings.HasPrefix(x.title, "SQLite and PostgreSQL:") {
			idx = i
			break
		}
	}
	s.sections = slices.Insert(s.sections, idx, sec)
	baseTPS := 0.0
	if o, ok := sat[base]; ok {
		baseTPS = o.Report.TotalTPS
	}
	for _, l := range labels {
		row := []string{l}
		if o, ok := desk[l]; ok {
			r := o.Report
			co, ci := r.Ops[OpCheckout], r.Ops[OpCheckin]
			verdict := "yes"
			if r.ErrorCount() > 0 || co.P95 >= 100*time.Millisecond || ci.P95 >= 100*time.Millisecond {
				verdict = "**no**"
			}
			row = append(row, fmtMS(co.Median), fmtMS(co.P95), fmtMS(ci.Median), fmtMS(ci.P95), strconv.Itoa(r.ErrorCount()), verdict)
		} else {
			row = append(row, "", "", "", "", "", "not run")
		}
		if o, ok := sat[l]; ok {
			r := o.Report
			ratio := ""
			if baseTPS > 0 {
				ratio = fmt.Sprintf("%.2f", r.TotalTPS/baseTPS)
			}
			row = append(row, fmt.Sprintf("%.0f", r.TotalTPS), ratio, fmtMS(r.Ops[OpCheckout].P95), strconv.Itoa(r.ErrorCount()))
		} else {
			row = append(row, "not run", "", "", "")
		}
		fmt.Fprintf(&sec.rows, "| %s |\n", strings.Join(row, " | "))
	}
	if len(desk) == 0 && len(sat) == 0 {
		sec.rows.Reset()
		sec.after = append(sec.after, "No run finished: the sections below say why.")
	}
	s.write()
}
