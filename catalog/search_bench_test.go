package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
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
	d.Now = func() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }
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
