package catalog_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
)

// benchTitles is the catalogue size the search target is set for.
var benchTitles = func() int {
	if n, err := strconv.Atoi(os.Getenv("STACKS_BENCH_TITLES")); err == nil && n > 0 {
		return n
	}
	return 100000
}()

// BenchmarkSearch measures search latency on a large demo catalogue (100,000 titles
// by default; STACKS_BENCH_TITLES changes it) for a one-word, a three-word and a
// field query, each over a rotation of words, reporting the median and p95 of the
// whole Search call (match, page of hits, facets, availability) in milliseconds.
func BenchmarkSearch(b *testing.B) {
	d, err := db.Open(filepath.Join(b.TempDir(), "big.db"), db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	d.Now = func() time.Time { return dbtest.Monday }
	start := time.Now()
	if _, err := demo.Create(ctx, d, demo.Options{Titles: benchTitles, Patrons: 2000}); err != nil {
		b.Fatal(err)
	}
	b.Logf("demo catalogue of %d titles created in %s", benchTitles, time.Since(start).Round(time.Millisecond))

	// A whole ISBN, as staff scan or type one.
	var isbn string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT isbn FROM records WHERE isbn <> '' ORDER BY id DESC LIMIT 1`).Scan(&isbn)
	}); err != nil {
		b.Fatal(err)
	}
	kinds := []struct {
		name    string
		queries []string
	}{
		{"one-word", []string{"river", "garden", "lantern", "winter", "history", "mirror", "island", "cooking"}},
		{"three-word", []string{"the silent river", "letters from lisbon", "the last lighthouse", "garden of secrets", "a history of", "the golden compass"}},
		{"field", []string{"title:orchard", "author:smith", "subject:history", "title:winter author:a", "subject:fiction", "isbn:" + isbn}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			perQuery := map[string][]time.Duration{}
			totals := map[string]int{}
			for i := 0; i < b.N; i++ {
				q := k.queries[i%len(k.queries)]
				t0 := time.Now()
				err := d.Read(ctx, func(tx *db.Tx) error {
					res, err := catalog.Search(tx, catalog.SearchQuery{Text: q})
					totals[q] = res.Total
					return err
				})
				took := time.Since(t0)
				times = append(times, took)
				perQuery[q] = append(perQuery[q], took)
				if err != nil {
					b.Fatalf("%q: %v", q, err)
				}
			}
			for _, q := range k.queries {
				if ts := perQuery[q]; len(ts) > 0 {
					slices.Sort(ts)
					b.Logf("%-24q %6d matches, median %v", q, totals[q], ts[len(ts)/2].Round(10*time.Microsecond))
				}
			}
			slices.Sort(times)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(times[len(times)/2]), "median-ms")
			b.ReportMetric(ms(times[(len(times)*95)/100]), "p95-ms")
		})
	}
}

// BenchmarkSearchEngines compares search latency on SQLite and PostgreSQL on the
// same catalogue: a demo catalogue of benchTitles titles made on SQLite and its
// records and copies copied to a PostgreSQL test database (pgtest; run it under
// scripts/pg.sh), or kept between runs (benchEngines: STACKS_BENCH_SQLITE,
// STACKS_BENCH_POSTGRES). Each iteration runs the next search of a mix (BenchmarkSearch's
// one-word, three-word and field searches, and some sorted, filtered or second
// pages) on both engines, one after the other, so that both meet the same load;
// it reports each engine's p50, p95 and p99 in milliseconds.
//
// Search keeps what a search's words match under the catalogue's version
// (searchCache), and the mix repeats its 26 searches, so after the first pass
// every search finds its matches kept ("warm"). STACKS_BENCH_COLD=1 forgets
// them before every search (untimed): each search reads its matches as the
// first of its words since the last change to the records would.
func BenchmarkSearchEngines(b *testing.B) {
	ctx := context.Background()
	cold := os.Getenv("STACKS_BENCH_COLD") == "1"
	lite, pg := benchEngines(b, ctx)
	defer lite.Close()
	defer pg.Close()

	var isbn string
	if err := lite.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT isbn FROM records WHERE isbn <> '' ORDER BY id DESC LIMIT 1`).Scan(&isbn)
	}); err != nil {
		b.Fatal(err)
	}
	var mix []catalog.SearchQuery
	for _, text := range []string{"river", "garden", "lantern", "winter", "history", "mirror", "island", "cooking",
		"the silent river", "letters from lisbon", "the last lighthouse", "garden of secrets", "a history of", "the golden compass",
		"title:orchard", "author:smith", "subject:history", "title:winter author:a", "subject:fiction", "isbn:" + isbn} {
		mix = append(mix, catalog.SearchQuery{Text: text})
	}
	mix = append(mix,
		catalog.SearchQuery{Text: "history", Available: true},
		catalog.SearchQuery{Text: "river", Sort: "title"},
		catalog.SearchQuery{Text: "subject:fiction", Sort: "year"},
		catalog.SearchQuery{Text: "garden", Page: 2},
		catalog.SearchQuery{Text: "émile"},
		catalog.SearchQuery{Text: "winter", Branch: "EAS", ItemType: "BOOK"},
	)
	engines := []struct {
		name string
		d    *db.DB
	}{{"sqlite", lite}, {"postgres", pg}}
	times := make([][]time.Duration, len(engines))
	perQuery := make([]map[int][]time.Duration, len(engines))
	for i := range perQuery {
		perQuery[i] = map[int][]time.Duration{}
	}
	// One pass of the mix on each first: caches and prepared statements.
	for _, e := range engines {
		for _, q := range mix {
			if err := e.d.Read(ctx, func(tx *db.Tx) error { _, err := catalog.Search(tx, q); return err }); err != nil {
				b.Fatalf("%s %+v: %v", e.name, q, err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		qi := i % len(mix)
		for ei, e := range engines {
			if cold {
				catalog.ForgetSearches(e.d)
			}
			t0 := time.Now()
			err := e.d.Read(ctx, func(tx *db.Tx) error { _, err := catalog.Search(tx, mix[qi]); return err })
			took := time.Since(t0)
			if err != nil {
				b.Fatalf("%s %+v: %v", e.name, mix[qi], err)
			}
			times[ei] = append(times[ei], took)
			perQuery[ei][qi] = append(perQuery[ei][qi], took)
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pct := func(ts []time.Duration, p int) time.Duration { return ts[min(len(ts)-1, len(ts)*p/100)] }
	// One line (the benchmark's log keeps only its first ten lines).
	var table strings.Builder
	for qi, q := range mix {
		if len(perQuery[0][qi]) == 0 {
			continue
		}
		fmt.Fprintf(&table, "; %q %s%s available=%v page %d", q.Text, q.Sort, q.Branch, q.Available, max(q.Page, 1))
		for ei, e := range engines {
			ts := perQuery[ei][qi]
			slices.Sort(ts)
			fmt.Fprintf(&table, " %s %.1f", e.name, ms(ts[len(ts)/2]))
		}
	}
	b.Logf("medians by search (ms)%s", table.String())
	for ei, e := range engines {
		slices.Sort(times[ei])
		b.ReportMetric(ms(pct(times[ei], 50)), e.name+"-p50-ms")
		b.ReportMetric(ms(pct(times[ei], 95)), e.name+"-p95-ms")
		b.ReportMetric(ms(pct(times[ei], 99)), e.name+"-p99-ms")
	}
}

// vacuumAnalyze runs VACUUM ANALYZE on the PostgreSQL database at url (outside
// a transaction, which db's Write would open).
func vacuumAnalyze(ctx context.Context, url string) error {
	c, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.ExecContext(ctx, `VACUUM ANALYZE`)
	return err
}

// benchEngines opens BenchmarkSearchEngines' two catalogues. By default both are
// new: a demo catalogue of benchTitles titles made on SQLite in a temporary
// file, and a pgtest database it is copied to. Building 100,000 titles takes
// minutes, so two variables keep them between runs:
//
//   - STACKS_BENCH_SQLITE, a file: the SQLite catalogue is made there if the
//     file does not exist, and read from it if it does;
//   - STACKS_BENCH_POSTGRES, a database URL (an existing, possibly empty
//     database): migrated, and filled from SQLite's catalogue if it has no
//     records.
//
// A kept catalogue must be of benchTitles titles: delete the file or drop the
// database to change the size.
func benchEngines(b *testing.B, ctx context.Context) (lite, pg *db.DB) {
	path := os.Getenv("STACKS_BENCH_SQLITE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "big.db")
	}
	_, statErr := os.Stat(path)
	lite, err := db.Open(path, db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := lite.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	lite.Now = func() time.Time { return dbtest.Monday }
	if statErr != nil {
		start := time.Now()
		if _, err := demo.Create(ctx, lite, demo.Options{Titles: benchTitles, Patrons: 20}); err != nil {
			b.Fatal(err)
		}
		b.Logf("SQLite: demo catalogue of %d titles created in %s", benchTitles, time.Since(start).Round(time.Millisecond))
	}
	url := os.Getenv("STACKS_BENCH_POSTGRES")
	if url == "" {
		url = pgtest.URL(b)
	}
	pg, err = db.Open(url, db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pg.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var records int
	if err := pg.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&records)
	}); err != nil {
		b.Fatal(err)
	}
	if records == 0 {
		start := time.Now()
		if err := copyCatalogue(ctx, lite, pg); err != nil {
			b.Fatal(err)
		}
		// As autovacuum would in time: the planner's statistics, the visibility map.
		if err := vacuumAnalyze(ctx, url); err != nil {
			b.Fatal(err)
		}
		b.Logf("PostgreSQL: catalogue copied and analysed in %s", time.Since(start).Round(time.Millisecond))
	}
	return lite, pg
}
