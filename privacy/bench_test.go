package privacy_test

import (
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/privacy"
)

// BenchmarkAnonymise times a run over 20,000 old returned loans in chunks of
// DefaultChunk, and reports the mean time of one write transaction: how long a
// desk's checkout may wait behind the run.
//
//	go test ./privacy/ -run '^$' -bench Anonymise -benchtime 3x
func BenchmarkAnonymise(b *testing.B) {
	const loans = 20000
	for range b.N {
		b.StopTimer()
		d := mustOpenDemo(b)
		exec(b, d, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at, return_branch_id)
			SELECT (SELECT min(id) FROM items) + i % 100, (SELECT min(id) FROM patrons) + i % 20,
				1, ?, ?, ?, 1 FROM n`, loans, db.FormatTime(days(400)), db.FormatTime(days(379)), db.FormatTime(days(380)))
		b.StartTimer()
		start := time.Now()
		res, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(testNow, 30), privacy.Options{})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if res.Loans < loans {
			b.Fatalf("anonymised %d loans, want at least %d", res.Loans, loans)
		}
		chunks := (res.Loans + privacy.DefaultChunk - 1) / privacy.DefaultChunk
		b.ReportMetric(float64(res.Loans)/took.Seconds(), "loans/s")
		b.ReportMetric(float64(took.Milliseconds())/float64(chunks), "ms/chunk")
	}
}
