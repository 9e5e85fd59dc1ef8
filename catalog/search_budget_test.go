package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
)

// findingQuery is a search of 166 one-letter prefixes, which takes 4.3 s on
// 50,000 titles and 51 s on 100,000 without the search budget.
var findingQuery = strings.TrimSpace(strings.Repeat("s* ", 166))

// findingCount is a statement that runs for seconds, for InterruptedAtDeadline
// to stop. On SQLite it is the finding's search as it ran before the budget
// (findingMatch, FTS5). On PostgreSQL the GIN index answers that search in
// under 100 ms on 3,000 titles, too fast to interrupt, so the statement matches
// the same 166 prefixes (findingTSQuery, the tsquery the search would have built)
// against the words of every pair of records, which runs for minutes.
var (
	findingCount = db.PerEngine{
		SQLite:   `SELECT count(*) FROM records_fts WHERE records_fts MATCH ?`,
		Postgres: `SELECT count(*) FROM records_fts a, records_fts b, to_tsquery('stacks_english', ?) q WHERE a.doc || b.doc @@ q`,
	}
	findingMatch   = strings.TrimSuffix(strings.Repeat(`"s"* AND `, 166), " AND ")
	findingTSQuery = strings.TrimSuffix(strings.Repeat(`'s':* & `, 166), " & ")
)

