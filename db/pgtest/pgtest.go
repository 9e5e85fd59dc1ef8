// Package pgtest hands a test its own PostgreSQL database: a fresh copy of a
// migrated template database on the test cluster that scripts/pg.sh runs.
// make test starts one for the whole go test run and exports its URL in
// STACKS_TEST_POSTGRES; a plain go test, with that unset, starts one per test
// process when its first test asks for PostgreSQL (scripts/pg.sh start, a
// second or two), and Main (or dbtest.Main) stops and deletes it when the tests
// end. Copying a template (CREATE DATABASE ... TEMPLATE) takes
// a few tens of milliseconds where migrating takes about a second, so every test
// can have its own database and drop it at the end.
//
// Which engines a run tests is STACKS_TEST_ENGINES: "sqlite", "postgres" or
// "sqlite,postgres" (the default). A test of PostgreSQL in a run that selects
// it, with no server to reach and none to start (PostgreSQL not installed),
// fails and says how to install it; it never skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/migrations"
)

// Env names the variable holding the test cluster's URL (a superuser's, on a
// database such as postgres from which new databases are created).
const Env = "STACKS_TEST_POSTGRES"

// EnginesEnv names the variable that selects the engines a run tests.
const EnginesEnv = "STACKS_TEST_ENGINES"

// howTo says how to give the tests a server.
const howTo = "set " + Env + " to a cluster's URL (scripts/pg.sh run go test ./... runs the tests under a throwaway one), " +
	"or set " + EnginesEnv + "=sqlite to test SQLite only"

// Selected reports whether the run tests engine e (STACKS_TEST_ENGINES; both
// when it is unset).
func Selected(e db.Engine) bool {
	v := strings.TrimSpace(os.Getenv(EnginesEnv))
	if v == "" {
		return true
	}
	for _, name := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(name), e.String()) {
			return true
		}
	}
	return false
}

// Engines returns the engines the run tests, SQLite first.
func Engines() []db.Engine {
	var out []db.Engine
	for _, e := range []db.Engine{db.SQLite, db.Postgres} {
		if Selected(e) {
			out = append(out, e)
		}
	}
	return out
}

// URL creates a new database for tb, with the schema migrated and nothing else
// (the same as a new SQLite file after Migrate), returns its URL and drops it
// when tb ends. In a run that does not select PostgreSQL it skips tb, saying
// so; in one that does, with no server to reach or start, it fails tb and says
// why.
func URL(tb testing.TB) string {
	tb.Helper()
	if !Selected(db.Postgres) {
		tb.Skipf("PostgreSQL is not selected for this run (%s=%s)", EnginesEnv, os.Getenv(EnginesEnv))
	}
	tmpl, err := Template("", nil)
	if err != nil {
		skipOrFail(tb, err)
	}
	return CopyURL(tb, tmpl)
}

// skipOrFail ends tb for an error getting a database: a skip if the run does
// not select PostgreSQL, else a failure.
func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if !Selected(db.Postgres) {
		tb.Skipf("PostgreSQL is not selected for this run (%s=%s)", EnginesEnv, os.Getenv(EnginesEnv))
	}
	tb.Fatal(err)
}

// CopyURL creates a new database for tb as a copy of the template database
// tmpl (a name Template returned), returns its URL and drops it when tb ends.
//
// The copy is usually made before tb asks: each template has a worker that
// keeps the next copy ready (spares), so a test does not wait for CREATE
// DATABASE (a checkpoint, 0.1 s on a quiet machine and over a second on a
// busy one) while the package's tests run one after another; and the drop
// happens after tb, while the next test runs. DropTemplates stops the workers
// and waits for the drops.
func CopyURL(tb testing.TB, tmpl string) string {
	tb.Helper()
	admin, c, err := admin()
	if err != nil {
		skipOrFail(tb, err)
	}
	name, err := spareOf(c, tmpl)
	if err != nil {
		tb.Fatalf("create a test database from %s: %v", tmpl, err)
	}
	tb.Cleanup(func() {
		spares.drops.Add(1)
		go func() {
			defer spares.drops.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := c.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
				fmt.Fprintf(os.Stderr, "pgtest: drop test database %s: %v\n", name, err)
			}
		}()
	})
	return withDatabase(admin, name)
}

// spares are the copies made ahead, a worker a template.
var spares struct {
	mu      sync.Mutex
	byTmpl  map[string]chan spare
	stop    chan struct{} // closed by DropTemplates
	workers sync.WaitGroup
	drops   sync.WaitGroup
}

type spare struct {
	name string
	err  error
}

