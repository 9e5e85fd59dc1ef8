// Package dbtest hands tests their databases: a migrated, empty one (Open), or a
// copy of one built once per test process (Copy; demo/demotest builds the demo
// library with it). Building a database (the migrations, and above all the demo
// library) costs far more than copying one, especially under the race detector, so
// a package's tests build each kind once and each test gets a copy of its own that
// it may change freely.
//
// This is the one place where tests acquire a database, and the engine is chosen
// here (Engine): on SQLite a template is a file and a copy is a file copy; on
// PostgreSQL (STACKS_TEST_ENGINES=postgres, the second pass of make test) a
// template is a database on the test cluster and a copy is a CREATE DATABASE
// ... TEMPLATE of it (db/pgtest), and where a test gets a path it gets the
// copy's URL. The tests themselves do not change.
//
// A package that uses dbtest calls Main from its TestMain, which removes the
// templates when the tests are done:
//
//	func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
package dbtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// Engine is the engine this test process's databases are on: PostgreSQL when
// the run selects it alone (STACKS_TEST_ENGINES=postgres), else SQLite. Tests
// that compare the engines side by side use pgtest.Engines instead.
func Engine() db.Engine {
	if e := pgtest.Engines(); len(e) == 1 && e[0] == db.Postgres {
		return db.Postgres
	}
	return db.SQLite
}

// templates are the databases built in this test process, by name.
var templates struct {
	mu      sync.Mutex
	running bool   // Main is running the tests
	dir     string // holds the template files; removed by Main
	byName  map[string]*template
}

// Main runs the tests of m and then removes the template databases (and stops the
// PostgreSQL cluster the process started, if it started one: pgtest.Cleanup),
// returning the exit code for os.Exit.
func Main(m *testing.M) int {
	templates.mu.Lock()
	templates.running = true
	templates.mu.Unlock()
	code := m.Run()
	if err := pgtest.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
	}
	templates.mu.Lock()
	defer templates.mu.Unlock()
	if templates.dir != "" {
		if err := os.RemoveAll(templates.dir); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
		}
	}
	templates.running = false
	return code
}

// migrated is the name of the template that is only migrated.
const migrated = "migrated"

// Open returns a migrated, empty database of the test's own, opened with opt and
// closed when the test ends. Its clock is the real one; tests that need another
// set d.Now.
func Open(tb testing.TB, opt db.Options) *db.DB {
	tb.Helper()
	return Copy(tb, migrated, nil, opt)
}

