package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/passwords"

	"golang.org/x/crypto/bcrypt"
)

// newDemoDB creates a small demo library in a file under tb.TempDir() and returns
// its path, closed.
func newDemoDB(tb testing.TB) string {
	tb.Helper()
	// The demo's staff accounts need password hashes; bcrypt at its real cost takes
	// seconds under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	path := filepath.Join(tb.TempDir(), "library.db")
	d, err := db.Open(path, db.Options{Synchronous: "NORMAL"})
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 200, Patrons: 40}); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestCheckCommand: stacks check passes the demo library, and lists every violation
// of a broken one with exit status 1.
func TestCheckCommand(t *testing.T) {
	ctx := context.Background()
	path := newDemoDB(t)

	t.Run("OK", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(ctx, []string{"check", "--db", path}, &out, &out); err != nil {
			t.Fatalf("stacks check on the demo library: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "no violations") {
			t.Errorf("output %q does not say the library is sound", out.String())
		}
	})

	t.Run("ErrViolations", func(t *testing.T) {
		broken := filepath.Join(t.TempDir(), "broken.db")
		copyDB(t, path, broken)
		c, err := sql.Open("sqlite", broken)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			`UPDATE items SET status = 'on_loan' WHERE barcode IN ('I00001', 'I00002')`,
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES ((SELECT id FROM patrons WHERE card = 'P0001'), 'payment', -100, '2026-01-01T00:00:00Z')`,
			`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at) VALUES (99999, 1, 1, '2026-01-01T00:00:00Z', '2026-01-22T00:00:00Z', '2026-01-02T00:00:00Z')`,
		} {
			if _, err := c.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		c.Close()
		var out bytes.Buffer
		err = run(ctx, []string{"check", "--db", broken}, &out, &out)
		if exitCode(err) != 1 {
			t.Fatalf("stacks check on a broken library: %v (exit %d), want exit status 1\n%s", err, exitCode(err), out.String())
		}
		for _, want := range []string{
			"item-on-loan-without-loan: item I00001 ",
			"item-on-loan-without-loan: item I00002 ",
			"ledger-overpaid: ",
			"loan-without-item: ",
			"foreign-key: ",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		if !strings.Contains(err.Error(), "5 violation(s)") {
			t.Errorf("error %q does not count the 5 violations", err)
		}
	})

	t.Run("ErrNoDatabase", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.db")
		var out bytes.Buffer
		err := run(ctx, []string{"check", "--db", missing}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("stacks check on a missing file: %v", err)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Error("stacks check created the database it was asked to check")
		}
	})
}

// TestCheckNamesEngine (both engines): stacks check on a sound library names the
// engine's own checks it ran, SQLite's or PostgreSQL's, and not the other's.
func TestCheckNamesEngine(t *testing.T) {
	ctx := context.Background()
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			var target string
			want, other := "SQLite integrity and foreign keys", "PostgreSQL"
			if e == db.Postgres {
				target = pgtest.URL(t)
				want, other = "PostgreSQL indexes valid and constraints validated", "SQLite"
			} else {
				target = filepath.Join(t.TempDir(), "library.db")
				d, err := db.Open(target, db.Options{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = d.Migrate(ctx)
				d.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			if err := run(ctx, []string{"check", "--db", target}, &out, &out); err != nil {
				t.Fatalf("stacks check on a new %s library: %v\n%s", e, err, out.String())
			}
			if !strings.Contains(out.String(), "no violations ("+want+"; ") {
				t.Errorf("stacks check on %s does not name its first checks %q:\n%s", e, want, out.String())
			}
			if strings.Contains(out.String(), other) {
				t.Errorf("stacks check on %s names %s:\n%s", e, other, out.String())
			}
		})
	}
}

func copyDB(tb testing.TB, from, to string) {
	tb.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// TestBackupCommand runs stacks backup while desks check items out and in, then
// checks the copy: SQLite's checks and the circulation invariants pass, and it holds
// every checkout committed before the backup began.
func TestBackupCommand(t *testing.T) {
	ctx := context.Background()
	path := newDemoDB(t)
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	svc := circulation.NewService(d, nil)
	var deskID int64
	var items []string
	var patronIDs []int64
	err = d.Read(ctx, func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT id FROM staff_users WHERE username = 'desk'`).Scan(&deskID); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
			WHERE t.code = 'BOOK' AND i.status = 'available' AND i.current_branch_id = 1 AND i.home_branch_id = 1
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
			ORDER BY i.id LIMIT 40`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			rows.Scan(&b)
			items = append(items, b)
		}
		for _, card := range []string{"P0001", "P0003"} {
			var id int64
			if err := tx.QueryRow(`SELECT id FROM patrons WHERE card = ?`, card).Scan(&id); err != nil {
				return err
			}
			patronIDs = append(patronIDs, id)
		}
		return rows.Err()
	})
	if err != nil || len(items) < 40 {
		t.Fatalf("choosing items: %v (%d found)", err, len(items))
	}
	desk := stacks.Actor{StaffID: deskID, Name: "desk", BranchID: 1}

	// Two desks, each with its own items, lend and return them until the backups
	// are done.
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(mine []string, patronID int64) {
			defer wg.Done()
			for round := 0; !stop.Load(); round++ {
				for _, b := range mine {
					var err error
					if round%2 == 0 {
						_, err = svc.Checkout(ctx, circulation.CheckoutRequest{Actor: desk, PatronID: patronID, Barcode: b})
					} else {
						_, err = svc.Checkin(ctx, circulation.CheckinRequest{Actor: desk, Barcode: b})
					}
					if err != nil {
						t.Errorf("round %d, %s: %v", round, b, err)
						return
					}
					ops.Add(1)
				}
			}
		}(items[w*20:(w+1)*20], patronIDs[w])
	}

	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		var loansBefore int
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM loans`).Scan(&loansBefore)
		}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))
		var buf bytes.Buffer
		if err := run(ctx, []string{"backup", "--db", path, out}, &buf, &buf); err != nil {
			t.Fatalf("stacks backup: %v\n%s", err, buf.String())
		}
		// The copy holds personal data and the staff's sessions: its owner's only.
		if fi, err := os.Stat(out); err != nil {
			t.Fatal(err)
		} else if fi.Mode().Perm() != db.PrivateMode {
			t.Errorf("backup %d: mode %v, want %v", i, fi.Mode().Perm(), db.PrivateMode)
		}
		buf.Reset()
		if err := run(ctx, []string{"check", "--db", out}, &buf, &buf); err != nil {
			t.Fatalf("stacks check on backup %d: %v\n%s", i, err, buf.String())
		}
		c, err := db.Open(out, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var loans int
		c.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT count(*) FROM loans`).Scan(&loans) })
		c.Close()
		if loans < loansBefore {
			t.Errorf("backup %d has %d loans, but %d were committed before it began", i, loans, loansBefore)
		}
	}
	stop.Store(true)
	wg.Wait()
	if ops.Load() == 0 {
		t.Fatal("no checkout or checkin went through while the backups ran")
	}
	t.Logf("%d checkouts and checkins during 3 backups", ops.Load())

	var buf bytes.Buffer
	if err := run(ctx, []string{"backup", "--db", path, filepath.Join(dir, "backup-0.db")}, &buf, &buf); err == nil {
		t.Error("stacks backup overwrote an existing file")
	}
	if err := run(ctx, []string{"backup", "--db", path}, &buf, &buf); exitCode(err) != 2 {
		t.Errorf("stacks backup without OUT: %v, want a usage error", err)
	}
}