// spareOf returns a new copy of tmpl, from its worker, starting the worker
// the first time.
func spareOf(c *sql.DB, tmpl string) (string, error) {
	spares.mu.Lock()
	if spares.byTmpl == nil {
		spares.byTmpl, spares.stop = map[string]chan spare{}, make(chan struct{})
	}
	ch, ok := spares.byTmpl[tmpl]
	if !ok {
		// One ready in the channel and one being made: two ahead at most.
		ch = make(chan spare, 1)
		spares.byTmpl[tmpl] = ch
		spares.workers.Add(1)
		go copyAhead(c, tmpl, ch, spares.stop)
	}
	spares.mu.Unlock()
	select {
	case s := <-ch:
		return s.name, s.err
	case <-time.After(5 * time.Minute):
		return "", fmt.Errorf("no copy of %s after 5 minutes: is the test cluster overloaded?", tmpl)
	}
}

// copyAhead makes copies of tmpl into ch until stop is closed, then drops the
// one it holds.
func copyAhead(c *sql.DB, tmpl string, ch chan<- spare, stop <-chan struct{}) {
	defer spares.workers.Done()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s := spare{name: "stacks_test_" + randomHex(8)}
		s.err = createFrom(ctx, c, s.name, tmpl)
		cancel()
		select {
		case ch <- s:
			if s.err != nil {
				// The test that receives it fails; try again for the next.
				time.Sleep(100 * time.Millisecond)
			}
		case <-stop:
			if s.err == nil {
				_, _ = c.Exec(`DROP DATABASE IF EXISTS ` + s.name + ` WITH (FORCE)`)
			}
			return
		}
	}
}

// stopSpares stops the workers, drops the copies nobody took and waits for
// the tests' drops.
func stopSpares() {
	spares.mu.Lock()
	if spares.stop != nil {
		close(spares.stop)
	}
	byTmpl := spares.byTmpl
	spares.byTmpl, spares.stop = nil, nil
	spares.mu.Unlock()
	spares.workers.Wait()
	adminMu.Lock()
	c := adminPools[clusterURL()]
	adminMu.Unlock()
	for _, ch := range byTmpl {
		select {
		case s := <-ch:
			if s.err == nil && c != nil {
				_, _ = c.Exec(`DROP DATABASE IF EXISTS ` + s.name + ` WITH (FORCE)`)
			}
		default:
		}
	}
	spares.drops.Wait()
}

