package catalog_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/passwords"
)

func TestMain(m *testing.M) {
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

// mustDemoDB is a small demo library (100 titles, 10 patrons) of the test's own,
// created on dbtest.Monday.
func mustDemoDB(tb testing.TB) *db.DB {
	tb.Helper()
	return demotest.Demo(tb, demo.Options{Titles: 100, Patrons: 10}, dbtest.Monday, db.Options{})
}

func TestMatchExpression(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"left hand", `"left" AND "hand"*`},
		{"left hand of darkness", `"left" AND "hand" AND "darkness"*`},
		{"hand of", `"hand"`}, // a stopword is left out unless it is all there is
		{"the", `"the"*`},
		{"of", `"of"`},
		{"title:left hand", `title : "left" AND title : "hand"*`},
		{"author:le guin dark", `author : "le" AND author : "guin" AND author : "dark"*`},
		{"subject:fiction", `subjects : "fiction"*`},
		{"hob* left", `"hob"* AND "left"*`},
		{`"quoted" OR NEAR(x)`, `"quoted" AND "NEAR" AND "x"`}, // FTS syntax is only words here
		{"isbn:978-0441", `isbn : "978" AND isbn : "0441"*`},
		{"Émile", `"Émile"*`},
	} {
		got, err := catalog.MatchExpression(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("MatchExpression(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "   ", "***", "\xff\xfe"} {
		if _, err := catalog.MatchExpression(bad); stacks.ErrorCode(err) != stacks.EINVALID {
			t.Errorf("MatchExpression(%q): %v, want EINVALID", bad, err)
		}
	}
}

func TestSearch(t *testing.T) { forEngines(t, testSearch) }

func testSearch(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	ctx := context.Background()
	err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO records (id, title, author, subjects, created_at, updated_at)
			SELECT max(id) + 1, 'Émile, ou De l''éducation', 'Rousseau, Jean-Jacques', 'Education', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM records`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	search := func(text string) catalog.SearchResult {
		t.Helper()
		var res catalog.SearchResult
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			res, err = catalog.Search(tx, catalog.SearchQuery{Text: text})
			return err
		})
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		return res
	}

	t.Run("KeywordRanksTitleFirst", func(t *testing.T) {
		res := search("left hand of darkness")
		if len(res.Hits) == 0 || res.Hits[0].Title != "The Left Hand of Darkness" {
			t.Fatalf("hits %+v", res.Hits)
		}
		if h := res.Hits[0]; h.Copies != 1 || h.Available != 1 {
			t.Errorf("availability %d of %d, want 1 of 1", h.Available, h.Copies)
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		// Prefixes match the stemmed words of the index: "hobb" finds "Hobbit".
		if res := search("hobb"); len(res.Hits) == 0 || res.Hits[0].Title != "The Hobbit" {
			t.Fatalf("prefix: %+v", res.Hits)
		}
	})
	t.Run("Field", func(t *testing.T) {
		if res := search("author:guin"); res.Total != 1 {
			t.Fatalf("author:guin: %d hits", res.Total)
		}
		if res := search("title:guin"); res.Total != 0 {
			t.Fatalf("title:guin: %d hits, want 0", res.Total)
		}
	})
	t.Run("DiacriticInsensitive", func(t *testing.T) {
		if res := search("emile"); res.Total != 1 || res.Hits[0].Author != "Rousseau, Jean-Jacques" {
			t.Fatalf("emile: %+v", res.Hits)
		}
	})
	t.Run("Barcode", func(t *testing.T) {
		res := search("I00010")
		if res.BarcodeRecordID == 0 {
			t.Fatal("a barcode did not lead to its record")
		}
	})
	t.Run("IndexFollowsUpdates", func(t *testing.T) {
		err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE records SET title = 'Zyxwv Renamed' WHERE title = 'Kindred'`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if res := search("zyxwv"); res.Total != 1 {
			t.Fatalf("renamed title not found: %d", res.Total)
		}
		if res := search("title:kindred"); res.Total != 0 {
			t.Fatalf("old title still found: %d", res.Total)
		}
	})
	t.Run("Pages", func(t *testing.T) {
		var all, p1, p2 catalog.SearchResult
		d.Read(ctx, func(tx *db.Tx) error {
			all, _ = catalog.Search(tx, catalog.SearchQuery{Text: "the", PerPage: 100})
			p1, _ = catalog.Search(tx, catalog.SearchQuery{Text: "the", PerPage: 2, Page: 1})
			p2, _ = catalog.Search(tx, catalog.SearchQuery{Text: "the", PerPage: 2, Page: 2})
			return nil
		})
		if all.Total < 4 || p1.Total != all.Total || len(p2.Hits) != 2 || p2.Hits[0].RecordID != all.Hits[2].RecordID {
			t.Fatalf("pagination: total %d, page 2 %+v", all.Total, p2.Hits)
		}
	})
}

