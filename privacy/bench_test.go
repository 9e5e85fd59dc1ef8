package privacy_test

import (
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
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
		var longest time.Duration
		res, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(dbtest.Monday, 30), privacy.Options{OnWrite: func(d time.Duration) { longest = max(longest, d) }})
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
		b.ReportMetric(float64(longest.Microseconds())/1000, "ms/longest-write")
	}
}

// BenchmarkPurge times purging 100 inactive patrons with an audit log of
// 100,000 entries (each chunk reads the whole log once, on a read
// connection, for the patrons' cards, names, emails and phones; every entry
// holds one of the purged cards inside a longer one, "B1" in "B1X", which
// must be read as a candidate and left alone), and reports
// the time per patron and per chunk (30 patrons: a read, then a write).
//
//	go test ./privacy/ -run '^$' -bench Purge -benchtime 3x
func BenchmarkPurge(b *testing.B) {
	const patrons, entries = 100, 100000
	for range b.N {
		b.StopTimer()
		d := mustOpenDemo(b)
		exec(b, d, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO patrons (card, surname, first_name, email, category_id, home_branch_id, expires_on, created_at)
			SELECT 'B' || i, 'Bench' || i, 'Old', 'b' || i || '@example.org', 1, 1, '2020-01-01', '2019-01-01T00:00:00Z' FROM n`, patrons)
		exec(b, d, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO audit_log (at, actor, action, object_type, object_id, detail)
			SELECT '2026-01-01T00:00:00Z', 'desk', 'checkout', 'loan', i, 'loan ' || i || ' to card P' || (i % 500) || ', was card B' || (i % 100 + 1) || 'X' FROM n`, entries)
		b.StartTimer()
		start := time.Now()
		var longest time.Duration
		n, err := privacy.PurgeInactive(ctx, d, privacy.PurgeCutoff(dbtest.Monday, 3), privacy.Options{OnWrite: func(d time.Duration) { longest = max(longest, d) }})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if garbled := queryInt(b, d, `SELECT count(*) FROM audit_log WHERE `+instr+`(detail, '[purged]') > 0 AND action = 'checkout'`); garbled != 0 {
			b.Fatalf("%d other people's entries rewritten", garbled)
		}
		if n < patrons {
			b.Fatalf("purged %d patrons, want at least %d", n, patrons)
		}
		b.ReportMetric(float64(took.Milliseconds())/float64(n), "ms/patron")
		b.ReportMetric(float64(took.Milliseconds())/float64((n+29)/30), "ms/chunk")
		b.ReportMetric(float64(longest.Microseconds())/1000, "ms/longest-write")
	}
}
