package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// Suite is make load (and make load-quick): it creates a demo library sized for
// the test, starts the server under test as its own process for every run (so
// that its memory is its own, and a setting such as the read pool size takes
// effect), drives it from this process, and writes every table, with the
// commands that made it, as Markdown.
type Suite struct {
	// Bin is the stacks binary (serve, demo, and load --serve-hello).
	Bin string
	// Dir holds the database, the servers' logs and each run's JSON.
	Dir string
	// Quick is the smoke run: a few users for 10 seconds each.
	Quick bool
	// Parts limits the run to some parts (desk, saturation, flood, sip, sweep);
	// all when empty.
	Parts []string
	// Log receives progress and each run's table.
	Log io.Writer
	// Results is the Markdown file written (again after every run, so that an
	// interrupted suite leaves what it measured).
	Results string
	// Postgres is a PostgreSQL server for the postgres part, a URL to a database
	// the suite may create its own database from. Empty: the suite starts a
	// durable throwaway cluster with PGScript (scripts/pg.sh) and deletes it after.
	Postgres string
	// PGScript is scripts/pg.sh, relative to the working directory.
	PGScript string
	// QuietWait bounds each run's wait for a quiet machine (default 90 s).
	QuietWait time.Duration

	db      string
	pg      *pgTarget
	started time.Time
	demo    string
	// sections in order, each a heading, text and table rows
	sections []*section
}

type section struct {
	title, intro string
	commands     []string
	header       string
	rows         bytes.Buffer
	after        []string
}

// scenario is one CICO run.
type scenario struct {
	part     string
	label    string
	users    int
	items    int
	think    time.Duration
	duration time.Duration
	// warmup runs the workload unmeasured first (Config.Warmup).
	warmup time.Duration
	serve  []string // extra serve flags
	sip    bool
	// db is the database the servers serve (default: the suite's SQLite file);
	// servers is how many serve it at once (default 1), the users spread
	// round-robin over them.
	db      string
	servers int
	// done, if set, receives the run's output.
	done func(Output)
	// also is another section the run's rows go to, under alsoLabel.
	also      *section
	alsoLabel string
}

func (s *Suite) logf(format string, args ...any) {
	fmt.Fprintf(s.Log, "load: "+format+"\n", args...)
}

func (s *Suite) want(part string) bool { return len(s.Parts) == 0 || slices.Contains(s.Parts, part) }

