package reports_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/reports"
)

// benchTitles is the library size the reports' target (200 ms each) is set for.
var benchTitles = func() int {
	if n, err := strconv.Atoi(os.Getenv("STACKS_BENCH_TITLES")); err == nil && n > 0 {
		return n
	}
	return 100000
}()

// BenchmarkReports times each standard report with its default filters (as the
// page first shows it: the page's rows, not the CSV file's), and a few heavier
// variants (a year of most borrowed titles, every overdue row), on a 100,000-title
// demo library (STACKS_BENCH_TITLES changes it), reporting the median and the
// worst run in milliseconds, and the median CPU time the process used for it (on a
// loaded machine, closer to what the report costs). make bench-reports runs it.
func BenchmarkReports(b *testing.B) {
	// STACKS_BENCH_DB keeps the library in a file between runs (created there
	// when missing), so that runs can be alternated without creating it again.
	path, keep := os.LookupEnv("STACKS_BENCH_DB")
	if !keep {
		path = filepath.Join(b.TempDir(), "big.db")
	}
	_, statErr := os.Stat(path)
	d, err := db.Open(path, db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	d.Now = func() time.Time { return demoNow }
	if !keep || statErr != nil {
		start := time.Now()
		sum, err := demo.Create(ctx, d, demo.Options{Titles: benchTitles, Patrons: 20000})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("demo library of %d titles, %d items, %d patrons created in %s", sum.Records, sum.Items, sum.Patrons, time.Since(start).Round(time.Millisecond))
	}
	if _, err := reports.Rollup(ctx, d); err != nil {
		b.Fatal(err)
	}
	today := time.Date(demoNow.Year(), demoNow.Month(), demoNow.Day(), 0, 0, 0, 0, time.UTC)
	// The background job's work (stacks serve, every minute): counting the
	// collection (a read of every item and one short write), and rolling up
	// loans when there are none new (the usual minute of a quiet desk costs
	// little more: a few rows).
	b.Run("rollup/collection-refresh", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := reports.RefreshCollection(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Pruning the open loans (the returned ones out, renewed due dates in): a
	// read of open_loans and of each of its loans, and one short write.
	b.Run("rollup/prune-open-loans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := reports.PruneOpenLoans(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rollup/no-new-loans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := reports.Rollup(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, def := range reports.Definitions {
		variants := map[string]url.Values{"default": def.Defaults(today)}
		switch def.Slug {
		case "most-borrowed":
			// The default is the last 30 days; a whole year reads twelve times as many loans.
			v := def.Defaults(today)
			v.Set("from", today.AddDate(-1, 0, 0).Format(db.DayFormat))
			variants["year"] = v
		case "new-patrons":
			variants["all-time"] = url.Values{}
		case "overdue":
			variants["csv-all-rows"] = url.Values{"all": {"1"}}
		}
		if def.Slug == "circulation" {
			for _, g := range reports.GroupOptions {
				v := def.Defaults(today)
				v.Set("group", g[0])
				variants[g[0]] = v
			}
			delete(variants, "default")
		}
		for name, v := range variants {
			f, err := def.ParseFilter(v)
			if err != nil {
				b.Fatal(err)
			}
			f.All = v.Get("all") != ""
			b.Run(def.Slug+"/"+name, func(b *testing.B) {
				times := make([]time.Duration, 0, b.N)
				cpu := make([]time.Duration, 0, b.N)
				var total int
				for i := 0; i < b.N; i++ {
					t0, c0 := time.Now(), cpuTime()
					err := d.Read(ctx, func(tx *db.Tx) error {
						res, err := def.Run(tx, f)
						total = res.Total
						return err
					})
					times = append(times, time.Since(t0))
					cpu = append(cpu, cpuTime()-c0)
					if err != nil {
						b.Fatal(err)
					}
				}
				slices.Sort(times)
				slices.Sort(cpu)
				ms := func(t time.Duration) float64 { return float64(t.Microseconds()) / 1000 }
				b.ReportMetric(ms(times[len(times)/2]), "median-ms")
				b.ReportMetric(ms(cpu[len(cpu)/2]), "cpu-median-ms")
				b.ReportMetric(ms(times[len(times)-1]), "max-ms")
				b.ReportMetric(float64(total), "total")
			})
		}
	}
}
