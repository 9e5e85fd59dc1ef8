// Package demotest gives tests a demo library of their own: a copy of one built
// once per test process for each size and day (db/dbtest does the building and
// copying). The package's TestMain must run its tests through dbtest.Main.
package demotest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/passwords"
)

// Demo returns a copy of the demo library of size opt created at now, opened with
// dopt and closed when the test ends; the test may change it freely. Its clock
// stands at now; tests that move time set d.Now.
//
// The library is the same as demo.Create on a new database at now would make: the
// template is made that way, with the password hashes at passwords.BcryptCost as it is
// when the first test asks (TestMain sets it).
func Demo(tb testing.TB, opt demo.Options, now time.Time, dopt db.Options) *db.DB {
	tb.Helper()
	d := dbtest.Copy(tb, name(opt, now), build(opt, now), dopt)
	d.Now = func() time.Time { return now }
	return d
}

// Path is Demo for a test that opens the database itself (a command's --db flag):
// it returns where the copy is.
func Path(tb testing.TB, opt demo.Options, now time.Time) string {
	tb.Helper()
	return dbtest.CopyPath(tb, name(opt, now), build(opt, now))
}

// name says everything the library depends on: its size, the instant of its
// creation, and the password hashes' cost.
func name(opt demo.Options, now time.Time) string {
	return fmt.Sprintf("demo-%dt-%dp-%s-bcrypt%d", opt.Titles, opt.Patrons, now.UTC().Format("20060102T150405.000000000"), passwords.BcryptCost)
}

func build(opt demo.Options, now time.Time) func(*db.DB) error {
	return func(d *db.DB) error {
		d.Now = func() time.Time { return now }
		_, err := demo.Create(context.Background(), d, opt)
		return err
	}
}

// AddRecords adds n catalogue records without copies, by 'Anon', subject
// Marsupials, in one write; title gives record i's title. Tests of what a
// search says past its limits (catalog.RankLimit, catalog.ListLimit) make
// their many matches with it.
func AddRecords(tb testing.TB, d *db.DB, n int, title func(i int) string) {
	tb.Helper()
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		st, err := tx.Prepare(`INSERT INTO records (title, author, subjects, created_at, updated_at)
			VALUES (?, 'Anon', 'Marsupials', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
		if err != nil {
			return err
		}
		for i := range n {
			if _, err := st.Exec(title(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
