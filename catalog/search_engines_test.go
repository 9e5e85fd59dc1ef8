package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
)

// agreeRecords are added to the demo catalogue for the engines' comparison:
// diacritics, stemming, punctuation inside words, a word that is a title on one
// record and an author on another.
var agreeRecords = []struct{ title, author, subjects, isbn string }{
	{"Émile, ou De l'éducation", "Rousseau, Jean-Jacques", "Education", ""},
	{"Darkness Visible", "Styron, William", "Depression, Mental", ""},
	{"The Dark Is Rising", "Cooper, Susan", "Fantasy fiction", ""},
	{"Crème brûlée: desserts", "Ångström, Åsa", "Cooking", ""},
	{"Hand-made Books", "Left, Anna", "Bookbinding", ""},
	{"AC/DC: the band", "Engleheart, Murray", "Rock music", ""},
	{"The Runners and the Running", "O'Brien, Tim", "Running", "978-0-441-47812-5"},
	{"Naïve Art", "Łódź, Zoë", "Art", ""},
	{"Left-handed lefties", "Smith, J.", "Handedness", ""},
}

// addAgreeRecords adds agreeRecords to d with the same ids on every engine.
func addAgreeRecords(t *testing.T, d *db.DB) {
	t.Helper()
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		for _, r := range agreeRecords {
			if _, err := tx.Exec(`INSERT INTO records (id, title, author, subjects, isbn, created_at, updated_at)
				SELECT max(id) + 1, ?, ?, ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM records`,
				r.title, r.author, r.subjects, r.isbn); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// agreeQueries are the comparison's searches: the query syntax (words, fields,
// prefixes, quotes, stop words), diacritics and stemming, over the demo's
// generated titles and agreeRecords.
var agreeQueries = []string{
	"the", "of", "a history of", "left hand", `"left hand"`, "left hand of darkness",
	"emile", "Émile", "EMILE", "éducation", "education", "rousseau jean jacques", "jean-jacques",
	"darkness", "dark", "darkn*", "visible", "rising",
	"creme brulee", "crème", "angstrom", "asa", "lodz", "zoe", "naive", "naïve",
	"ac dc", "ac/dc", "o'brien", "brien", "running", "runners", "run*",
	"title:left", "author:left", "subject:fiction", "subject:fantasy fiction", "title:dark author:cooper",
	"isbn:978-0-441-47812-5", "isbn:978", "978-0-441",
	"hobb", "hob*", "darkn*", "river", "garden", "winter", "history", "mirror", "island", "lantern",
	"the silent river", "the last lighthouse", "garden of secrets",
	"author:smith", "subject:history", "title:winter author:a",
}

// agreeFinds are searches of agreeQueries and a title each must find, on both
// engines: the comparison is not of empty results.
var agreeFinds = map[string]string{
	"emile": "Émile, ou De l'éducation", "EMILE": "Émile, ou De l'éducation", "éducation": "Émile, ou De l'éducation",
	"education": "Émile, ou De l'éducation", "jean-jacques": "Émile, ou De l'éducation",
	"darkness": "The Dark Is Rising", "dark": "Darkness Visible", "left hand of darkness": "The Left Hand of Darkness",
	`"left hand"`: "Hand-made Books", "creme brulee": "Crème brûlée: desserts", "angstrom": "Crème brûlée: desserts",
	"naive": "Naïve Art", "zoe": "Naïve Art", "ac dc": "AC/DC: the band", "o'brien": "The Runners and the Running",
	"runners": "The Runners and the Running", "running": "The Runners and the Running", "run*": "The Runners and the Running",
	"author:left": "Hand-made Books", "title:left": "Left-handed lefties", "title:dark author:cooper": "The Dark Is Rising",
	"isbn:978-0-441-47812-5": "The Runners and the Running", "hobb": "The Hobbit", "hob*": "The Hobbit",
}

// agreeDiffer are the searches whose matches differ, and why.
var agreeDiffer = map[string]string{
	// unicode61's remove_diacritics removes only the marks Unicode decomposes
	// a letter into; Ł has none, so SQLite keeps it. unaccent maps it to L.
	"lodz": "PostgreSQL finds Łódź, SQLite does not",
}

// TestSearchEnginesAgree runs the same searches on SQLite and PostgreSQL, on the
// same catalogue with the same ids: every search finds the same records (the
// total and every page's ids as a set; agreeDiffer says where not, and why),
// with the same facets, in the same order when sorted by title or year. In
// relevance order the engines rank differently (bm25 and ts_rank: see
// postgresSearch); the test logs each search whose order differs.
func TestSearchEnginesAgree(t *testing.T) {
	if !pgtest.Selected(db.Postgres) || !pgtest.Selected(db.SQLite) {
		t.Skipf("compares the two engines; this run selects only %v", pgtest.Engines())
	}
	opt := demo.Options{Titles: 500, Patrons: 10}
	lite := demoDBOn(t, db.SQLite, opt, db.Options{})
	pg := demoDBOn(t, db.Postgres, opt, db.Options{})
	addAgreeRecords(t, lite)
	addAgreeRecords(t, pg)

	all := func(d *db.DB, q catalog.SearchQuery) (catalog.SearchResult, []int64) {
		t.Helper()
		var first catalog.SearchResult
		var ids []int64
		q.PerPage = 100
		for q.Page = 1; ; q.Page++ {
			var res catalog.SearchResult
			if err := d.Read(context.Background(), func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err }); err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			if q.Page == 1 {
				first = res
			}
			for _, h := range res.Hits {
				ids = append(ids, h.RecordID)
			}
			if len(res.Hits) < q.PerPage {
				return first, ids
			}
		}
	}
	orderDiffers, bestDiffers, relevance := 0, 0, 0
	for _, text := range agreeQueries {
		for _, variant := range []catalog.SearchQuery{
			{Text: text},
			{Text: text, Sort: "title"},
			{Text: text, Sort: "year", Available: true},
			{Text: text, ItemType: "BOOK", Branch: "CEN"},
		} {
			name := fmt.Sprintf("%s/%s/%v/%s%s", text, variant.Sort, variant.Available, variant.ItemType, variant.Branch)
			t.Run(name, func(t *testing.T) {
				lr, lids := all(lite, variant)
				pr, pids := all(pg, variant)
				if why, ok := agreeDiffer[text]; ok && !variant.Available && variant.ItemType == "" {
					if lr.Total != 0 || pr.Total != 1 || pr.Hits[0].Author != "Łódź, Zoë" {
						t.Fatalf("%s: SQLite %d, PostgreSQL %d %+v", why, lr.Total, pr.Total, pr.Hits)
					}
					return
				}
				if lr.Total != pr.Total || len(lids) != len(pids) {
					t.Fatalf("total: SQLite %d (%d listed), PostgreSQL %d (%d listed)", lr.Total, len(lids), pr.Total, len(pids))
				}
				if want, ok := agreeFinds[text]; ok && variant.Sort == "" && variant.ItemType == "" {
					for _, res := range []catalog.SearchResult{lr, pr} {
						if !slices.ContainsFunc(res.Hits, func(h catalog.Hit) bool { return h.Title == want }) {
							t.Errorf("%q: %q not found in %+v", text, want, res.Hits)
						}
					}
				}
				ls, ps := slices.Sorted(slices.Values(lids)), slices.Sorted(slices.Values(pids))
				if !slices.Equal(ls, ps) {
					t.Fatalf("matches differ:\nSQLite     %v\nPostgreSQL %v", ls, ps)
				}
				if fmt.Sprint(lr.Facets) != fmt.Sprint(pr.Facets) {
					t.Errorf("facets differ:\nSQLite     %+v\nPostgreSQL %+v", lr.Facets, pr.Facets)
				}
				if variant.Sort == "" {
					relevance++
				}
				if variant.Sort != "" {
					// Title and year orders are the records' own: the same.
					if !slices.Equal(lids, pids) {
						t.Errorf("%s order differs:\nSQLite     %v\nPostgreSQL %v", variant.Sort, lids, pids)
					}
					return
				}
				if !slices.Equal(lids, pids) {
					orderDiffers++
					if lids[0] != pids[0] {
						bestDiffers++
					}
					t.Logf("relevance order differs (%d matches): best SQLite %q, PostgreSQL %q; SQLite %v, PostgreSQL %v",
						len(lids), lr.Hits[0].Title, pr.Hits[0].Title, head(lids, 8), head(pids, 8))
				}
			})
		}
	}
	t.Logf("of %d searches in relevance order, %d list the same matches in another order, %d of them with another best hit", relevance, orderDiffers, bestDiffers)
}

func head(ids []int64, n int) []int64 { return ids[:min(n, len(ids))] }

// TestSearchHostileText: what a search box may be sent (tsquery and FTS5
// syntax, quotes, backslashes, NUL, bytes that are not UTF-8) either finds
// records or is refused with a message for the searcher, on every engine;
// never an internal error.
func TestSearchHostileText(t *testing.T) { forEngines(t, testSearchHostileText) }

func testSearchHostileText(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	for _, text := range []string{
		`'`, `''`, `"`, `\`, `\\`, `\'`, `'\''`, `:*`, `left:*`, `hand:*A`, `'left':*`, `&|!()`, `left & hand`,
		`left | !hand`, `!left`, `(left`, `left)`, `left <-> hand`, `<2>`, `title:`, `title::left`, `title:'`,
		`isbn:'; DROP TABLE records; --`, `left'); SELECT pg_sleep(10); --`, `$1`, `?1`, `?`, `%`, `_`,
		"left\x00hand", "\x00", "\xff\xfe", "\xffleft", `NEAR(left hand)`, `left AND hand OR dark NOT x`,
		`*`, `***`, `lef*`, `a*`, `le\*`, `title:"left hand"`, `author:'le guin'`, `💥 left`, `left 💥`,
		strings.Repeat(`'\`, 200), strings.Repeat("left ", 120),
	} {
		t.Run(fmt.Sprintf("%q", text), func(t *testing.T) {
			var res catalog.SearchResult
			err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
				res, err = catalog.Search(tx, catalog.SearchQuery{Text: text})
				return err
			})
			if err != nil && (stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorMessage(err) == "") {
				t.Fatalf("Search(%q): %v, want results or a message for the searcher", text, err)
			}
			var n int
			if cerr := d.Read(context.Background(), func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&n)
			}); cerr != nil || n == 0 {
				t.Fatalf("after Search(%q) the records read %d, %v", text, n, cerr)
			}
			t.Logf("%d found, %v", res.Total, err)
		})
	}
	// The words inside the syntax are still searched: a hostile query that
	// is only words and operators finds what the words find.
	for _, text := range []string{`left & hand`, `'left' | !hand`, `(left) <-> hand:*`} {
		var res catalog.SearchResult
		if err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
			res, err = catalog.Search(tx, catalog.SearchQuery{Text: text})
			return err
		}); err != nil || len(res.Hits) == 0 || res.Hits[0].Title != "The Left Hand of Darkness" {
			t.Errorf("Search(%q): %+v, %v; want The Left Hand of Darkness", text, res.Hits, err)
		}
	}
}
