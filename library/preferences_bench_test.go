package library_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/library"
)

// BenchmarkPreferences times a request's preferences: from the cache (the
// version check, a single-row read, on every request, as several servers on
// one database need) and read through (the whole table, as CGI does).
func BenchmarkPreferences(b *testing.B) {
	for _, e := range pgtest.Engines() {
		url := filepath.Join(b.TempDir(), "stacks.db")
		if e == db.Postgres {
			url = pgtest.URL(b)
		}
		d, err := db.Open(url, db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		if _, err := d.Migrate(context.Background()); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name   string
			cached bool
		}{{"cached", true}, {"read-through", false}} {
			b.Run(e.String()+"/"+mode.name, func(b *testing.B) {
				c := library.NewPreferenceCache(mode.cached)
				for i := 0; i < b.N; i++ {
					if _, err := c.Get(context.Background(), d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