// Run runs the suite.
func (s *Suite) Run(ctx context.Context) error {
	s.started = time.Now()
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	s.db = filepath.Join(s.Dir, "load.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(s.db + suffix)
	}
	titles, patrons := "5000", "3000"
	start := time.Now()
	out, err := exec.CommandContext(ctx, s.Bin, "demo", "--db", s.db, "--titles", titles, "--patrons", patrons).CombinedOutput()
	if err != nil {
		return fmt.Errorf("create the demo library: %w: %s", err, out)
	}
	s.demo = fmt.Sprintf("`stacks demo --db load.db --titles %s --patrons %s` took %.1f s: %s", titles, patrons,
		time.Since(start).Seconds(), strings.ReplaceAll(strings.TrimSpace(string(out)), s.db, "load.db"))
	s.logf("%s", s.demo)

	commitEach, err := s.hasServeFlag(ctx, "-commit-each")
	if err != nil {
		return err
	}

	long, sat, sweep, floodFor, conns := 60*time.Second, 30*time.Second, 60*time.Second, 30*time.Second, 500
	deskUsers, satUsers, sipUsers := []int{8, 20, 75}, []int{8, 75}, []int{8, 75}
	sweepUsers, pools := 560, []int{1, 2, 4, 8, 16}
	if s.Quick {
		long, sat, sweep, floodFor, conns = 10*time.Second, 10*time.Second, 10*time.Second, 5*time.Second, 50
		deskUsers, satUsers, sipUsers = []int{4}, []int{4}, []int{4}
		sweepUsers, pools = 20, []int{1, 4}
	}
	think := 3 * time.Second
	if s.Quick {
		think = time.Second
	}
	const items = 3

	// Desk-paced runs; the sweep's default pool size gives the largest row.
	desk := s.addSection("Desk-paced CICO over HTTP",
		fmt.Sprintf("Each virtual user is a desk: it signs in as desk/desk (before the measured time), then serves its own patron "+
			"with %d items of its own: scan the card, check out each item, end the visit, check each in, with a pause of "+
			"%s ± 50%% before every scan. Server defaults: read pool 4, synchronous FULL, group commit.", items, think))
	if s.want("desk") {
		for _, n := range deskUsers {
			s.cico(ctx, desk, scenario{part: "desk", label: fmt.Sprintf("%d users", n), users: n, items: items, think: think, duration: long})
		}
	}

	satTitle := "Saturation: CICO over HTTP with no think time"
	satIntro := "Every user scans again as soon as the page is back: how many durable check-outs and check-ins a second " +
		"one server sustains. synchronous FULL: each acknowledged transaction has been fsynced."
	if commitEach {
		satIntro += " Each user count runs twice: with group commit (the default: transactions that arrive together share " +
			"one fsync) and with --commit-each (one fsync per transaction, as before)."
	} else {
		satIntro += " This server has no --commit-each flag: group commit could not be compared."
	}
	satSec := s.addSection(satTitle, satIntro)
	if s.want("saturation") {
		for _, n := range satUsers {
			s.cico(ctx, satSec, scenario{part: "saturation", label: fmt.Sprintf("%d users, group commit", n), users: n, items: items,
				duration: sat, serve: []string{"--synchronous", "FULL"}})
			if commitEach {
				s.cico(ctx, satSec, scenario{part: "saturation", label: fmt.Sprintf("%d users, commit each", n), users: n, items: items,
					duration: sat, serve: []string{"--synchronous", "FULL", "--commit-each"}})
			}
		}
	}

	floodSec := s.addSection(fmt.Sprintf("%d concurrent connections", conns),
		fmt.Sprintf("%d clients, each with one keep-alive connection opened before the clock starts, send GET back to back for %s "+
			"(hey -c %d -z %s): Stacks' /healthz, the signed-in search page (/search?q=river, one desk's session cookie on every "+
			"request), and a bare net/http hello-world server (stacks load --serve-hello) measured in the same run. "+
			"An error is any answer but 200, or none.", conns, floodFor, conns, floodFor))
	if s.want("flood") {
		s.flood(ctx, floodSec, conns, floodFor)
	}

	sipSec := s.addSection("Saturation: CICO over SIP2",
		"Each virtual user is a self-check terminal on its own TCP connection, logged in as kiosk/kiosk: patron status (23) "+
			"with the card and PIN 1234, checkout (11) of each item, checkin (09) of each; no think time. The server has no "+
			"Server-Timing over SIP2, so the server column is empty.")
	if s.want("sip") {
		for _, n := range sipUsers {
			s.cico(ctx, sipSec, scenario{part: "sip", label: fmt.Sprintf("%d terminals", n), users: n, items: items, duration: sat, sip: true})
		}
	}

	sweepSec := s.addSection(fmt.Sprintf("Read pool sweep at %d desk-paced users", sweepUsers),
		fmt.Sprintf("The desk-paced workflow at %d users, the server restarted with each --read-conns.", sweepUsers))
	if s.want("sweep") {
		for _, p := range pools {
			sc := scenario{part: "sweep", label: fmt.Sprintf("read-conns %d", p), users: sweepUsers, items: items,
				think: think, duration: sweep, serve: []string{"--read-conns", strconv.Itoa(p)}}
			if p == 4 { // the default: this run is also the desk-paced table's largest
				sc.also, sc.alsoLabel = desk, fmt.Sprintf("%d users", sweepUsers)
			}
			s.cico(ctx, sweepSec, sc)
		}
	}
	if s.want("postgres") {
		s.postgresPart(ctx)
	}
	s.logf("done in %s; results in %s", time.Since(s.started).Round(time.Second), s.Results)
	return s.write()
}

func (s *Suite) addSection(title, intro string) *section {
	sec := &section{title: title, intro: intro}
	s.sections = append(s.sections, sec)
	return sec
}

// hasServeFlag reports whether stacks serve has a flag.
func (s *Suite) hasServeFlag(ctx context.Context, flag string) (bool, error) {
	out, _ := exec.CommandContext(ctx, s.Bin, "serve", "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("Usage: stacks serve")) {
		return false, fmt.Errorf("%s serve --help: %s", s.Bin, out)
	}
	return bytes.Contains(out, []byte(flag+" ")) || bytes.Contains(out, []byte(flag+"\n")), nil
}

