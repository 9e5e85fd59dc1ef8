package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
)

// demoDBOn is a demo library of size opt created on dbtest.Monday, on engine e, the
// test's own. SQLite's is a copy from demotest. PostgreSQL's is a new pgtest
// database holding the same library's catalogue, copied from SQLite's
// (copyCatalogue): demo.Create does not run on PostgreSQL yet, and a copy gives
// both engines the same records with the same ids, so their results can be
// compared. This is the one place catalog's tests choose an engine: when
// demotest chooses it, this becomes a call to demotest.
func demoDBOn(tb testing.TB, e db.Engine, opt demo.Options, dopt db.Options) *db.DB {
	tb.Helper()
	src := demotest.Demo(tb, opt, dbtest.Monday, dopt)
	if e == db.SQLite {
		return src
	}
	d := pgtest.Open(tb, dopt)
	d.Now = func() time.Time { return dbtest.Monday }
	if err := copyCatalogue(context.Background(), src, d); err != nil {
		tb.Fatalf("copy the demo catalogue to PostgreSQL: %v", err)
	}
	return d
}

// catalogueTables are what a search reads, in an order that keeps the foreign
// keys: no patrons, loans or holds.
var catalogueTables = []string{"branches", "item_types", "records", "items"}

// copyCatalogue copies catalogueTables from src into the empty database dst,
// every column, in batches of rows, and sets each table's id sequence past them.
func copyCatalogue(ctx context.Context, src, dst *db.DB) error {
	for _, table := range catalogueTables {
		var cols []string
		var rows [][]any
		err := src.Read(ctx, func(tx *db.Tx) error {
			r, err := tx.Query(`SELECT * FROM ` + table + ` ORDER BY 1`)
			if err != nil {
				return err
			}
			defer r.Close()
			if cols, err = r.Columns(); err != nil {
				return err
			}
			for r.Next() {
				row := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range row {
					ptrs[i] = &row[i]
				}
				if err := r.Scan(ptrs...); err != nil {
					return err
				}
				rows = append(rows, row)
			}
			return r.Err()
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		one := "(?" + strings.Repeat(", ?", len(cols)-1) + ")"
		const batch = 500
		for start := 0; start < len(rows); start += batch {
			part := rows[start:min(start+batch, len(rows))]
			args := make([]any, 0, len(part)*len(cols))
			for _, row := range part {
				args = append(args, row...)
			}
			err := dst.Write(ctx, func(tx *db.Tx) error {
				_, err := tx.Exec(`INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`) VALUES `+
					one+strings.Repeat(", "+one, len(part)-1), args...)
				return err
			})
			if err != nil {
				return fmt.Errorf("copy %s: %w", table, err)
			}
		}
		// The rows came with their ids: the next row a test adds takes the one after.
		err = dst.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`SELECT setval(pg_get_serial_sequence('` + table + `', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM ` + table + `), false)`)
			return err
		})
		if err != nil {
			return fmt.Errorf("set the ids of %s: %w", table, err)
		}
	}
	return nil
}

// forEngines runs test once for each engine the run selects (pgtest.Engines),
// as a subtest named after it.
func forEngines(t *testing.T, test func(t *testing.T, e db.Engine)) {
	t.Helper()
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) { test(t, e) })
	}
}

// smallDemo is the size of mustDemoDB's library.
var smallDemo = demo.Options{Titles: 100, Patrons: 10}
