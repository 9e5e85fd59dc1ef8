package privacy_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

var ctx = context.Background()

// mustOpenDemo opens a copy of the small demo library (50 titles, 20 patrons)
// created on dbtest.Monday.
func mustOpenDemo(tb testing.TB) *db.DB {
	tb.Helper()
	return demotest.Demo(tb, demo.Options{Titles: 50, Patrons: 20}, dbtest.Monday, db.Options{Synchronous: "NORMAL"})
}

func exec(tb testing.TB, d *db.DB, q string, args ...any) sql.Result {
	tb.Helper()
	var res sql.Result
	err := d.Write(ctx, func(tx *db.Tx) error {
		var err error
		res, err = tx.Exec(q, args...)
		return err
	})
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return res
}

// insertID runs an INSERT and returns the new row's id (read with RETURNING, which
// both engines run; PostgreSQL's driver has no LastInsertId).
func insertID(tb testing.TB, d *db.DB, q string, args ...any) int64 {
	tb.Helper()
	var id int64
	err := d.Write(ctx, func(tx *db.Tx) error { return tx.QueryRow(q+" RETURNING id", args...).Scan(&id) })
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return id
}

func queryInt(tb testing.TB, d *db.DB, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	err := d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(q, args...).Scan(&n) })
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// queryText returns every row of a one-column text query, in order.
func queryText(tb testing.TB, d *db.DB, q string, args ...any) []string {
	tb.Helper()
	var out []string
	err := d.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s sql.NullString
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s.String)
		}
		return rows.Err()
	})
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return out
}

// newPatron adds a patron (Adult, Central) with the given card and surname,
// whose card expires a year after created, and returns the id.
func newPatron(tb testing.TB, d *db.DB, card, surname string, created time.Time) int64 {
	tb.Helper()
	phone := card[max(0, len(card)-6):] // the card's last six characters
	return insertID(tb, d, `INSERT INTO patrons (card, surname, first_name, email, phone, address, category_id, home_branch_id, expires_on, created_at)
		VALUES (?, ?, 'Quintessa', lower(?) || '@example.org', '+44 7700 ' || ?, '1 Mulberry Lane',
			(SELECT id FROM patron_categories WHERE code = 'ADULT' OR name = 'Adult' LIMIT 1), (SELECT id FROM branches WHERE code = 'CEN'), ?, ?)`,
		card, surname, surname, phone, created.UTC().AddDate(1, 0, 0).Format(time.DateOnly), db.FormatTime(created))
}

// freeItem returns the id of an available item nobody has borrowed, a new one
// each call.
func freeItem(tb testing.TB, d *db.DB) int64 {
	tb.Helper()
	return queryInt(tb, d, `SELECT i.id FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE i.status = 'available' AND t.not_for_loan = 0 AND NOT EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id)
		ORDER BY i.id DESC LIMIT 1`)
}

// addLoan records a loan of a new item to patron, issued at issued and returned
// at returned (current when zero), and returns its id.
func addLoan(tb testing.TB, d *db.DB, patron int64, issued, returned time.Time) int64 {
	tb.Helper()
	item := freeItem(tb, d)
	var ret any
	if !returned.IsZero() {
		ret = db.FormatTime(returned)
	} else {
		exec(tb, d, `UPDATE items SET status = 'on_loan' WHERE id = ?`, item)
	}
	id := insertID(tb, d, `INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at, return_branch_id)
		VALUES (?, ?, (SELECT id FROM branches WHERE code = 'CEN'), ?, ?, ?, CASE WHEN CAST(?5 AS TEXT) IS NULL THEN NULL ELSE (SELECT id FROM branches WHERE code = 'CEN') END)`,
		item, patron, db.FormatTime(issued), db.FormatTime(issued.AddDate(0, 0, 21)), ret)
	if !returned.IsZero() {
		exec(tb, d, `INSERT INTO checkins (at, item_id, loan_id, branch_id, actor) VALUES (?, ?, ?, (SELECT id FROM branches WHERE code = 'CEN'), 'desk')`,
			db.FormatTime(returned), item, id)
	}
	return id
}

// mustCheck runs every invariant `stacks check` runs and fails on any violation.
func mustCheck(tb testing.TB, d *db.DB) {
	tb.Helper()
	err := d.Read(ctx, func(tx *db.Tx) error {
		for _, check := range []func(*db.Tx) ([]stacks.Violation, error){db.Check, circulation.Check, holds.Check, patrons.Check} {
			vs, err := check(tx)
			if err != nil {
				return err
			}
			for _, v := range vs {
				tb.Errorf("violation %s: %s", v.Check, v.Detail)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// instr is the function giving the position of its second argument in its
// first (0 if absent), as the tests' engine (dbtest.Engine) spells it: SQLite's
// instr, PostgreSQL's strpos.
var instr = map[db.Engine]string{db.SQLite: "instr", db.Postgres: "strpos"}[dbtest.Engine()]

func days(n int) time.Time { return dbtest.Monday.AddDate(0, 0, -n) }

// TestMain removes the demo library templates after the tests.
func TestMain(m *testing.M) {
	// The demo's staff passwords are hashed as it is created: at bcrypt's real
	// cost that takes seconds under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}
