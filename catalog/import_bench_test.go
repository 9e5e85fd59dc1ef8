package catalog_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
)

// BenchmarkImport measures the import rate: a 20,000-title demo catalogue exported
// as ISO 2709 (about 60,000 copies in 952 fields), imported into an empty library,
// with durable commits (synchronous=FULL) in batches of 500 records.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	src, err := db.Open(filepath.Join(b.TempDir(), "src.db"), db.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	src.Now = func() time.Time { return dbtest.Monday }
	if _, err := demo.Create(ctx, src, demo.Options{Titles: 20000, Patrons: 100}); err != nil {
		b.Fatal(err)
	}
	var file bytes.Buffer
	n, err := catalog.Export(ctx, src, &file, catalog.FormatISO2709)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d records, %d bytes of ISO 2709", n, file.Len())
	var took time.Duration
	var read int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := mustEmptyLibrary(b)
		b.StartTimer()
		start := time.Now()
		sum, err := catalog.Import(ctx, dst, marc.NewReader(bytes.NewReader(file.Bytes())), catalog.ImportOptions{
			Actor: stacks.Actor{Name: "bench"}, Branch: "CEN", ItemType: "BOOK"})
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		read += sum.Read
		if sum.Created != n {
			b.Fatalf("imported %+v of %d", sum, n)
		}
	}
	b.ReportMetric(float64(read)/took.Seconds(), "records/s")
}
