package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/reports"
	"github.com/stacks-ils/stacks/web"
)

// dbFlags are the database flags several commands share.
type dbFlags struct {
	path        string
	readConns   int
	writeConns  int
	synchronous string
	commitEach  bool
	noStmtCache bool
	// searchConns is registered by serve only (--search-conns).
	searchConns int
}

func (f *dbFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.path, "db", env("STACKS_DB", "stacks.db"), "the library database: a SQLite file, or a postgres:// URL for PostgreSQL (STACKS_DB)")
	fs.IntVar(&f.readConns, "read-conns", envInt("STACKS_READ_CONNS", 4), "size of the read connection pool (STACKS_READ_CONNS)")
	fs.IntVar(&f.writeConns, "write-conns", envInt("STACKS_WRITE_CONNS", 8), "size of the write connection pool, PostgreSQL only: SQLite has one writer (STACKS_WRITE_CONNS)")
	fs.StringVar(&f.synchronous, "synchronous", env("STACKS_SYNCHRONOUS", "FULL"),
		"SQLite synchronous setting: FULL (a commit survives a power cut) or NORMAL (faster) (STACKS_SYNCHRONOUS)")
	fs.BoolVar(&f.commitEach, "commit-each", envBool("STACKS_COMMIT_EACH"),
		"give every write its own durable commit instead of group commit (for comparison) (STACKS_COMMIT_EACH)")
	fs.BoolVar(&f.noStmtCache, "no-stmt-cache", envBool("STACKS_NO_STMT_CACHE"),
		"compile every SQL statement each time instead of keeping each connection's recent ones (for comparison) (STACKS_NO_STMT_CACHE)")
}

// open opens and migrates the database.
func (f *dbFlags) open(ctx context.Context, logger *slog.Logger) (*db.DB, error) {
	d, err := db.Open(f.path, db.Options{ReadConns: f.readConns, WriteConns: f.writeConns, Synchronous: f.synchronous, CommitEach: f.commitEach,
		NoStatementCache: f.noStmtCache, HeavyReadConns: f.searchConns})
	if err != nil {
		return nil, err
	}
	n, err := d.Migrate(ctx)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("migrate %s: %w", db.DisplayName(f.path), err)
	}
	if n > 0 && logger != nil {
		logger.Info("database migrated", "db", db.DisplayName(f.path), "applied", n)
	}
	reportsRoleFromEnv()
	return d, nil
}

// reportsRoleFromEnv names the PostgreSQL role SQL reports run as
// (STACKS_REPORTS_ROLE), for every command that opens a library: a report run
// by any of them sets the role up first if no server did.
func reportsRoleFromEnv() {
	reports.PostgresRole = env("STACKS_REPORTS_ROLE", reports.PostgresRole)
}

// setUpReports sets up, in a server (serve, fcgi) on PostgreSQL, the role SQL
// reports run as, which cannot read the secrets; or logs what an administrator
// runs (reports say it again). The other commands leave it to the first report.
func setUpReports(ctx context.Context, d *db.DB, path string, logger *slog.Logger) {
	if !d.Postgres() {
		return
	}
	if err := reports.SetUpPostgresRole(ctx, path); err != nil {
		logger.Warn("SQL reports are off", "role", reports.PostgresRole, "err", err)
	}
}