func TestFindRecord(t *testing.T) {
	d := mustDemoDB(t)
	var rec *catalog.Record
	var items []catalog.CopyStatus
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		var id int64
		if err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = 'I00010'`).Scan(&id); err != nil {
			return err
		}
		var err error
		rec, items, err = catalog.FindRecord(tx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Title != "The Left Hand of Darkness" || len(items) != 1 || items[0].Barcode != "I00010" || items[0].Status != catalog.StatusAvailable {
		t.Fatalf("record %+v items %+v", rec, items)
	}
	err = d.Read(context.Background(), func(tx *db.Tx) error {
		_, _, err := catalog.FindRecord(tx, 999999)
		return err
	})
	if stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Fatalf("unknown record: %v", err)
	}
}

func TestSearchFacetsSortFilter(t *testing.T) { forEngines(t, testSearchFacetsSortFilter) }

func testSearchFacetsSortFilter(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	ctx := context.Background()
	run := func(q catalog.SearchQuery) catalog.SearchResult {
		t.Helper()
		var res catalog.SearchResult
		if err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			res, err = catalog.Search(tx, q)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return res
	}
	word := "the" // common in the demo's titles
	all := run(catalog.SearchQuery{Text: word, PerPage: 100})
	if all.Total < 5 {
		t.Fatalf("%q matches %d records; the test needs more", word, all.Total)
	}

	t.Run("Facets", func(t *testing.T) {
		sum := 0
		for _, f := range all.Facets.Branches {
			sum += f.Count
		}
		if len(all.Facets.ItemTypes) == 0 || len(all.Facets.Branches) == 0 || sum < all.Total {
			t.Fatalf("facets %+v for %d records", all.Facets, all.Total)
		}
		for _, f := range all.Facets.ItemTypes {
			res := run(catalog.SearchQuery{Text: word, ItemType: f.Code, PerPage: 100})
			if res.Total != f.Count {
				t.Errorf("type %s: facet says %d, filter gives %d", f.Code, f.Count, res.Total)
			}
		}
		for _, f := range all.Facets.Branches {
			if res := run(catalog.SearchQuery{Text: word, Branch: f.Code, PerPage: 100}); res.Total != f.Count {
				t.Errorf("branch %s: facet says %d, filter gives %d", f.Code, f.Count, res.Total)
			}
		}
		if res := run(catalog.SearchQuery{Text: word, Available: true, PerPage: 100}); res.Total != all.Facets.Available {
			t.Errorf("available: facet says %d, filter gives %d", all.Facets.Available, res.Total)
		}
	})

	t.Run("SortTitle", func(t *testing.T) {
		res := run(catalog.SearchQuery{Text: word, Sort: "title", PerPage: 100})
		for i := 1; i < len(res.Hits); i++ {
			if strings.ToLower(res.Hits[i-1].Title) > strings.ToLower(res.Hits[i].Title) {
				t.Fatalf("not in title order: %q before %q", res.Hits[i-1].Title, res.Hits[i].Title)
			}
		}
	})

	t.Run("SortYear", func(t *testing.T) {
		res := run(catalog.SearchQuery{Text: word, Sort: "year", PerPage: 100})
		for i := 1; i < len(res.Hits); i++ {
			if res.Hits[i-1].Year < res.Hits[i].Year {
				t.Fatalf("not newest first: %d before %d", res.Hits[i-1].Year, res.Hits[i].Year)
			}
		}
	})
}

// TestSearchRankLimit: past RankLimit matches, the newest RankLimit are ranked by
// relevance and the older ones follow, newest first, on every page and with every
// filter; the total still counts them all.
func TestSearchRankLimit(t *testing.T) { forEngines(t, testSearchRankLimit) }

func testSearchRankLimit(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	ctx := context.Background()
	const extra = 150
	n := catalog.RankLimit + extra
	var firstID int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		// Ids given, newest last: PostgreSQL's identity sequence does not
		// know of the demo's own ids.
		if err := tx.QueryRow(`SELECT max(id) + 1 FROM records`).Scan(&firstID); err != nil {
			return err
		}
		st, err := tx.Prepare(`INSERT INTO records (id, title, author, subjects, created_at, updated_at)
			VALUES (?, ?, 'Anon', 'Zanzibar', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
		if err != nil {
			return err
		}
		for i := range n {
			// Every 7th title says the word twice: bm25 prefers those, wherever
			// they are.
			title := "Quokka tales"
			if i%7 == 0 {
				title = "Quokka quokka"
			}
			if _, err := st.Exec(firstID+int64(i), title); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	search := func(q catalog.SearchQuery) catalog.SearchResult {
		t.Helper()
		var res catalog.SearchResult
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err }); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// The ranked core is the newest RankLimit: ids from cut up.
	cut := firstID + extra
	all := []int64{}
	for page := 1; ; page++ {
		res := search(catalog.SearchQuery{Text: "quokka", Page: page, PerPage: 100})
		if res.Total != n || !res.RankedOnly {
			t.Fatalf("page %d: total %d, ranked only %v; want %d, true", page, res.Total, res.RankedOnly, n)
		}
		if len(res.Hits) == 0 {
			break
		}
		for _, h := range res.Hits {
			all = append(all, h.RecordID)
		}
	}
	if len(all) != n {
		t.Fatalf("paged through %d hits, want %d", len(all), n)
	}
	doubled := func(id int64) bool { return (id-firstID)%7 == 0 }
	for i, id := range all {
		switch {
		case i < catalog.RankLimit && id < cut:
			t.Fatalf("hit %d is record %d, older than the ranked core (from %d)", i, id, cut)
		case i >= catalog.RankLimit && id >= cut:
			t.Fatalf("hit %d is record %d, in the ranked core, after it", i, id)
		case i > 0 && i < catalog.RankLimit && doubled(id) && !doubled(all[i-1]):
			t.Fatalf("hit %d (record %d, 'quokka quokka') ranked below one that says it once", i, id)
		case i > catalog.RankLimit && id > all[i-1]:
			t.Fatalf("past the core, hit %d (record %d) is newer than the one before (%d)", i, id, all[i-1])
		}
	}
	if !doubled(all[0]) {
		t.Errorf("best hit %d says quokka once", all[0])
	}
	// The page after the ranked core continues with the newest of the rest.
	res := search(catalog.SearchQuery{Text: "quokka", Page: catalog.RankLimit/20 + 1, PerPage: 20})
	if len(res.Hits) != 20 || res.Hits[0].RecordID != all[catalog.RankLimit] {
		t.Errorf("first page past the core starts with %v, want record %d", res.Hits, all[catalog.RankLimit])
	}
	// A filter keeps the order: give copies to the oldest record (says quokka
	// twice, outside the core) and to the newest (says it once, in the core).
	newest := firstID + int64(n) - 1
	if newest%7 == firstID%7 {
		t.Fatal("the newest record must say quokka once for this test")
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		for i, rec := range []int64{firstID, newest} {
			if _, err := tx.Exec(`INSERT INTO items (id, barcode, record_id, home_branch_id, current_branch_id, item_type_id, created_at, updated_at)
				SELECT (SELECT max(id) + 1 FROM items), ?, ?, b.id, b.id, t.id, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
				FROM branches b, item_types t WHERE b.code = 'EAS' AND t.code = 'BOOK'`, fmt.Sprintf("QK%03d", i), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res = search(catalog.SearchQuery{Text: "quokka", Branch: "EAS", ItemType: "BOOK"})
	if res.Total != 2 || len(res.Hits) != 2 || res.Hits[0].RecordID != newest || res.Hits[1].RecordID != firstID {
		t.Errorf("filtered: total %d, hits %v; want the newest record %d, then %d", res.Total, res.Hits, newest, firstID)
	}
	res = search(catalog.SearchQuery{Text: "quokka", Sort: "year", PerPage: 5})
	if res.Total != n || res.Hits[0].RecordID != firstID+int64(n)-1 {
		t.Errorf("year order: total %d, first %v; want %d, the newest record", res.Total, res.Hits, n)
	}
	// A smaller result set is ranked whole, not flagged.
	if res := search(catalog.SearchQuery{Text: "zanzibar tales"}); res.RankedOnly || res.Total != n-n/7-1 {
		t.Errorf("zanzibar tales: total %d, ranked only %v", res.Total, res.RankedOnly)
	}
	// Under ListLimit the count is exact, not "more than".
	if res := search(catalog.SearchQuery{Text: "quokka"}); res.TotalOver || res.Total != n {
		t.Errorf("quokka: total %d, over %v; want %d exactly", res.Total, res.TotalOver, n)
	}
}

// TestSearchFilteredOrder: a filtered search lists the matches that pass the
// filter in the unfiltered search's order, with their exact number, on every
// page: the first pages come from the best matches (filteredBest), the later
// ones from all the matches; past RankLimit too.
func TestSearchFilteredOrder(t *testing.T) { forEngines(t, testSearchFilteredOrder) }

func testSearchFilteredOrder(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	ctx := context.Background()
	n := catalog.RankLimit + 150
	err := d.Write(ctx, func(tx *db.Tx) error {
		var first, item int64
		if err := tx.QueryRow(`SELECT max(id) + 1 FROM records`).Scan(&first); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT max(id) + 1 FROM items`).Scan(&item); err != nil {
			return err
		}
		rec, err := tx.Prepare(`INSERT INTO records (id, title, author, subjects, created_at, updated_at)
			VALUES (?, ?, 'Anon', 'Numbats', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
		if err != nil {
			return err
		}
		cp, err := tx.Prepare(`INSERT INTO items (id, barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
			SELECT ?, ?, ?, b.id, b.id, t.id, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
			FROM branches b, item_types t WHERE b.code = 'EAS' AND t.code = 'BOOK'`)
		if err != nil {
			return err
		}
		for i := range n {
			// Titles that say the word once, twice or three times: the
			// relevance order is not the order of the ids.
			title := "Numbat " + strings.Repeat("numbat ", i%3) + "tales"
			if _, err := rec.Exec(first+int64(i), title); err != nil {
				return err
			}
			if i%3 == 0 {
				continue
			}
			status := catalog.StatusAvailable
			if i%5 == 0 {
				status = "on_loan"
			}
			if _, err := cp.Exec(item, fmt.Sprintf("NB%05d", i), first+int64(i), status); err != nil {
				return err
			}
			item++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first pages of q: enough of them, not all (each is a search over
	// thousands of matches).
	// cold forgets the kept matches before each page, as for the first
	// search of the words (countBest's count of the matches that pass, on
	// PostgreSQL, and which of the best pass from the facets' read).
	list := func(q catalog.SearchQuery, pages int, cold bool) ([]int64, int) {
		t.Helper()
		var ids []int64
		total := -1
		for q.Page = 1; q.Page <= pages; q.Page++ {
			if cold {
				catalog.ForgetSearches(d)
			}
			var res catalog.SearchResult
			if err := d.Read(ctx, func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err }); err != nil {
				t.Fatal(err)
			}
			if total >= 0 && res.Total != total {
				t.Fatalf("%+v: total %d, on page 1 %d", q, res.Total, total)
			}
			total = res.Total
			for _, h := range res.Hits {
				ids = append(ids, h.RecordID)
			}
		}
		return ids, total
	}
	all, total := list(catalog.SearchQuery{Text: "numbat", PerPage: 100}, 8, false)
	if total != n || len(all) != 800 {
		t.Fatalf("numbat: %d listed of %d, want 800 of %d", len(all), total, n)
	}
	available := map[int64]bool{}
	if err := d.Read(ctx, func(tx *db.Tx) error {
		ids, err := tx.IDs(`SELECT DISTINCT record_id FROM items WHERE status = 'available'`)
		for _, id := range ids {
			available[id] = true
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, id := range all {
		if available[id] {
			want = append(want, id)
		}
	}
	// i%3 != 0 and i%5 != 0: 8 of every 15 records have a copy on the shelf.
	wantTotal := 0
	for i := range n {
		if i%3 != 0 && i%5 != 0 {
			wantTotal++
		}
	}
	// Pages 1 to 5 of 50 come from the best 500 (about 267 of them pass),
	// page 6 and after from all the matches.
	// Both with the matches kept (the unfiltered search above kept them) and
	// not.
	for _, cold := range []bool{false, true} {
		got, total := list(catalog.SearchQuery{Text: "numbat", Available: true, PerPage: 50}, 8, cold)
		want := want[:min(len(want), len(got))]
		if total != wantTotal || len(got) != 400 || !slices.Equal(got, want) {
			t.Errorf("available (not kept: %v): total %d, %d listed; want %d, 400 in the unfiltered order\n got %v\nwant %v",
				cold, total, len(got), wantTotal, got, want)
		}
	}
}

// TestSearchQueryValues: a results page's links carry every choice but those at
// their default, and a query read back from them is the same query.
func TestSearchQueryValues(t *testing.T) {
	if got := (catalog.SearchQuery{Text: "moby dick", Sort: "relevance", Page: 1}).Values().Encode(); got != "q=moby+dick" {
		t.Errorf("defaults: %q, want only q", got)
	}
	q := catalog.SearchQuery{Text: "whale", Sort: "year", ItemType: "BOOK", Branch: "MAIN", Available: true, Page: 3}
	v := q.Values()
	want := map[string]string{"q": "whale", "sort": "year", "type": "BOOK", "branch": "MAIN", "available": "1", "page": "3"}
	for k, w := range want {
		if got := v.Get(k); got != w {
			t.Errorf("%s = %q, want %q", k, got, w)
		}
	}
	if len(v) != len(want) {
		t.Errorf("values %v: want exactly %v", v, want)
	}
}