// Copy returns a copy of the template database called name, opened with opt and
// closed when the test ends; the test may change it freely. The first call for a
// name builds the template: it migrates a new database and runs build on it (a nil
// build leaves it empty), with the database's clock stopped at the time build sets
// (the real one if it sets none). Later calls with the same name copy it without
// calling build, so the name must say everything build depends on (sizes, the
// day, options). The copy's clock is the real one, as from db.Open.
func Copy(tb testing.TB, name string, build func(*db.DB) error, opt db.Options) *db.DB {
	tb.Helper()
	if Engine() == db.Postgres {
		d, err := db.Open(pgCopy(tb, name, build), opt)
		if err != nil {
			tb.Fatalf("open the test database %q: %v", name, err)
		}
		tb.Cleanup(func() { d.Close() })
		return d
	}
	t, err := lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	t.once.Do(func() { t.err = t.build(build) })
	if t.err != nil {
		tb.Fatalf("build the test database %q: %v", name, t.err)
	}
	d, err := t.copy(tb.TempDir(), opt)
	if err != nil {
		tb.Fatalf("copy the test database %q: %v", name, err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// TakeHeavySlots holds every heavy-read slot of d (db.ReadHeavy) until the
// test ends, so that the next heavy read finds them all taken (db.ErrBusy).
func TakeHeavySlots(tb testing.TB, d *db.DB) {
	tb.Helper()
	release := make(chan struct{})
	busy := make(chan struct{}, 64)
	var wg sync.WaitGroup
	tb.Cleanup(func() { close(release); wg.Wait() })
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := d.ReadHeavy(context.Background(), func(*db.Tx) error { <-release; return nil })
			if errors.Is(err, db.ErrBusy) {
				busy <- struct{}{}
			}
		}()
	}
	<-busy // every slot is held now
}

// CopyPath is Copy for a test that opens the database itself (a command's --db
// flag, another process): it returns where the copy is (a file's path, or on
// PostgreSQL the copy's URL), and does not open it.
func CopyPath(tb testing.TB, name string, build func(*db.DB) error) string {
	tb.Helper()
	if Engine() == db.Postgres {
		return pgCopy(tb, name, build)
	}
	t, err := lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	t.once.Do(func() { t.err = t.build(build) })
	if t.err != nil {
		tb.Fatalf("build the test database %q: %v", name, t.err)
	}
	path := filepath.Join(tb.TempDir(), "stacks.db")
	if err := copyFile(t.path, path); err != nil {
		tb.Fatalf("copy the test database %q: %v", name, err)
	}
	return path
}

// pgCopy returns the URL of a new PostgreSQL database for tb, a copy of the
// template called name (the migrated one for Open's name), built with build the
// first time; it is dropped when tb ends.
func pgCopy(tb testing.TB, name string, build func(*db.DB) error) string {
	tb.Helper()
	if !isRunning() {
		tb.Fatal(errNoMain)
	}
	tmplName := name
	if name == migrated {
		tmplName, build = "", nil
	}
	tmpl, err := pgtest.Template(tmplName, build)
	if err != nil {
		tb.Fatalf("build the test database %q on PostgreSQL: %v", name, err)
	}
	return pgtest.CopyURL(tb, tmpl)
}

var errNoMain = fmt.Errorf("dbtest: the package's TestMain must run its tests with os.Exit(dbtest.Main(m)), which removes the template databases afterwards")

func isRunning() bool {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	return templates.running
}

// lookup returns the template called name, new and unbuilt the first time.
func lookup(name string) (*template, error) {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	if !templates.running {
		return nil, errNoMain
	}
	if t, ok := templates.byName[name]; ok {
		return t, nil
	}
	if templates.dir == "" {
		dir, err := os.MkdirTemp("", "stacks-dbtest-")
		if err != nil {
			return nil, err
		}
		templates.dir, templates.byName = dir, map[string]*template{}
	}
	file := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
	t := &template{path: filepath.Join(templates.dir, fmt.Sprintf("%d-%s.db", len(templates.byName), file))}
	templates.byName[name] = t
	return t, nil
}

// template is one database built once; the tests get copies.
type template struct {
	once sync.Once
	err  error
	path string
}

// build creates the template: a migrated SQLite file that build then fills. It is
// closed afterwards, which checkpoints the WAL into the file, so the file alone is
// the whole database.
func (t *template) build(build func(*db.DB) error) error {
	// NORMAL: the template need not survive a power cut, and its content is the
	// same.
	d, err := db.Open(t.path, db.Options{Synchronous: "NORMAL"})
	if err != nil {
		return err
	}
	if _, err := d.Migrate(context.Background()); err != nil {
		d.Close()
		return err
	}
	if build != nil {
		if err := build(d); err != nil {
			d.Close()
			return err
		}
	}
	if err := d.Close(); err != nil {
		return err
	}
	if _, err := os.Stat(t.path + "-wal"); err == nil {
		return fmt.Errorf("%s-wal is still there after closing the database: the copies would miss its pages", t.path)
	}
	return nil
}

// copy opens a new copy of the template in dir.
func (t *template) copy(dir string, opt db.Options) (*db.DB, error) {
	path := filepath.Join(dir, "stacks.db")
	if err := copyFile(t.path, path); err != nil {
		return nil, err
	}
	return db.Open(path, opt)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, db.PrivateMode)
}