func envInt(name string, def int) int {
	if v := env(name, ""); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := env(name, ""); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Sprintf("--log-level %q: use debug, info, warn or error", level)}
	}
	opts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Sprintf("--log-format %q: use text or json", format)}
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	tuneGC()
	logger, err := newLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	d, err := openServedLibrary(ctx, o, logger)
	if err != nil {
		return err
	}
	defer d.Close()

	cfg, err := o.staffConfig(d, logger)
	if err != nil {
		return err
	}
	if o.debugAddr != "" {
		stopDebug, err := startDebug(o.debugAddr, logger)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	// A patron load with many PINs runs on after its request; it stops, and is
	// waited for, before the database closes.
	jobs, stopJobs := context.WithCancel(context.Background())
	cfg.Background = jobs
	srv := web.New(cfg)
	defer func() { stopJobs(); srv.Wait() }()
	// Under --base-path the router sees the routed path and the base rides in
	// the request's context; the CGI host gives the child the base as
	// SCRIPT_NAME, as Apache would.
	var handler http.Handler = basepath.Mount(o.base, srv)
	if o.asCGI {
		if handler, err = cgiHost(o.dbf, o.base, o.idle, o.logLevel, stderr); err != nil {
			return err
		}
		handler = basepath.Guard(o.base, handler)
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server running there? choose another with --addr)", o.addr, err)
	}
	stopSIP, err := startSIP(ctx, o.sip, d, logger, cfg.Metrics)
	if err != nil {
		return err
	}
	defer stopSIP()
	ocfg, err := o.opac.config(opac.Config{DB: d, Logger: logger, Preferences: cfg.Preferences, SearchTimeout: o.searchTimeout, AccessLog: cfg.AccessLog})
	if err != nil {
		return err
	}
	stopOPAC, err := startOPAC(o.opac, ocfg, o.readHeaderTimeout, logger)
	if err != nil {
		return err
	}
	defer stopOPAC()
	logger.Info("serving", "addr", "http://"+displayAddr(ln.Addr())+o.base+"/", "db", db.DisplayName(o.dbf.path), "cgi", o.asCGI)

	stopBackground := startBackground(d, o, cfg.NoticeSender, logger)
	defer stopBackground()
	return serveUntilDone(ctx, o.httpServer(handler, logger), ln, logger)
}

// serveOptions are stacks serve's flags, read and checked.
type serveOptions struct {
	dbf                     dbFlags
	addr, base              string
	demo, accessLog, asCGI  bool
	logLevel, logFormat     string
	idle                    time.Duration
	secure                  bool
	metrics                 bool
	metricsAllow, debugAddr string
	readHeaderTimeout       time.Duration
	searchTimeout           time.Duration
	sip                     *sipFlags
	smtp                    notices.SMTPConfig
	notices                 bool
	noticesAt               string
	noticesEvery            time.Duration
	opac                    *opacFlags
}

