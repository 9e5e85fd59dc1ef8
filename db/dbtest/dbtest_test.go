package dbtest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

func count(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	if err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM branches`).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCopy: the template is built once, and each copy is the test's own: a
// write to one shows in neither the template nor another copy.
func TestCopy(t *testing.T) {
	builds := 0
	build := func(d *db.DB) error {
		builds++
		return d.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central')`)
			return err
		})
	}
	a := dbtest.Copy(t, "dbtest-one-branch", build, db.Options{})
	if err := a.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('EAS', 'East')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b := dbtest.Copy(t, "dbtest-one-branch", build, db.Options{})
	if builds != 1 {
		t.Errorf("built %d times, want once", builds)
	}
	if n := count(t, a); n != 2 {
		t.Errorf("the copy written to has %d branches, want 2", n)
	}
	if n := count(t, b); n != 1 {
		t.Errorf("a later copy has %d branches, want the template's 1", n)
	}
	if a.Path() == b.Path() {
		t.Errorf("two copies share the file %s", a.Path())
	}
}

// TestOpen: a migrated, empty database.
func TestOpen(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	if n, err := d.Migrate(context.Background()); err != nil || n != 0 {
		t.Errorf("Migrate on Open's database: %d applied, %v; want it up to date", n, err)
	}
	if n := count(t, d); n != 0 {
		t.Errorf("%d branches, want none", n)
	}
}

// TestClock: a Clock stands where it is set and moves by what it is advanced;
// OpenAt's database reads the time it was given.
func TestClock(t *testing.T) {
	c := dbtest.NewClock(dbtest.Monday)
	c.Advance(time.Hour)
	if got, want := c.Now(), dbtest.Monday.Add(time.Hour); !got.Equal(want) {
		t.Errorf("after Advance: %v, want %v", got, want)
	}
	c.Set(dbtest.Monday)
	if got := c.Now(); !got.Equal(dbtest.Monday) {
		t.Errorf("after Set: %v, want %v", got, dbtest.Monday)
	}
	if dbtest.Monday.Weekday() != time.Monday {
		t.Errorf("Monday is a %v", dbtest.Monday.Weekday())
	}
	d := dbtest.OpenAt(t, dbtest.Monday, db.Options{})
	if got := d.Now(); !got.Equal(dbtest.Monday) {
		t.Errorf("OpenAt's clock: %v, want %v", got, dbtest.Monday)
	}
}