// proc is a server started for a run.
type proc struct {
	cmd    *exec.Cmd
	log    *os.File
	args   []string
	exited chan struct{}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start starts the binary with args and waits until url answers 200.
func (s *Suite) start(ctx context.Context, name string, args []string, url string) (*proc, error) {
	f, err := os.Create(filepath.Join(s.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p := &proc{cmd: cmd, log: f, args: args, exited: exited}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			f.Close()
			b, _ := os.ReadFile(f.Name())
			return nil, fmt.Errorf("%s exited: %s", strings.Join(args, " "), tail(b, 2000))
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			cmd.Process.Kill()
			<-exited
			f.Close()
			return nil, fmt.Errorf("%s did not answer %s within a minute", strings.Join(args, " "), url)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, as uptime
// shows them ("2.31, 1.80, 1.20"), or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "?"
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// stop asks the process to finish (SIGTERM) and waits; it kills it after 30 s.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
	p.log.Close()
}

// serve starts stacks serve on the suite's SQLite database.
func (s *Suite) serve(ctx context.Context, name string, extra []string, sipAddr string) (*proc, string, error) {
	return s.serveDB(ctx, name, s.db, extra, sipAddr)
}

// serveDB starts stacks serve on database (a file or a URL).
func (s *Suite) serveDB(ctx context.Context, name, database string, extra []string, sipAddr string) (*proc, string, error) {
	addr, err := freePort()
	if err != nil {
		return nil, "", err
	}
	// The suite reads each server's /metrics (where its writes waited).
	args := []string{"serve", "--db", database, "--addr", addr, "--log-level", "warn", "--metrics-allow", "127.0.0.1"}
	if sipAddr != "" {
		args = append(args, "--sip-addr", sipAddr)
	}
	args = append(args, extra...)
	p, err := s.start(ctx, name, args, "http://"+addr+"/healthz")
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + addr, nil
}

// displayCommand writes a command line with the suite's paths shortened.
func (s *Suite) displayCommand(args []string) string {
	out := []string{"stacks"}
	for _, a := range args {
		a = strings.ReplaceAll(a, s.db, "load.db")
		if s.pg != nil && a == s.pg.url {
			a = s.pg.display
		}
		if strings.ContainsAny(a, " ?&") {
			a = "'" + a + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// cico runs one scenario and adds its rows to sec; a failure is noted in the
// table, not fatal, and returned.
func (s *Suite) cico(ctx context.Context, sec *section, sc scenario) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.cicoErr(ctx, sec, sc)
	if err != nil {
		s.logf("%s, %s: %v", sec.title, sc.label, err)
		fmt.Fprintf(&sec.rows, "| %s | failed: %s | | | | | | | | | |\n", sc.label, strings.ReplaceAll(err.Error(), "|", "/"))
	}
	if err := s.write(); err != nil {
		s.logf("write %s: %v", s.Results, err)
	}
	return err
}

// waitQuiet waits, at most QuietWait (90 seconds), until other work on the machine uses less
// than 0.3 cores over 2 seconds, so that a run does not start while a build or a
// test suite has the CPU. The machine may still get busy during the run: each
// run reports the CPU other processes used while it measured.
func (s *Suite) waitQuiet(ctx context.Context) {
	wait := s.QuietWait
	if wait <= 0 {
		wait = 90 * time.Second
	}
	deadline := time.Now().Add(wait)
	for ctx.Err() == nil {
		m := StartCPU(0)
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		u := m.Stop()
		if u == nil || u.Other < 0.3 {
			return
		}
		if time.Now().After(deadline) {
			s.logf("the machine stayed busy (other work: %.1f cores); measuring anyway", u.Other)
			return
		}
		s.logf("waiting for the machine to be quiet (other work: %.1f cores)", u.Other)
	}
}

func (s *Suite) cicoErr(ctx context.Context, sec *section, sc scenario) error {
	s.waitQuiet(ctx)
	sipAddr := ""
	if sc.sip {
		var err error
		if sipAddr, err = freePort(); err != nil {
			return err
		}
	}
	name := strings.NewReplacer(" ", "-", ",", "").Replace(sc.part + "-" + sc.label)
	extra := sc.serve
	if sc.sip {
		// Every terminal connects from this host: lift the per-address limit.
		extra = append(slices.Clone(extra), "--sip-max-conns-per-addr", strconv.Itoa(sc.users))
	}
	database := sc.db
	if database == "" {
		database = s.db
	}
	servers := max(1, sc.servers)
	var procs []*proc
	var bases []string
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for i := range servers {
		n := name
		if servers > 1 {
			n = fmt.Sprintf("%s-%d", name, i+1)
		}
		p, base, err := s.serveDB(ctx, n, database, extra, sipAddr)
		if err != nil {
			return err
		}
		procs, bases = append(procs, p), append(bases, base)
	}
	p, base := procs[0], strings.Join(bases, ",")

	shares, err := SharesFromDB(ctx, database, ShareQuery{Branch: "CEN", Items: sc.items, Max: sc.users})
	if err != nil {
		return err
	}
	cfg := Config{Users: sc.users, Shares: shares, Think: sc.think, Duration: sc.duration, Warmup: sc.warmup,
		Progress: func(format string, args ...any) {
			s.logf("%s, %s: "+format, append([]any{sec.title, sc.label}, args...)...)
		}}
	serverCmds := make([]string, len(procs))
	for i, p := range procs {
		serverCmds[i] = s.displayCommand(p.args)
	}
	set := Settings{Label: sc.label, Protocol: "http", Target: base, Users: sc.users, Items: sc.items, ThinkS: sc.think.Seconds(),
		Jitter: 0.5, DurationS: sc.duration.Seconds(), Server: strings.Join(serverCmds, "; ")}
	loadArgs := []string{"load", "--target", base, "--db", database, "--users", strconv.Itoa(sc.users), "--items", strconv.Itoa(sc.items),
		"--think", sc.think.String(), "--duration", sc.duration.String()}
	if sc.warmup > 0 {
		loadArgs = append(loadArgs, "--warmup", sc.warmup.String())
	}
	if sc.sip {
		cfg.Dial = SIPDialer(SIPConfig{Addr: sipAddr, User: "kiosk", Password: "kiosk", Institution: "CEN", PIN: "1234"})
		set.Protocol, set.Target = "sip2", sipAddr
		loadArgs[1], loadArgs[2] = "--sip", sipAddr
	} else {
		dialers := make([]Dialer, len(bases))
		for i, b := range bases {
			dialers[i] = HTTPDialer(b, "desk", "desk")
		}
		cfg.Dial = RoundRobin(dialers...)
	}
	set.Command = append([]string{"stacks"}, loadArgs...)
	watch := Procs{}
	for _, p := range procs {
		watch.Servers = append(watch.Servers, p.cmd.Process.Pid)
		ResetPeakMemory(p.cmd.Process.Pid)
	}
	if s.pg != nil && database == s.pg.url {
		watch.Database = s.pg.postmaster
	}
	var meter *CPUMeter
	var cpu *CPUUse
	// Over HTTP, where the servers' writes waited; on PostgreSQL, its
	// checkpoints and autovacuum passes in the measured time.
	var writes *WriteWatch
	var writeWaits WriteWaits
	if !sc.sip {
		writes = WatchWrites(bases)
	}
	var pgWatch *PGWatch
	var pgActivity *PGActivity
	pgStopped := false
	if db.IsPostgresURL(database) {
		if pgWatch, err = WatchPostgres(database); err != nil {
			return err
		}
	}
	cfg.OnStart = func() {
		meter = StartCPUProcs(watch)
		if writes != nil {
			writes.Start()
		}
		if pgWatch != nil {
			pgWatch.Start()
		}
	}
	cfg.OnStop = func() {
		cpu = meter.Stop()
		var err error
		if writes != nil {
			if writeWaits, err = writes.Stop(); err != nil {
				s.logf("%s, %s: where the writes waited: %v", sec.title, sc.label, err)
			}
		}
		if pgWatch != nil {
			pgStopped = true
			if pgActivity, err = pgWatch.Stop(); err != nil {
				s.logf("%s, %s: PostgreSQL's activity counters: %v", sec.title, sc.label, err)
			}
		}
	}
	s.logf("%s, %s: %s", sec.title, sc.label, s.displayCommand(loadArgs))
	started := time.Now()
	rep, err := Run(ctx, cfg)
	if err != nil {
		if pgWatch != nil && !pgStopped {
			pgWatch.Stop() // closes its connection
		}
		return err
	}
	out := Output{Settings: set, Started: started.UTC().Format(time.RFC3339), Report: rep, CPU: cpu, Postgres: pgActivity, Writes: writeWaits}
	if m, err := ReadMemory(p.cmd.Process.Pid); err == nil {
		out.Memory = m
	}
	for _, q := range procs[1:] {
		if m, err := ReadMemory(q.cmd.Process.Pid); err == nil {
			out.MoreMemory = append(out.MoreMemory, m)
		}
	}
	if sc.done != nil {
		sc.done(out)
	}
	out.WriteTable(s.Log)
	fmt.Fprintln(s.Log)
	out.MarkdownRows(&sec.rows, sc.label)
	if sc.also != nil {
		out.MarkdownRows(&sc.also.rows, sc.alsoLabel)
		sc.also.after = append(sc.also.after, fmt.Sprintf("%s: the read pool sweep's --read-conns 4 run (the default), below.", sc.alsoLabel))
	}
	sec.commands = append(sec.commands, fmt.Sprintf("%s: `%s` then `%s`", sc.label, strings.Join(serverCmds, "` and `"), s.displayCommand(loadArgs)))
	if rep.LoginTime > 0 {
		warm := ""
		if rep.Warmup > 0 {
			warm = fmt.Sprintf(", then a warm-up of %s (%d errors)", rep.Warmup, rep.WarmupErrors)
		}
		sec.after = append(sec.after, fmt.Sprintf("%s: signing in %d users took %.1f s%s (not measured); measured %.1f s; %d unmeasured check-ins to put items back; load average %s at the end.",
			sc.label, sc.users, rep.LoginTime.Seconds(), warm, rep.Elapsed.Seconds(), rep.Unmeasured, loadAverage()))
	}
	for msg, n := range rep.Errors {
		sec.after = append(sec.after, fmt.Sprintf("%s: error ×%d: %s", sc.label, n, msg))
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(s.Dir, name+".json"), b, 0o644)
	}
	return err
}

// flood runs the connection test against Stacks and the hello-world server.
func (s *Suite) flood(ctx context.Context, sec *section, conns int, d time.Duration) {
	sec.header = "| target | connections | seconds | requests/s | errors | median ms | p99 ms | max ms | server peak RSS | ratio to hello-world |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	err := func() error {
		p, base, err := s.serve(ctx, "flood-stacks", nil, "")
		if err != nil {
			return err
		}
		defer p.stop()
		helloAddr, err := freePort()
		if err != nil {
			return err
		}
		helloArgs := []string{"load", "--serve-hello", helloAddr}
		h, err := s.start(ctx, "flood-hello", helloArgs, "http://"+helloAddr+"/")
		if err != nil {
			return err
		}
		defer h.stop()
		cookie, err := SessionHeader(ctx, base, "desk", "desk")
		if err != nil {
			return err
		}
		type target struct {
			name, base, path string
			header           http.Header
			pid              int
		}
		targets := []target{
			{"hello-world (net/http)", "http://" + helloAddr, "/", nil, h.cmd.Process.Pid},
			{"Stacks /healthz", base, "/healthz", nil, p.cmd.Process.Pid},
			{"Stacks /search?q=river (signed in)", base, "/search?q=river", cookie, p.cmd.Process.Pid},
		}
		sec.commands = append(sec.commands,
			fmt.Sprintf("servers: `%s` and `%s`", s.displayCommand(p.args), s.displayCommand(helloArgs)))
		var helloRPS float64
		for _, t := range targets {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			args := []string{"load", "--target", t.base, "--flood", t.path, "--conns", strconv.Itoa(conns), "--duration", d.String()}
			if t.header != nil {
				args = append(args, "--login")
			}
			sec.commands = append(sec.commands, fmt.Sprintf("%s: `%s`", t.name, s.displayCommand(args)))
			s.waitQuiet(ctx)
			ResetPeakMemory(t.pid)
			s.logf("%d connections for %s: %s", conns, d, t.base+t.path)
			meter := StartCPU(t.pid)
			res, err := Flood(ctx, FloodConfig{URL: t.base + t.path, Conns: conns, Duration: d, Header: t.header})
			if cpu := meter.Stop(); cpu != nil && err == nil {
				sec.after = append(sec.after, fmt.Sprintf("%s: CPU during the test: %s.", t.name, cpu))
			}
			if err != nil {
				fmt.Fprintf(&sec.rows, "| %s | %d | | failed: %s | | | | | | |\n", t.name, conns, err)
				continue
			}
			mem := "?"
			if m, err := ReadMemory(t.pid); err == nil {
				mem = mb(m.PeakKB)
			}
			if helloRPS == 0 {
				helloRPS = res.RPS
			}
			ratio := "1"
			if helloRPS > 0 && t.pid != h.cmd.Process.Pid {
				ratio = fmt.Sprintf("%.2f", res.RPS/helloRPS)
			}
			s.logf("  %.0f requests/s, %d errors, median %s ms, p99 %s ms, peak RSS %s", res.RPS, res.Errors,
				fmtMS(res.Latency.Median), fmtMS(res.Latency.P99), mem)
			fmt.Fprintf(&sec.rows, "| %s | %d | %.1f | %.0f | %d | %s | %s | %s | %s | %s |\n", t.name, conns, res.Elapsed.Seconds(),
				res.RPS, res.Errors, fmtMS(res.Latency.Median), fmtMS(res.Latency.P99), fmtMS(res.Latency.Max), mem, ratio)
			for msg, n := range res.ErrorKinds {
				sec.after = append(sec.after, fmt.Sprintf("%s: error ×%d: %s", t.name, n, msg))
			}
		}
		return nil
	}()
	if err != nil {
		s.logf("connection test: %v", err)
		sec.after = append(sec.after, "The connection test failed: "+err.Error())
	}
	if err := s.write(); err != nil {
		s.logf("write %s: %v", s.Results, err)
	}
}

// write writes the results file.
func (s *Suite) write() error {
	if s.Results == "" {
		return nil
	}
	var b bytes.Buffer
	kind, suite := "make load", "full"
	if s.Quick {
		kind, suite = "make load-quick", "quick"
	}
	if len(s.Parts) > 0 {
		kind = "LOAD_PARTS=" + strings.Join(s.Parts, ",") + " " + kind
		suite += " --parts " + strings.Join(s.Parts, ",")
	}
	fmt.Fprintf(&b, "# Load test results\n\nGenerated by `%s` (`stacks load --suite %s`), started %s, on %d CPUs (%s/%s, %s); "+
		"the load generator runs on the same machine as the server. docs/performance.md explains the figures and what "+
		"limits them. Times are in milliseconds, from sending a request to reading the whole page it leads to; a "+
		"transaction is a form post and the page its redirect leads to. Each total row gives the server's peak resident memory "+
		"(VmHWM) and where the machine's CPU went while measuring, in cores: the server, the load generator, and other "+
		"processes (the machine is shared: a run with other work above about 0.2 cores competed with it).\n\n", kind, suite, s.started.UTC().Format("2006-01-02 15:04 UTC"),
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "Demo library: %s.\n", s.demo)
	for _, sec := range s.sections {
		if sec.rows.Len() == 0 && len(sec.after) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", sec.title, sec.intro)
		if len(sec.commands) > 0 {
			b.WriteString("Commands (PORT is a free port chosen for each run):\n\n")
			for _, c := range sec.commands {
				fmt.Fprintf(&b, "- %s\n", portless(c))
			}
			b.WriteString("\n")
		}
		if sec.header != "" {
			b.WriteString(sec.header)
		} else {
			b.WriteString(MarkdownHeader)
		}
		b.Write(sec.rows.Bytes())
		if len(sec.after) > 0 {
			b.WriteString("\n")
			for _, a := range sec.after {
				fmt.Fprintf(&b, "- %s\n", portless(a))
			}
		}
	}
	return os.WriteFile(s.Results, b.Bytes(), 0o644)
}

// portless replaces the run's random ports by PORT.
func portless(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "127.0.0.1:")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+len("127.0.0.1:")])
		s = s[i+len("127.0.0.1:"):]
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > 0 {
			b.WriteString("PORT")
		}
		s = s[j:]
	}
}