// parseServeFlags reads serve's flags and environment variables and refuses a
// mistake in any of them before anything starts.
func parseServeFlags(args []string, stderr io.Writer) (*serveOptions, error) {
	fs := newFlagSet("serve", "serve [flags]",
		"Serves the staff site over HTTP. The database is migrated if needed; it must\n"+
			"exist (stacks init sets a library up) unless --demo, which fills a new or\n"+
			"empty database with the demo library.", stderr)
	o := &serveOptions{}
	o.dbf.register(fs)
	fs.StringVar(&o.addr, "addr", env("STACKS_ADDR", ":8080"), "address to listen on (STACKS_ADDR)")
	fs.BoolVar(&o.demo, "demo", envBool("STACKS_DEMO"), "fill an empty database with the demo library (STACKS_DEMO)")
	fs.StringVar(&o.logLevel, "log-level", env("STACKS_LOG_LEVEL", "info"), "log level: debug, info, warn, error (STACKS_LOG_LEVEL)")
	fs.StringVar(&o.logFormat, "log-format", env("STACKS_LOG_FORMAT", "text"), "log format: text or json (STACKS_LOG_FORMAT)")
	fs.BoolVar(&o.accessLog, "access-log", envBool("STACKS_ACCESS_LOG"), "log every request (STACKS_ACCESS_LOG)")
	fs.DurationVar(&o.idle, "idle-timeout", envDuration("STACKS_IDLE_TIMEOUT", 30*time.Minute), "sign staff out after this long without a request (STACKS_IDLE_TIMEOUT)")
	fs.BoolVar(&o.secure, "secure-cookies", envBool("STACKS_SECURE_COOKIES"), "mark the staff session cookie Secure: set this when staff reach Stacks over HTTPS; the patrons' site has --opac-secure-cookies (STACKS_SECURE_COOKIES)")
	fs.BoolVar(&o.metrics, "metrics", envBoolDefault("STACKS_METRICS", true), "serve Prometheus metrics at /metrics to administrators and --metrics-allow addresses (STACKS_METRICS)")
	fs.StringVar(&o.metricsAllow, "metrics-allow", env("STACKS_METRICS_ALLOW", ""), "comma-separated addresses or CIDRs that may read /metrics without signing in, e.g. 10.0.0.5,127.0.0.1/32; behind a proxy on this host, loopback is everyone (STACKS_METRICS_ALLOW)")
	fs.StringVar(&o.debugAddr, "debug-addr", env("STACKS_DEBUG_ADDR", ""), "serve Go's pprof profiles on this loopback address, e.g. 127.0.0.1:6060 (STACKS_DEBUG_ADDR)")
	fs.DurationVar(&o.readHeaderTimeout, "read-header-timeout", envDuration("STACKS_READ_HEADER_TIMEOUT", 10*time.Second), "close a connection that has not sent its request headers within this time (slow clients, slowloris) (STACKS_READ_HEADER_TIMEOUT)")
	fs.IntVar(&o.dbf.searchConns, "search-conns", envInt("STACKS_SEARCH_CONNS", 0),
		"catalogue searches running at once, at most (default: --read-conns minus 1, at least 1): the other read connections stay for the desk (STACKS_SEARCH_CONNS)")
	fs.DurationVar(&o.searchTimeout, "search-timeout", envDuration("STACKS_SEARCH_TIMEOUT", web.DefaultSearchTimeout),
		"stop a catalogue search after this long and ask staff to narrow it (STACKS_SEARCH_TIMEOUT)")
	fs.BoolVar(&o.asCGI, "cgi", envBool("STACKS_SERVE_CGI"), "serve every request by starting this binary as a CGI program, as a CGI host would: to compare CGI with the persistent server (STACKS_SERVE_CGI)")
	o.sip = registerSIPFlags(fs)
	smtpf := registerSMTPFlags(fs)
	fs.BoolVar(&o.notices, "notices", envBoolDefault("STACKS_NOTICES", true),
		"run the daily notices and send notices by email from this server; turn off when cron runs stacks notices run instead (STACKS_NOTICES)")
	fs.StringVar(&o.noticesAt, "notices-at", env("STACKS_NOTICES_AT", ""),
		"local time of the daily notices run, HH:MM (default: the notices_run_at preference, else 07:00) (STACKS_NOTICES_AT)")
	fs.DurationVar(&o.noticesEvery, "notices-interval", envDuration("STACKS_NOTICES_INTERVAL", time.Minute),
		"how often the server composes hold notices and sends the email due (STACKS_NOTICES_INTERVAL)")
	basePathFlag := fs.String("base-path", env("STACKS_BASE_PATH", ""),
		"serve the staff site under this path, e.g. /library, where a proxy publishes it; other paths answer 404 (STACKS_BASE_PATH)")
	o.opac = registerOPACFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	var err error
	if o.base, err = basepath.Clean(*basePathFlag); err != nil {
		return nil, usageError{"--base-path: " + err.Error()}
	}
	o.opac.defaults(fs, o.addr, o.demo)
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("serve takes no arguments, got %q", fs.Args())}
	}
	if err := o.sip.loadTLS(); err != nil {
		return nil, err
	}
	if o.smtp, err = smtpf.config(); err != nil {
		return nil, err
	}
	if _, err := o.opac.config(opac.Config{}); err != nil {
		return nil, err
	}
	if o.noticesAt != "" {
		if _, err := notices.ParseRunAt(o.noticesAt); err != nil {
			return nil, usageError{"--notices-at: " + stacks.ErrorMessage(err)}
		}
	}
	return o, nil
}

