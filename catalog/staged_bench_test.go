package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// BenchmarkStagedImport10000 measures a staged import of 10,000 records, each
// with a copy in 952, into a library of 3,333 records that about a third of
// them match (a third of those by 001, a third by 035, a third by ISBN-13
// against an ISBN-10): the staging with its matching, and the commit that
// overlays the matches and adds the rest, on each engine. Run it with
// -benchtime=1x.
func BenchmarkStagedImport10000(b *testing.B) {
	for _, e := range pgtest.Engines() {
		b.Run(e.String(), func(b *testing.B) {
			ctx := context.Background()
			const total, matching = 10000, 3333
			existing := func(i int) *marc.Record {
				switch i % 3 {
				case 0:
					return sbib(fmt.Sprintf("Existing %d", i), scf("001", fmt.Sprintf("V%d", i)))
				case 1:
					return sbib(fmt.Sprintf("Existing %d", i), sdf("035", 'a', fmt.Sprintf("(OCoLC)ocm%08d", i)))
				}
				return sbib(fmt.Sprintf("Existing %d", i), sdf("020", 'a', isbn10(i)))
			}
			incoming := func(i int) *marc.Record {
				copy := sdf("952", 'p', fmt.Sprintf("ST%06d", i), 'o', fmt.Sprintf("823 S%d", i))
				author := sdf("100", 'a', fmt.Sprintf("Author %d", i%500))
				title := fmt.Sprintf("Incoming %d", i)
				if i < matching {
					switch i % 3 {
					case 0:
						return sbib(title, scf("001", fmt.Sprintf("V%d", i)), author, copy)
					case 1:
						return sbib(title, sdf("035", 'a', fmt.Sprintf("%d", i)), author, copy)
					}
					return sbib(title, sdf("020", 'a', catalog.ISBNForms(isbn10(i))[1]), author, copy)
				}
				return sbib(title, scf("001", fmt.Sprintf("N%d", i)), sdf("020", 'a', fmt.Sprintf("2%08d0", i)), author, copy)
			}
			var old, file bytes.Buffer
			for i := 0; i < matching; i++ {
				if err := marc.WriteISO2709(&old, existing(i)); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < total; i++ {
				if err := marc.WriteISO2709(&file, incoming(i)); err != nil {
					b.Fatal(err)
				}
			}
			var took time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				l := newLib(b, e)
				if _, err := catalog.Import(ctx, l.d, marc.NewReader(bytes.NewReader(old.Bytes())), catalog.ImportOptions{
					Actor: stacks.Actor{Name: "bench"}, Branch: "CEN", ItemType: "BOOK"}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				id, err := catalog.StageImport(ctx, l.d, marc.NewReader(bytes.NewReader(file.Bytes())), catalog.StageOptions{
					Actor: stacks.Actor{Name: "bench"}, FileName: "bench.mrc", Branch: "CEN", ItemType: "BOOK"})
				if err != nil {
					b.Fatal(err)
				}
				staged := time.Since(start)
				sum, err := catalog.CommitImport(ctx, l.d, stacks.Actor{Name: "bench"}, id)
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				b.StopTimer()
				if sum.Overlaid != matching || sum.Created != total-matching || sum.Copies != total {
					b.Fatalf("commit %+v", sum)
				}
				b.Logf("%s: staged in %v, committed in %v", e, staged.Round(time.Millisecond), (time.Since(start) - staged).Round(time.Millisecond))
				b.StartTimer()
			}
			b.ReportMetric(float64(total*b.N)/took.Seconds(), "records/s")
		})
	}
}

// isbn10 is an ISBN-10 with a valid check digit.
func isbn10(i int) string {
	return catalog.ISBNForms(catalog.ISBNForms(fmt.Sprintf("1%08d0", i))[1])[1]
}

// BenchmarkMatchBy035 measures matching incoming records by their 035 $a in a
// catalogue of 20,000 records that each carry one, from the index of 035
// numbers (record_system_numbers), on each engine. One incoming record is
// copy cataloguing's import; 500 are a page of a staged or direct import.
func BenchmarkMatchBy035(b *testing.B) {
	for _, e := range pgtest.Engines() {
		b.Run(e.String(), func(b *testing.B) {
			ctx := context.Background()
			const records = 20000
			var file bytes.Buffer
			for i := range records {
				if err := marc.WriteISO2709(&file, sbib(fmt.Sprintf("Existing %d", i), sdf("035", 'a', fmt.Sprintf("(OCoLC)ocm%08d", i+1)))); err != nil {
					b.Fatal(err)
				}
			}
			l := newLib(b, e)
			if _, err := catalog.Import(ctx, l.d, marc.NewReader(bytes.NewReader(file.Bytes())), catalog.ImportOptions{
				Actor: stacks.Actor{Name: "bench"}, Branch: "CEN", ItemType: "BOOK"}); err != nil {
				b.Fatal(err)
			}
			for _, n := range []int{1, 500} {
				recs := make([]*marc.Record, n)
				for i := range recs {
					recs[i] = sbib("Incoming", sdf("035", 'a', fmt.Sprintf("%d", 1000+i*37%(records-1000))))
				}
				b.Run(fmt.Sprint(n), func(b *testing.B) {
					for b.Loop() {
						m := catalog.NewMatcher()
						if err := l.d.Read(ctx, func(tx *db.Tx) error { return m.Prefetch(tx, recs) }); err != nil {
							b.Fatal(err)
						}
						if rule, _, _ := m.Match(recs[n-1]); rule != catalog.RuleSystem {
							b.Fatalf("matched by %q, want 035", rule)
						}
					}
				})
			}
		})
	}
}
