package circulation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
)

// benchLibrary is a full-size demo library with the items and patrons a benchmark
// lends: available books at Central on titles nobody has on hold, and adults who
// may borrow without any block.
type benchLibrary struct {
	*env
	barcodes []string
	patrons  []int64
}

func newBenchLibrary(b *testing.B, synchronous string) *benchLibrary {
	b.Helper()
	sync, nocache := strings.CutSuffix(synchronous, "/no-stmt-cache")
	e := newEnvWith(b, db.Options{Synchronous: sync, NoStatementCache: nocache}, demo.Options{Titles: 2000})
	l := &benchLibrary{env: e}
	l.barcodes = e.queryStrings(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE t.code = 'BOOK' AND i.status = 'available' AND i.home_branch_id = 1 AND i.current_branch_id = 1
		  AND i.barcode LIKE '39999%'
		  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id)
		ORDER BY i.id`)
	for _, card := range e.queryStrings(`SELECT p.card FROM patrons p JOIN patron_categories c ON c.id = p.category_id
		WHERE c.code = 'ADULT' AND p.blocked = 0 AND p.expires_on > '2027-06-30'
		  AND coalesce((SELECT sum(amount_cents) FROM ledger WHERE patron_id = p.id), 0) <= 0
		  AND (SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL) < 10
		ORDER BY p.id`) {
		l.patrons = append(l.patrons, e.patronID(card))
	}
	if len(l.barcodes) < 100 || len(l.patrons) < 20 {
		b.Fatalf("only %d items and %d patrons to lend to", len(l.barcodes), len(l.patrons))
	}
	return l
}

func (l *benchLibrary) checkout(ctx context.Context, b *testing.B, i int) {
	_, err := l.svc.Checkout(ctx, circulation.CheckoutRequest{Actor: l.desk, PatronID: l.patrons[i%len(l.patrons)], Barcode: l.barcodes[i%len(l.barcodes)]})
	if err != nil {
		b.Fatalf("checkout %d: %v", i, err)
	}
}

func (l *benchLibrary) checkin(ctx context.Context, b *testing.B, i int) {
	r, err := l.svc.Checkin(ctx, circulation.CheckinRequest{Actor: l.desk, Barcode: l.barcodes[i%len(l.barcodes)], Batch: "bench"})
	if err != nil {
		b.Fatalf("checkin %d: %v", i, err)
	}
	if !r.WasOnLoan || r.Hold != nil || r.TransferTo != nil {
		b.Fatalf("checkin %d: %+v", i, r)
	}
}

// synchronousModes: with the fsync of a durable commit and without; and without
// the statement cache, to show what it saves.
var synchronousModes = []string{"FULL", "NORMAL", "NORMAL/no-stmt-cache"}

// BenchmarkCheckout times Checkout alone; each item is checked in again, untimed,
// so that any b.N finds it available and no patron reaches the loan limit.
func BenchmarkCheckout(b *testing.B) {
	for _, mode := range synchronousModes {
		b.Run(mode, func(b *testing.B) {
			l := newBenchLibrary(b, mode)
			ctx, stats := db.WithStats(context.Background())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.checkout(ctx, b, i)
				b.StopTimer()
				l.checkin(context.Background(), b, i)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(stats.Statements())/float64(b.N), "stmts/op")
		})
	}
}

// BenchmarkCheckin times Checkin alone, of an item checked out (untimed) just before.
func BenchmarkCheckin(b *testing.B) {
	for _, mode := range synchronousModes {
		b.Run(mode, func(b *testing.B) {
			l := newBenchLibrary(b, mode)
			ctx, stats := db.WithStats(context.Background())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				l.checkout(context.Background(), b, i)
				b.StartTimer()
				l.checkin(ctx, b, i)
			}
			b.StopTimer()
			b.ReportMetric(float64(stats.Statements())/float64(b.N), "stmts/op")
		})
	}
}
