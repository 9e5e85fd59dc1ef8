package db_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// BenchmarkTxStatements times what every desk request does many times on
// SQLite, without an fsync in the way: a read transaction with three short
// statements, and the same through ReadOne. It guards SQLite's hot path against
// work added for other engines (the placeholder rewrite is PostgreSQL's
// only).
func BenchmarkTxStatements(b *testing.B) {
	d := mustOpenDB(b)
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			err := d.Read(ctx, func(tx *db.Tx) error {
				var v string
				for _, name := range []string{"timezone", "library_name", "fines_limit_cents"} {
					if err := tx.QueryRow(`SELECT value FROM preferences WHERE name = ?`, name).Scan(&v); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadOne", func(b *testing.B) {
		for b.Loop() {
			err := d.ReadOne(ctx, func(tx *db.Tx) error {
				var v string
				return tx.QueryRow(`SELECT value FROM preferences WHERE name = ?`, "timezone").Scan(&v)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
