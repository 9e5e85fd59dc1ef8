package db_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestMigrateRebuildsLoans brings a database holding loans, and rows that
// reference them, from schema 12 to the newest: 0013 rebuilds loans with
// foreign keys off. Every row keeps its id, the references still hold
// (foreign_key_check), patron_id takes NULL, the indexes are back (a double
// checkout is still refused), and foreign keys are on again afterwards.
func TestMigrateRebuildsLoans(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			return err
		}
		for _, m := range ms {
			if m.Version > 12 {
				break
			}
			if _, err := tx.Exec(m.SQL); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 'x')`, m.Version, m.Name); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`INSERT INTO branches (id, code, name) VALUES (1, 'CEN', 'Central')`,
			`INSERT INTO patron_categories (id, code, name) VALUES (1, 'ADULT', 'Adult')`,
			`INSERT INTO patrons (id, card, surname, category_id, home_branch_id, expires_on, created_at) VALUES (7, 'P7', 'Seven', 1, 1, '2030-01-01', 'x')`,
			`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book')`,
			`INSERT INTO records (id, title, created_at, updated_at) VALUES (1, 'T', 'x', 'x')`,
			`INSERT INTO items (id, barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at) VALUES (3, 'I3', 1, 1, 1, 1, 'on_loan', 'x', 'x')`,
			`INSERT INTO loans (id, item_id, patron_id, branch_id, issued_at, due_at, returned_at) VALUES (40, 3, 7, 1, '2026-01-01', '2026-01-22', '2026-01-10')`,
			`INSERT INTO loans (id, item_id, patron_id, branch_id, issued_at, due_at) VALUES (41, 3, 7, 1, '2026-02-01', '2026-02-22')`,
			`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, created_at) VALUES (7, 'overdue', 50, 40, 'x')`,
			`INSERT INTO checkins (at, item_id, loan_id, branch_id, actor) VALUES ('2026-01-10', 3, 40, 1, 'desk')`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	later := 0
	for _, m := range ms {
		if m.Version > 12 {
			later++
		}
	}
	if n, err := d.Migrate(ctx); err != nil || n != later {
		t.Fatalf("Migrate = %d, %v; want %d, nil", n, err, later)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		var ids string
		if err := tx.QueryRow(`SELECT group_concat(id || ':' || patron_id, ',') FROM (SELECT * FROM loans ORDER BY id)`).Scan(&ids); err != nil {
			return err
		}
		if ids != "40:7,41:7" {
			t.Errorf("loans after the rebuild %q, want 40:7,41:7", ids)
		}
		var idx string
		if err := tx.QueryRow(`SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'loans' ORDER BY name)`).Scan(&idx); err != nil {
			return err
		}
		for _, want := range []string{"loans_current_item", "loans_current_patron", "loans_patron_history"} {
			if !strings.Contains(idx, want) {
				t.Errorf("index %s is missing after the rebuild (have %s)", want, idx)
			}
		}
		vs, err := db.Check(tx)
		if err != nil {
			return err
		}
		if len(vs) != 0 {
			t.Errorf("check after the rebuild: %v", vs)
		}
		if _, err := tx.Exec(`UPDATE loans SET patron_id = NULL WHERE id = 40`); err != nil {
			t.Errorf("patron_id is still NOT NULL: %v", err)
		}
		if _, err := tx.Exec(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) VALUES (3, 7, 1, 'y', 'y')`); err == nil || !db.IsUniqueViolation(err) {
			t.Errorf("a second current loan of item 3: err = %v, want a unique violation", err)
		}
		if _, err := tx.Exec(`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, created_at) VALUES (7, 'fee', 1, 999, 'x')`); err == nil {
			t.Error("foreign keys are off after the migration: a ledger row naming no loan was written")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateFillsGaps: a database migrated by a build that lacked a migration
// numbered below its newest (0015 here: two branches landing in the other
// order) gets the missing one applied, not skipped because a newer version is
// recorded. The gap is a migration no later one depends on (0017 reads the
// loans columns 0014 adds, so 0014 cannot be the gap).
func TestMigrateFillsGaps(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	const gap = 15
	err = d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			return err
		}
		for _, m := range ms {
			if m.Version == gap || m.ForeignKeysOff() {
				continue
			}
			if _, err := tx.Exec(m.SQL); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
			if _, err := tx.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 'x')`, m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, m := range ms {
		if m.Version == gap || m.ForeignKeysOff() {
			want++
		}
	}
	if n, err := d.Migrate(ctx); err != nil || n != want {
		t.Fatalf("Migrate = %d, %v; want %d (the gap and the rebuilds), nil", n, err, want)
	}
	var versions int
	err = d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&versions)
	})
	if err != nil || versions != len(ms) {
		t.Fatalf("schema_migrations holds %d versions (%v), want all %d", versions, err, len(ms))
	}
	if n, err := d.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("second Migrate = %d, %v; want 0", n, err)
	}
}
