package load_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/load"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
	"github.com/stacks-ils/stacks/web"
)

func TestMain(m *testing.M) {
	// The race detector makes bcrypt many times slower; tests need no strong hashes.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(pgtest.Main(m))
}

// demoLibrary creates a small demo library in a file of its own.
func demoLibrary(t *testing.T) (*db.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stacks.db")
	d, err := db.Open(path, db.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 100, Patrons: 60}); err != nil {
		t.Fatal(err)
	}
	return d, path
}

func loanCount(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM loans WHERE returned_at IS NULL`).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStacksHTTP runs the CICO workflow against the real staff site on a demo
// library, as each kind of desk works it (pages, and the desk script's one
// request a scan): the texts the load tool looks for are the ones Stacks
// shows, and the shares read from the database lend without a confirmation.
func TestStacksHTTP(t *testing.T) {
	for _, desk := range []load.Desk{load.DeskPages, load.DeskScript} {
		t.Run(desk.String(), func(t *testing.T) { testStacksHTTP(t, desk) })
	}
}

func testStacksHTTP(t *testing.T, desk load.Desk) {
	d, path := demoLibrary(t)
	shares, err := load.SharesFromDB(context.Background(), path, load.ShareQuery{Branch: "CEN", Items: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) < 4 {
		t.Fatalf("%d shares in the demo library, want at least 4", len(shares))
	}
	loans := loanCount(t, d)
	srv := httptest.NewServer(web.New(web.Config{DB: d, CachePreferences: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer srv.Close()
	rep, err := load.Run(context.Background(), load.Config{
		Users: 4, Shares: shares, Dial: load.HTTPDeskDialer(srv.URL, "desk", "desk", desk), Count: 60,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ErrorCount() != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	co, ci := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin]
	if co.Count+ci.Count != 60 || co.Count < 30 || !co.ServerKnown || co.ServerMedian <= 0 || co.ServerMedian > co.Median {
		t.Errorf("check-out %+v\ncheck-in %+v", co, ci)
	}
	if got := loanCount(t, d); got != loans {
		t.Errorf("%d current loans after the run, %d before: the run should leave the library as it found it", got, loans)
	}
}

// TestStacksPostgresTwoServers runs the workflow against two staff sites on one
// PostgreSQL database, the users spread over them (a consortium behind a
// balancer), with the shares read through the database's URL: no errors, and
// the library left as found.
func TestStacksPostgresTwoServers(t *testing.T) {
	url := pgtest.URL(t)
	d, err := db.Open(url, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 100, Patrons: 60}); err != nil {
		t.Fatal(err)
	}
	shares, err := load.SharesFromDB(ctx, url, load.ShareQuery{Branch: "CEN", Items: 3, Max: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) < 4 {
		t.Fatalf("%d shares in the demo library, want 4", len(shares))
	}
	loans := loanCount(t, d)
	var dialers []load.Dialer
	for range 2 {
		// Each server has its own pools on the database, as two processes would.
		sd, err := db.Open(url, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sd.Close() })
		srv := httptest.NewServer(web.New(web.Config{DB: sd, CachePreferences: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
		t.Cleanup(srv.Close)
		dialers = append(dialers, load.HTTPDialer(srv.URL, "desk", "desk"))
	}
	rep, err := load.Run(ctx, load.Config{Users: 4, Shares: shares, Dial: load.RoundRobin(dialers...), Count: 40})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ErrorCount() != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	if co, ci := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin]; co.Count+ci.Count != 40 {
		t.Errorf("check-out %+v\ncheck-in %+v", co, ci)
	}
	if got := loanCount(t, d); got != loans {
		t.Errorf("%d current loans after the run, %d before: the run should leave the library as it found it", got, loans)
	}
}

// TestStacksSIP runs the workflow over SIP2 against the real SIP server.
func TestStacksSIP(t *testing.T) {
	d, path := demoLibrary(t)
	shares, err := load.SharesFromDB(context.Background(), path, load.ShareQuery{Branch: "CEN", Items: 2})
	if err != nil {
		t.Fatal(err)
	}
	loans := loanCount(t, d)
	srv := sip.New(sip.Config{DB: d, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; !errors.Is(err, sip.ErrServerClosed) {
			t.Errorf("SIP server: %v", err)
		}
	}()
	rep, err := load.Run(context.Background(), load.Config{
		Users: 3, Shares: shares,
		Dial:  load.SIPDialer(load.SIPConfig{Addr: ln.Addr().String(), User: "kiosk", Password: "kiosk", Institution: "CEN", PIN: "1234"}),
		Count: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ErrorCount() != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	co, ci := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin]
	if co.Count+ci.Count != 40 || co.Count < 20 || co.ServerKnown || rep.Ops[load.OpPatron].Count == 0 {
		t.Errorf("check-out %+v\ncheck-in %+v", co, ci)
	}
	if got := loanCount(t, d); got != loans {
		t.Errorf("%d current loans after the run, %d before", got, loans)
	}

	t.Run("WrongPIN", func(t *testing.T) {
		rep, err := load.Run(context.Background(), load.Config{
			Users: 1, Shares: shares,
			Dial:  load.SIPDialer(load.SIPConfig{Addr: ln.Addr().String(), User: "kiosk", Password: "kiosk", Institution: "CEN", PIN: "9999"}),
			Count: 2, Duration: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Ops[load.OpPatron].Errors == 0 || rep.GaveUp != 1 {
			t.Errorf("patron scans with a wrong PIN: %+v, gave up %d", rep.Ops[load.OpPatron], rep.GaveUp)
		}
	})
}

func TestSharesFromDB(t *testing.T) {
	_, path := demoLibrary(t)
	ctx := context.Background()
	shares, err := load.SharesFromDB(ctx, path, load.ShareQuery{Branch: "CEN", Items: 2, Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) != 5 {
		t.Fatalf("%d shares, want 5", len(shares))
	}
	seen := map[string]bool{}
	for _, s := range shares {
		for _, k := range append([]string{s.Card}, s.Barcodes...) {
			if seen[k] {
				t.Errorf("%s is in two shares", k)
			}
			seen[k] = true
		}
		if len(s.Barcodes) != 2 {
			t.Errorf("share %v: want 2 items", s)
		}
	}
	// The fixture patrons who may not borrow freely are never chosen.
	for _, card := range []string{"P0002", "P0004", "P0005"} {
		if seen[card] {
			t.Errorf("%s (owes fines, expired or blocked) is in a share", card)
		}
	}

	t.Run("ListFile", func(t *testing.T) {
		var buf bytes.Buffer
		if err := load.WriteShares(&buf, shares); err != nil {
			t.Fatal(err)
		}
		got, err := load.ReadShares(strings.NewReader(buf.String() + "\n# a comment\n\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, shares) {
			t.Errorf("read back %v, want %v", got, shares)
		}
		if _, err := load.ReadShares(strings.NewReader("P0001\n")); err == nil {
			t.Error("a line with a card and no item: no error")
		}
	})
	t.Run("NoDatabase", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.db")
		_, err := load.SharesFromDB(ctx, missing, load.ShareQuery{Branch: "CEN", Items: 2})
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("err = %v", err)
		}
		if _, statErr := os.Stat(missing); statErr == nil {
			t.Error("SharesFromDB created the missing database file")
		}
	})
}

// TestWatchPostgres (PostgreSQL only: the counters it reads are PostgreSQL's;
// SQLite has no checkpointer or autovacuum to report): a checkpoint begun in
// the watched window is counted (the run's report says so), and the line names
// what autovacuum did.
func TestWatchPostgres(t *testing.T) {
	url := pgtest.URL(t)
	w, err := load.WatchPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := db.Open(url, db.Options{CommitEach: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkpoints := func() (n int64) {
		t.Helper()
		if err := d.ReadOne(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT CAST(checkpoints_timed + checkpoints_req AS BIGINT) FROM pg_stat_bgwriter`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	w.Start()
	before := checkpoints()
	if err := d.ReadOne(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`CHECKPOINT`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The checkpointer counts a checkpoint in its statistics after it has told
	// the waiting CHECKPOINT that it is done: on a busy machine the count lags
	// the statement's return.
	waittest.For(t, "the CHECKPOINT in pg_stat_bgwriter", func() bool { return checkpoints() > before })
	a, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if a.Checkpoints < 1 {
		t.Errorf("%d checkpoints counted in a window holding one", a.Checkpoints)
	}
	got := load.PGActivity{Checkpoints: 1, Vacuumed: []string{"items", "loans"}}.String()
	if want := "1 checkpoint begun; autovacuum items, loans; autoanalyze of no table"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
