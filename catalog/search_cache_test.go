package catalog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestSearchPlanningKept (PostgreSQL only: SQLite's planner has none of these
// settings; TestSearchKeptMatches checks kept searches' results on both): a
// search whose matches are kept runs no countBest, and its later statements
// (another page, another order) are still planned without hash or merge joins,
// JIT or parallel workers, because the search's first statement set them
// (postgresSearch.settings). It fails if only countBest sets them.
func TestSearchPlanningKept(t *testing.T) {
	if !pgtest.Selected(db.Postgres) {
		t.Skipf("PostgreSQL's planner settings; this run selects only %v", pgtest.Engines())
	}
	d := demoDBOn(t, db.Postgres, smallDemo, db.Options{})
	var statements []int64
	for _, kept := range []bool{false, true} {
		ctx, stats := db.WithStats(context.Background())
		var hash, merge, jit, workers string
		if err := d.Read(ctx, func(tx *db.Tx) error {
			if _, err := catalog.Search(tx, catalog.SearchQuery{Text: "the", Page: 2}); err != nil {
				return err
			}
			return tx.QueryRow(`SELECT current_setting('enable_hashjoin'), current_setting('enable_mergejoin'),
				current_setting('jit'), current_setting('max_parallel_workers_per_gather')`).Scan(&hash, &merge, &jit, &workers)
		}); err != nil {
			t.Fatal(err)
		}
		statements = append(statements, stats.Statements())
		if hash != "off" || merge != "off" || jit != "off" || workers != "0" {
			t.Errorf("matches kept %v: after the search, hash joins %s, merge joins %s, JIT %s, parallel workers %s; want off, off, off, 0",
				kept, hash, merge, jit, workers)
		}
	}
	// The second search found its matches kept: it ran fewer statements
	// (no countBest).
	if statements[1] >= statements[0] {
		t.Errorf("statements: %d, then %d with the matches kept; want fewer", statements[0], statements[1])
	}
}

// TestSearchKeptMatches: what Search keeps of a search's matches (under the
// catalogue's version, migration 0022) is read again after any change to the
// records, and never holds what a write transaction saw and then rolled back.
func TestSearchKeptMatches(t *testing.T) { forEngines(t, testSearchKeptMatches) }

func testSearchKeptMatches(t *testing.T, e db.Engine) {
	// Each write its own transaction (not group commit's): Search's in the
	// transaction that rolls back must keep nothing.
	d := demoDBOn(t, e, smallDemo, db.Options{CommitEach: true})
	ctx := context.Background()
	search := func(q catalog.SearchQuery) catalog.SearchResult {
		t.Helper()
		var res catalog.SearchResult
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err }); err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return res
	}
	insert := func(tx *db.Tx, title string) error {
		_, err := tx.Exec(`INSERT INTO records (id, title, author, subjects, isbn, created_at, updated_at)
			SELECT max(id) + 1, ?, 'Test, Author', '', '', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM records`, title)
		return err
	}
	write := func(fn func(*db.Tx) error) {
		t.Helper()
		if err := d.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	titles := func(res catalog.SearchResult) []string {
		var ts []string
		for _, h := range res.Hits {
			ts = append(ts, h.Title)
		}
		return ts
	}

	t.Run("AddedRecord", func(t *testing.T) {
		for range 2 { // the second is from what the first kept
			if res := search(catalog.SearchQuery{Text: "zyzzyva"}); res.Total != 0 {
				t.Fatalf("before: %d found", res.Total)
			}
		}
		write(func(tx *db.Tx) error { return insert(tx, "Zyzzyva Days") })
		if res := search(catalog.SearchQuery{Text: "zyzzyva"}); res.Total != 1 || res.Hits[0].Title != "Zyzzyva Days" {
			t.Fatalf("after adding: %d found, %v", res.Total, titles(res))
		}
	})
	t.Run("ChangedTitle", func(t *testing.T) {
		q := catalog.SearchQuery{Text: "title:left", Sort: "title"}
		before := search(q)
		search(q)
		write(func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE records SET title = 'Aaa left first' WHERE id = (SELECT min(id) FROM records WHERE title LIKE '%Zyzzyva%')`)
			return err
		})
		after := search(q)
		if after.Total != before.Total+1 || len(after.Hits) == 0 || after.Hits[0].Title != "Aaa left first" {
			t.Fatalf("after retitling: %d found (before %d), %v", after.Total, before.Total, titles(after))
		}
		if res := search(catalog.SearchQuery{Text: "zyzzyva"}); res.Total != 0 {
			t.Fatalf("the old title still finds %v", titles(res))
		}
	})
	t.Run("RolledBack", func(t *testing.T) {
		rollback := errors.New("roll back")
		err := d.Write(ctx, func(tx *db.Tx) error {
			if err := insert(tx, "Quokka Nights"); err != nil {
				return err
			}
			res, err := catalog.Search(tx, catalog.SearchQuery{Text: "quokka"})
			if err != nil || res.Total != 1 {
				t.Errorf("in the writing transaction: %d found, %v", res.Total, err)
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		// Another change moves the version to where the rolled-back one had.
		write(func(tx *db.Tx) error { return insert(tx, "Something Else") })
		if res := search(catalog.SearchQuery{Text: "quokka"}); res.Total != 0 {
			t.Fatalf("a rolled-back record is found: %v", titles(res))
		}
	})
}