// TestMatchExpressionBudget: a search over the budget is refused with a message
// saying what to change; repeated words count once.
func TestMatchExpressionBudget(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ErrShortPrefix", findingQuery, "A word ending in * needs at least 3 letters"},
		{"ErrShortPrefixInWord", "history x-s*", "A word ending in * needs at least 3 letters"},
		{"ErrTooManyPrefixes", "sta* riv* gar* his*", "Use * on at most 3 words"},
		{"ErrTooManyWords", "one two three four five six seven eight nine", "Use at most 8 words"},
		{"ErrTooManyFieldWords", "title:a b c d e f g h i", "Use at most 8 words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.MatchExpression(tc.in)
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "q" || !strings.Contains(stacks.ErrorMessage(err), tc.want) {
				t.Fatalf("MatchExpression(%.40q): %v, want EINVALID on q saying %q", tc.in, err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"RepeatedWordsOnce", "river River river", `"river"*`},
		{"RepeatedPrefixesOnce", "riv* riv* riv* riv* garden", `"riv"* AND "garden"*`},
		// Stopwords are left out before counting.
		{"StopwordsNotCounted", "the a of history of the one two three four five six seven", `"history" AND "one" AND "two" AND "three" AND "four" AND "five" AND "six" AND "seven"*`},
		// Three typed prefixes use the budget: the last word matches exactly.
		{"LastWordExactPastPrefixBudget", "sta* riv* gar* history", `"sta"* AND "riv"* AND "gar"* AND "history"`},
		{"ThreeLetterPrefix", "his*", `"his"*`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := catalog.MatchExpression(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("MatchExpression(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// mustBigDB is a demo catalogue big enough for a search to be slow: titles
// generated as the demo's are.
func mustBigDB(tb testing.TB, titles int) *db.DB {
	tb.Helper()
	return demotest.Demo(tb, demo.Options{Titles: titles, Patrons: 20}, dbtest.Monday, db.Options{Synchronous: "NORMAL"})
}

// TestSearchWithinBudget: on a catalogue of a few thousand titles, the search of
// the finding is refused before it reaches the database, and a search that runs
// past its deadline is stopped inside the database (SQLite or PostgreSQL) and answered with ErrSearchTooLong (a
// message for staff, not an internal error).
func TestSearchWithinBudget(t *testing.T) {
	d := mustBigDB(t, 3000)
	ctx := context.Background()
	search := func(ctx context.Context, q catalog.SearchQuery) (catalog.SearchResult, error) {
		var res catalog.SearchResult
		err := d.Read(ctx, func(tx *db.Tx) (err error) { res, err = catalog.Search(tx, q); return err })
		return res, err
	}

	t.Run("ErrFindingRefused", func(t *testing.T) {
		start := time.Now()
		_, err := search(ctx, catalog.SearchQuery{Text: findingQuery, Sort: "title"})
		took := time.Since(start)
		if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "needs at least 3 letters") {
			t.Fatalf("the finding's search: %v after %v, want it refused", err, took)
		}
		t.Logf("refused in %v", took.Round(time.Microsecond))
	})

	t.Run("InterruptedAtDeadline", func(t *testing.T) {
		// What MatchExpression made of the finding's search before the budget
		// (on PostgreSQL, the same 166 prefixes as a tsquery): run as it was,
		// unbounded and then with a deadline.
		count := func(ctx context.Context) (int, error) {
			var n int
			err := d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(tx.SQL(findingCount), db.Pick(tx, findingMatch, findingTSQuery)).Scan(&n)
			})
			return n, err
		}
		// The reference run is bounded too (2 s), to keep the test short: on
		// this catalogue the statement runs for seconds.
		const limit, refLimit = 50 * time.Millisecond, 2 * time.Second
		rctx, rcancel := context.WithTimeout(ctx, refLimit)
		defer rcancel()
		start := time.Now()
		n, err := count(rctx)
		unbounded := time.Since(start)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		// SQLite checks for an interrupt between steps of its program, and much
		// of this statement's time can be one step (FTS5 expanding the
		// prefixes): a statement only a few times the deadline long can run to
		// its end with the deadline passed. Ten times the deadline leaves the
		// interrupt room to show.
		if unbounded < 10*limit {
			t.Skipf("the search took only %v: too fast to show an interrupt", unbounded)
		}
		// A statement PostgreSQL stopped at the deadline takes its
		// connection with it: open another first, so that the deadline below
		// stops the statement and not the connecting.
		if err := d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT 1`).Scan(new(int)) }); err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		start = time.Now()
		_, err = count(dctx)
		bounded := time.Since(start)
		t.Logf("reference run %v (%d matches, or stopped at %v); with a %v deadline stopped after %v: %v",
			unbounded.Round(time.Millisecond), n, refLimit, limit, bounded.Round(time.Millisecond), err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("with a deadline: %v, want context.DeadlineExceeded", err)
		}
		if bounded >= unbounded {
			t.Fatalf("with a deadline it ran %v, as long as without (%v): not interrupted", bounded, unbounded)
		}
	})

	t.Run("ErrSearchTooLong", func(t *testing.T) {
		// The deadline passes while the search's transaction is open: Search
		// says what to do instead of failing. A second: opening the transaction
		// must come first, also under -race on a loaded machine (at 20 ms it
		// sometimes did not).
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err := d.Read(dctx, func(tx *db.Tx) error {
			<-tx.Context().Done()
			_, err := catalog.Search(tx, catalog.SearchQuery{Text: "the", Sort: "title", Available: true})
			return err
		})
		if !errors.Is(err, catalog.ErrSearchTooLong) || stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "q" {
			t.Fatalf("a search past its deadline: %v, want ErrSearchTooLong", err)
		}
		// A search cancelled otherwise (the client went away) is not the
		// searcher's to narrow.
		cctx, cancel := context.WithCancel(ctx)
		err = d.Read(cctx, func(tx *db.Tx) error {
			cancel()
			_, err := catalog.Search(tx, catalog.SearchQuery{Text: "the"})
			return err
		})
		if err == nil || errors.Is(err, catalog.ErrSearchTooLong) {
			t.Fatalf("a cancelled search: %v, want a plain error", err)
		}
	})

	t.Run("ListLimit", func(t *testing.T) {
		_, err := search(ctx, catalog.SearchQuery{Text: "the", Page: catalog.ListLimit/20 + 1})
		if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "Only the first") {
			t.Fatalf("a page past ListLimit: %v, want it refused", err)
		}
	})
}
