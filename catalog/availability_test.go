package catalog_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// TestSearchByBranch: the patrons' catalogue's search (ByBranch, NoBarcode)
// lists the same records as the staff's, with each one's copies by branch, in
// as many statements or fewer; past ListLimit matches, sorted and filtered, it
// stays within six statements.
func TestSearchByBranch(t *testing.T) { forEngines(t, testSearchByBranch) }

func testSearchByBranch(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	ctx := context.Background()
	search := func(q catalog.SearchQuery) (catalog.SearchResult, int64) {
		t.Helper()
		sctx, stats := db.WithStats(ctx)
		var res catalog.SearchResult
		if err := d.Read(sctx, func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err }); err != nil {
			t.Fatal(err)
		}
		return res, stats.Statements()
	}
	for _, q := range []catalog.SearchQuery{{Text: "the"}, {Text: "the", Sort: "title", Available: true}, {Text: "left hand of darkness"}} {
		staff, n1 := search(q)
		q.ByBranch, q.NoBarcode = true, true
		public, n2 := search(q)
		if len(staff.Hits) == 0 || len(staff.Hits) != len(public.Hits) || n2 > n1 {
			t.Fatalf("%+v: %d hits in %d statements, by branch %d in %d", q, len(staff.Hits), n1, len(public.Hits), n2)
		}
		for i, h := range public.Hits {
			if h.RecordID != staff.Hits[i].RecordID || h.Title != staff.Hits[i].Title {
				t.Errorf("hit %d: %d %q, staff's %d %q", i, h.RecordID, h.Title, staff.Hits[i].RecordID, staff.Hits[i].Title)
			}
			copies, onShelf := 0, 0
			for _, a := range public.Availability[h.RecordID] {
				if a.BranchCode == "" || a.BranchName == "" {
					t.Errorf("record %d: a branch without a name: %+v", h.RecordID, a)
				}
				copies += a.OnShelf + a.OnLoan + a.OnHoldShelf + a.Other
				onShelf += a.OnShelf
			}
			if copies != h.Copies || onShelf != h.Available {
				t.Errorf("record %d: %d copies (%d on the shelf) by branch, hit says %d (%d)", h.RecordID, copies, onShelf, h.Copies, h.Available)
			}
		}
	}
	res, _ := search(catalog.SearchQuery{Text: "I00010", NoBarcode: true, ByBranch: true})
	if res.BarcodeRecordID != 0 {
		t.Error("NoBarcode still looked the barcode up")
	}

	t.Run("PastListLimit", func(t *testing.T) {
		n := catalog.ListLimit + 500
		var ids []int64
		err := d.Write(ctx, func(tx *db.Tx) error {
			var first int64
			if err := tx.QueryRow(`SELECT max(id) + 1 FROM records`).Scan(&first); err != nil {
				return err
			}
			// 500 rows a statement: one at a time, the 10,500 round trips
			// were most of the subtest's time on PostgreSQL.
			const batch = 500
			row := `(?, ?, 'Anon', 'Burrows', ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`
			for lo := 0; lo < n; lo += batch {
				hi := min(lo+batch, n)
				var args []any
				for i := lo; i < hi; i++ {
					// The oldest record is the newest book, and the first
					// title: outside the newest ListLimit matches.
					var year any
					if i == 0 {
						year = 2099
					}
					args = append(args, first+int64(i), fmt.Sprintf("Wombat %d", i), year)
					ids = append(ids, first+int64(i))
				}
				q := `INSERT INTO records (id, title, author, subjects, year, created_at, updated_at) VALUES ` +
					strings.TrimSuffix(strings.Repeat(row+", ", hi-lo), ", ")
				if _, err := tx.Exec(q, args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Sorted without a filter, the order is of all the matches (the
		// order's index is walked), not of the newest ListLimit.
		byTitle := slices.Clone(ids)
		slices.SortFunc(byTitle, func(a, b int64) int {
			return cmp.Or(cmp.Compare(fmt.Sprint(a-ids[0]), fmt.Sprint(b-ids[0])), cmp.Compare(a, b))
		})
		byYear := append([]int64{ids[0]}, ids[1:]...)
		slices.Reverse(byYear[1:])
		for _, c := range []struct {
			sort string
			want []int64
		}{{"title", byTitle}, {"year", byYear}} {
			for _, page := range []int{1, 2, 400} {
				res, stmts := search(catalog.SearchQuery{Text: "wombat", Sort: c.sort, Page: page, NoBarcode: true, ByBranch: true})
				if res.Limited || res.Total != catalog.ListLimit || !res.TotalOver || len(res.Hits) != 20 {
					t.Errorf("by %s past ListLimit, page %d: limited %v, total %d (over %v), %d hits; want not limited, %d, over, 20",
						c.sort, page, res.Limited, res.Total, res.TotalOver, len(res.Hits), catalog.ListLimit)
				}
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.RecordID)
				}
				if want := c.want[(page-1)*20 : page*20]; !slices.Equal(got, want) {
					t.Errorf("by %s past ListLimit, page %d: %v, want %v", c.sort, page, got, want)
				}
				if stmts > 6 {
					t.Errorf("by %s, page %d: %d statements, want at most 6", c.sort, page, stmts)
				}
			}
		}
		// Page 1 by relevance is the best of the newest RankLimit matches.
		// Every title scores the same ("Wombat" and a number), so the best
		// are those matches in id order: from the RankLimit-th newest up.
		// Read with the matches not kept, as the first search of the words
		// (on PostgreSQL one statement counts to past ListLimit and ranks).
		catalog.ForgetSearches(d)
		res, _ := search(catalog.SearchQuery{Text: "wombat", NoBarcode: true, ByBranch: true})
		var got []int64
		for _, h := range res.Hits {
			got = append(got, h.RecordID)
		}
		if want := ids[n-catalog.RankLimit : n-catalog.RankLimit+20]; !slices.Equal(got, want) || !res.RankedOnly || !res.TotalOver ||
			!res.Facets.Partial || len(res.Facets.Branches) != 0 {
			t.Errorf("page 1 by relevance past ListLimit: %v (ranked only %v, over %v, facets %+v); want %v, ranked only, over, partial facets of no copies",
				got, res.RankedOnly, res.TotalOver, res.Facets, want)
		}
		res, stmts := search(catalog.SearchQuery{Text: "wombat", Page: 300, NoBarcode: true, ByBranch: true})
		// The count stops past ListLimit: "more than ListLimit" (TotalOver).
		if !res.RankedOnly || res.Total != catalog.ListLimit || !res.TotalOver || len(res.Hits) != 20 || stmts > 6 {
			t.Errorf("page 300 by relevance: ranked only %v, total %d (over %v), %d hits, %d statements; want %d, over",
				res.RankedOnly, res.Total, res.TotalOver, len(res.Hits), stmts, catalog.ListLimit)
		}
		// Filtered, the total is exact among the newest ListLimit.
		res, _ = search(catalog.SearchQuery{Text: "wombat", Available: true, NoBarcode: true, ByBranch: true})
		if !res.Limited || res.TotalOver || res.Total != 0 {
			t.Errorf("wombat on the shelf: limited %v, over %v, total %d; want limited, not over, 0 (no copies)", res.Limited, res.TotalOver, res.Total)
		}
	})
}