// openServedLibrary opens and migrates the library to serve: one that exists,
// or with --demo a new or empty one filled with the demo library. It refuses
// to start without a writable temporary directory, and logs how to make the
// first staff account when there is none.
func openServedLibrary(ctx context.Context, o *serveOptions, logger *slog.Logger) (*db.DB, error) {
	if err := checkTempDir(); err != nil {
		return nil, err
	}
	if !o.demo {
		if err := requireFile(o.dbf.path); err != nil {
			return nil, err
		}
	}
	d, err := o.dbf.open(ctx, logger)
	if err != nil {
		return nil, err
	}
	setUpReports(ctx, d, o.dbf.path, logger)
	if o.demo {
		if err := fillDemo(ctx, d, o.dbf.path, logger); err != nil {
			d.Close()
			return nil, err
		}
	}
	if err := warnNoStaff(ctx, d, o.dbf.path, logger); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// fillDemo creates the demo library in d if it is empty.
func fillDemo(ctx context.Context, d *db.DB, path string, logger *slog.Logger) error {
	empty, err := demo.IsEmpty(ctx, d)
	if err != nil || !empty {
		return err
	}
	start := time.Now()
	sum, err := demo.Create(ctx, d, demo.Options{})
	if err != nil {
		return err
	}
	logger.Info("demo library created", "db", db.DisplayName(path), "records", sum.Records, "items", sum.Items,
		"patrons", sum.Patrons, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// staffConfig is the staff site's configuration; its preference cache is
// shared with the patrons' site.
func (o *serveOptions) staffConfig(d *db.DB, logger *slog.Logger) (web.Config, error) {
	cfg := web.Config{
		DB:               d,
		Logger:           logger,
		IdleTimeout:      o.idle,
		SecureCookies:    o.secure,
		CachePreferences: true,
		Preferences:      library.NewPreferenceCache(true),
		SearchTimeout:    o.searchTimeout,
		SMTP:             o.smtp,
		NoticeSender:     sender(o.smtp),
	}
	if o.accessLog {
		cfg.AccessLog = logger
	}
	if o.metrics {
		cfg.Metrics = metrics.New(d)
		var err error
		if cfg.MetricsAllow, err = parsePrefixes(o.metricsAllow); err != nil {
			return cfg, usageError{"--metrics-allow: " + err.Error()}
		}
	}
	return cfg, nil
}

// httpServer is the staff site's HTTP server, with its limits on slow and
// large requests.
func (o *serveOptions) httpServer(handler http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: o.readHeaderTimeout,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// startBackground starts the server's own work beside the requests: expired
// sessions deleted, report statistics rolled up from the loans every minute
// (off the desk's write path: no trigger on loans), and the notices scheduler.
// The returned stop ends them and waits: they write, and a write racing the
// database's close is a send on the closed group-commit queue.
func startBackground(d *db.DB, o *serveOptions, send notices.Sender, logger *slog.Logger) (stop func()) {
	bg, cancel := context.WithCancel(context.Background())
	var running []chan struct{}
	goWait := func(fn func()) {
		done := make(chan struct{})
		running = append(running, done)
		go func() { fn(); close(done) }()
	}
	goWait(func() { sweepExpired(bg, d, logger) })
	goWait(func() { reports.RunRollups(bg, d, reports.RollupInterval, logger) })
	if o.notices {
		logger.Info("notices", "email", o.smtp.Describe())
		sched := &notices.Scheduler{DB: d, Sender: send, At: o.noticesAt, Interval: o.noticesEvery, Logger: logger, Jobs: dailyJobs()}
		goWait(func() { sched.Run(bg) })
	}
	return func() {
		cancel()
		for _, done := range running {
			<-done
		}
	}
}

// serveUntilDone serves ln until ctx ends (SIGINT, SIGTERM), then lets the
// requests in progress finish.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in progress")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

func displayAddr(a net.Addr) string {
	s := a.String()
	if strings.HasPrefix(s, "[::]:") {
		return "localhost:" + strings.TrimPrefix(s, "[::]:")
	}
	if strings.HasPrefix(s, "0.0.0.0:") {
		return "localhost:" + strings.TrimPrefix(s, "0.0.0.0:")
	}
	return s
}

// sweepExpired deletes expired sessions, and the sign-in counts whose window
// and lockout are over (passwords.Sweep), every few minutes while the server
// runs: a server whose daily jobs do not run (no notices) keeps both tables
// small too.
func sweepExpired(ctx context.Context, d *db.DB, logger *slog.Logger) {
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		if n, err := web.DeleteExpiredSessions(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("delete expired sessions", "err", err)
		} else if n > 0 {
			logger.Debug("deleted expired sessions", "count", n)
		}
		if n, err := opac.DeleteExpiredSessions(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("delete expired patrons' sessions", "err", err)
		} else if n > 0 {
			logger.Debug("deleted expired patrons' sessions", "count", n)
		}
		if n, err := passwords.Sweep(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("sweep sign-in counts", "err", err)
		} else if n > 0 {
			logger.Debug("swept sign-in counts", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