// Template returns the name of a template database to copy with CopyURL. The
// name "" is the migrated, empty one, shared by every test process on the
// cluster. Any other name is built once per test process: a copy of the
// migrated one that build fills (a demo library, say); as with dbtest.Copy, the
// name must say everything build depends on. DropTemplates drops them.
func Template(name string, build func(*db.DB) error) (string, error) {
	if build == nil {
		return TemplateURL(name, nil)
	}
	return TemplateURL(name, func(url string) error {
		d, err := db.Open(url, db.Options{})
		if err != nil {
			return err
		}
		err = build(d)
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// TemplateURL is Template for a build that fills the template through its URL:
// another process, such as the stacks binary a browser test runs
// (stacks demo --db URL).
func TemplateURL(name string, build func(url string) error) (string, error) {
	admin, c, err := admin()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	base, err := template(ctx, c, admin)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL test database template: %v (is the cluster of %s running? %s)", err, db.DisplayName(admin), howTo)
	}
	if name == "" {
		return base, nil
	}
	adminMu.Lock()
	t, ok := named[name]
	if !ok {
		t = &namedTemplate{}
		named[name] = t
	}
	adminMu.Unlock()
	t.once.Do(func() { t.db, t.err = buildNamed(ctx, c, admin, base, name, build) })
	return t.db, t.err
}

type namedTemplate struct {
	once sync.Once
	db   string
	err  error
}

var named = map[string]*namedTemplate{}

// buildNamed creates the template database for name, private to this process.
func buildNamed(ctx context.Context, c *sql.DB, admin, base, name string, build func(url string) error) (string, error) {
	sum := sha256.Sum256([]byte(name))
	dbname := fmt.Sprintf("stacks_tmpl_p%d_%s", os.Getpid(), hex.EncodeToString(sum[:])[:12])
	if _, err := c.ExecContext(ctx, `DROP DATABASE IF EXISTS `+dbname+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if err := createFrom(ctx, c, dbname, base); err != nil {
		return "", err
	}
	if build != nil {
		if err := build(withDatabase(admin, dbname)); err != nil {
			return "", fmt.Errorf("build the test database %q: %w", name, err)
		}
	}
	return dbname, nil
}

// DropTemplates drops the templates Template built in this process (not the
// shared migrated one): call it when the tests are done (dbtest.Main).
func DropTemplates() error {
	stopSpares()
	adminMu.Lock()
	defer adminMu.Unlock()
	var errs []error
	for name, t := range named {
		if t.db == "" {
			continue
		}
		c := adminPools[clusterURL()]
		if c == nil {
			break
		}
		if _, err := c.Exec(`DROP DATABASE IF EXISTS ` + t.db + ` WITH (FORCE)`); err != nil {
			errs = append(errs, fmt.Errorf("drop template %q (%s): %w", name, t.db, err))
		}
	}
	named = map[string]*namedTemplate{}
	return errors.Join(errs...)
}

// clusterURL is the URL of the test cluster: the one Env names, else the one
// this process started (ownCluster), else "". It starts none.
//
// Env is read with syscall.Getenv, not os.Getenv, on purpose: go test's cache
// keys a package's result on the values of the variables its tests read through
// package os, and scripts/pg.sh starts each run's cluster in a new temporary
// directory, so the URL differs on every run and no PostgreSQL test would ever
// come from the cache. Where the throwaway cluster listens is not an input of
// any test (each test gets a new database copied from a template built from the
// migrations, which the cache does see); STACKS_TEST_ENGINES, which does change
// what runs, is read through package os.
func clusterURL() string {
	if v, _ := syscall.Getenv(Env); v != "" {
		return v
	}
	own.mu.Lock()
	defer own.mu.Unlock()
	return own.url
}

// admin returns the cluster's URL and the process's pool on it, starting this
// process's own cluster first when Env is unset.
func admin() (string, *sql.DB, error) {
	url := clusterURL()
	if url == "" {
		var err error
		if url, err = ownCluster(); err != nil {
			return "", nil, err
		}
	}
	c, err := adminPool(url)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v; %s", Env, err, howTo)
	}
	return url, c, nil
}

// Open opens a new test database (URL) with opt and closes it when tb ends.
func Open(tb testing.TB, opt db.Options) *db.DB {
	tb.Helper()
	d, err := db.Open(URL(tb), opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

var (
	adminMu    sync.Mutex
	adminPools = map[string]*sql.DB{}
	templates  = map[string]string{}
)

// adminPool returns the process's connections to the cluster's admin database.
func adminPool(admin string) (*sql.DB, error) {
	adminMu.Lock()
	defer adminMu.Unlock()
	if c, ok := adminPools[admin]; ok {
		return c, nil
	}
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("%s is not a PostgreSQL URL: %v", db.DisplayName(admin), err)
	}
	c := stdlib.OpenDB(*cfg)
	c.SetMaxOpenConns(4)
	adminPools[admin] = c
	return c, nil
}

// template returns the name of the migrated template database, creating it if
// no test process has yet. Its name carries a hash of PostgreSQL's migrations,
// so a changed migration gets a new template on a cluster that outlives a run.
// A session advisory lock keeps test processes running in parallel from
// building it twice.
func template(ctx context.Context, c *sql.DB, admin string) (string, error) {
	adminMu.Lock()
	if t, ok := templates[admin]; ok {
		adminMu.Unlock()
		return t, nil
	}
	adminMu.Unlock()
	hash, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "stacks_template_" + hash
	conn, err := c.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7310)`); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(7310)`)
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		build := name + "_build"
		if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+build+` WITH (FORCE)`); err != nil {
			return "", err
		}
		if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+build); err != nil {
			return "", err
		}
		d, err := db.Open(withDatabase(admin, build), db.Options{ReadConns: 1, WriteConns: 1})
		if err != nil {
			return "", err
		}
		_, err = d.Migrate(ctx)
		d.Close()
		if err != nil {
			return "", fmt.Errorf("migrate: %w", err)
		}
		if err := retryBusy(ctx, func() error {
			_, err := conn.ExecContext(ctx, `ALTER DATABASE `+build+` RENAME TO `+name)
			return err
		}); err != nil {
			return "", err
		}
	}
	adminMu.Lock()
	templates[admin] = name
	adminMu.Unlock()
	return name, nil
}

// createFrom creates database name as a copy of tmpl. From PostgreSQL 15 on it
// asks for the FILE_COPY strategy: the test cluster runs with fsync off, so its
// checkpoint is cheap, and copying the files beat writing every page to the WAL
// (15's default) by about a third here.
func createFrom(ctx context.Context, c *sql.DB, name, tmpl string) error {
	var version int
	if err := c.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return err
	}
	strategy := ""
	if version >= 150000 {
		strategy = " STRATEGY FILE_COPY"
	}
	return retryBusy(ctx, func() error {
		_, err := c.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl+strategy)
		return err
	})
}

// retryBusy retries fn while PostgreSQL says another session still uses the
// database (SQLSTATE 55006): a closed connection's server process may take a
// moment to go.
func retryBusy(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// withDatabase returns the URL admin with its database replaced by name.
func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		return admin
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// migrationsHash is a short hash of PostgreSQL's migration files.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, "postgres", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
