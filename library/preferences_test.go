package library_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/library"
)

// TestPreferenceCacheAcrossServers: two processes on one database (two stacks
// serve on PostgreSQL; two FastCGI processes on one SQLite file), each with its
// own preference cache. A preference one changes, through SetPreference or by
// hand in SQL, is in the other's next Get; while nothing changes, a Get costs
// one statement (the version) and reads no preferences.
func TestPreferenceCacheAcrossServers(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			ctx := context.Background()
			url := filepath.Join(t.TempDir(), "stacks.db")
			if e == db.Postgres {
				url = pgtest.URL(t)
			}
			open := func() *db.DB {
				d, err := db.Open(url, db.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Close() })
				if _, err := d.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				return d
			}
			a, b := open(), open()
			cacheA, cacheB := library.NewPreferenceCache(true), library.NewPreferenceCache(true)
			get := func(c *library.PreferenceCache, d *db.DB) library.Preferences {
				t.Helper()
				p, err := c.Get(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			change := func(q string, args ...any) {
				t.Helper()
				if err := a.Write(ctx, func(tx *db.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
					t.Fatal(err)
				}
			}
			if p := get(cacheB, b); p.LibraryName != "Stacks Library" {
				t.Fatalf("B before: %q", p.LibraryName)
			}
			get(cacheA, a)

			t.Run("Cached", func(t *testing.T) {
				sctx, stats := db.WithStats(ctx)
				if _, err := cacheB.Get(sctx, b); err != nil {
					t.Fatal(err)
				}
				if n := stats.Statements(); n != 1 {
					t.Errorf("a Get with nothing changed ran %d statements, want 1 (the version)", n)
				}
			})
			t.Run("SetPreference", func(t *testing.T) {
				if err := a.Write(ctx, func(tx *db.Tx) error { return library.SetPreference(tx, "library_name", "Riverside") }); err != nil {
					t.Fatal(err)
				}
				cacheA.Invalidate()
				if p := get(cacheB, b); p.LibraryName != "Riverside" {
					t.Errorf("B after A set the name: %q", p.LibraryName)
				}
			})
			t.Run("UpdateBySQL", func(t *testing.T) {
				change(`UPDATE preferences SET value = '900' WHERE name = 'fines_limit_cents'`)
				if p := get(cacheB, b); p.FinesLimitCents != 900 {
					t.Errorf("B after an UPDATE on A: limit %d", p.FinesLimitCents)
				}
			})
			t.Run("Delete", func(t *testing.T) {
				change(`DELETE FROM preferences WHERE name = 'library_name'`)
				if p := get(cacheB, b); p.LibraryName != "Stacks Library" {
					t.Errorf("B after a DELETE on A: %q, want the default", p.LibraryName)
				}
			})
			t.Run("Insert", func(t *testing.T) {
				change(`INSERT INTO preferences (name, value) VALUES ('desk_idle_minutes', '17')`)
				if p := get(cacheB, b); p.DeskIdleMinutes != 17 {
					t.Errorf("B after an INSERT on A: %d", p.DeskIdleMinutes)
				}
			})
		})
	}
}
