package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func TestParseBarcodes(t *testing.T) {
	got := catalog.ParseBarcodes(" B1\r\nB2\n\n  B1 \tB3,B4;B2\n")
	if want := []string{"B1", "B2", "B3", "B4"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ParseBarcodes: %q, want %q", got, want)
	}
	if got := catalog.ParseBarcodes(" \n\r\n"); len(got) != 0 {
		t.Fatalf("ParseBarcodes of blanks: %q", got)
	}
}

// TestBatch: a batch edit previews each barcode (found, not found, refused,
// unchanged), applies to the items it changes in one batch audited once,
// withdraws with the reason (cancelling holds on those very copies), and is
// undone to the values before it, but not once an item changed since, twice,
// or after a day. `stacks check` holds after each.
func TestBatch(t *testing.T) { forEngines(t, testBatch) }

func testBatch(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec, items := l.record("Batched Zeppelins", "B1", "B2", "B3", "B4")
	l.lend(items[2], 1, false)
	ahead := l.hold(rec, 3, 0, l.now.Add(-2*time.Hour))
	onB1 := l.hold(rec, 2, items[0], l.now.Add(-time.Hour))
	behind := l.hold(rec, 1, 0, l.now.Add(-time.Minute))
	l.exec(`UPDATE items SET location = 'Stacks' WHERE id = ?`, items[3])
	barcodes := catalog.ParseBarcodes("B1\nB2\nB3\nNOPE\nB4\nB1\n")

	t.Run("Preview", func(t *testing.T) {
		p, err := l.svc.PreviewBatch(ctx, barcodes, catalog.BatchChange{Field: catalog.BatchStatus, Value: catalog.StatusMissing})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ln := range p.Lines {
			got = append(got, fmt.Sprintf("%s found=%v %s>%s refused=%v", ln.Barcode, ln.Found, ln.Before, ln.After, ln.Refused != ""))
		}
		want := []string{"B1 found=true Available>Missing refused=false", "B2 found=true Available>Missing refused=false",
			"B3 found=true Checked out>Missing refused=true", "NOPE found=false > refused=false", "B4 found=true Available>Missing refused=false"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("preview:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if p.Changed != 3 || p.Refused != 1 || p.NotFound != 1 || p.Unchanged != 0 {
			t.Errorf("counts %+v", p)
		}
		if n := l.int(`SELECT count(*) FROM items WHERE status = 'missing'`); n != 0 {
			t.Errorf("the preview changed %d items", n)
		}
		_, err = l.svc.PreviewBatch(ctx, barcodes, catalog.BatchChange{Field: catalog.BatchItemType, Value: "NOSUCH"})
		wantRefused(t, err, stacks.EINVALID, "no item type")
		_, err = l.svc.PreviewBatch(ctx, barcodes, catalog.BatchChange{Field: catalog.BatchStatus, Value: catalog.StatusWithdrawn})
		wantRefused(t, err, stacks.EINVALID, "Withdraw")
		_, err = l.svc.PreviewBatch(ctx, nil, catalog.BatchChange{Field: catalog.BatchLocation, Value: "X"})
		wantRefused(t, err, stacks.EINVALID, "barcodes")
	})

	var locationBatch int64
	t.Run("Location", func(t *testing.T) {
		res, err := l.svc.ApplyBatch(ctx, editor, barcodes, catalog.BatchChange{Field: catalog.BatchLocation, Value: "Stacks"})
		if err != nil {
			t.Fatal(err)
		}
		locationBatch = res.BatchID
		if res.Changed != 3 || res.Unchanged != 1 || res.NotFound != 1 {
			t.Errorf("result %+v", res.BatchPreview)
		}
		if n := l.int(`SELECT count(*) FROM items WHERE location = 'Stacks'`); n != 4 {
			t.Errorf("%d items in Stacks, want 4", n)
		}
		if n := l.int(`SELECT count(*) FROM item_batch_items WHERE batch_id = ? AND location = ''`, res.BatchID); n != 3 {
			t.Errorf("%d items recorded with their location before, want 3", n)
		}
		if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'item.batch' AND object_id = ?`, res.BatchID); n != 1 {
			t.Errorf("%d audit rows, want one for the batch", n)
		}
		l.checkClean()
	})

	t.Run("WithdrawAndUndo", func(t *testing.T) {
		l.now = l.now.Add(time.Minute)
		res, err := l.svc.ApplyBatch(ctx, editor, []string{"B1", "B2", "B3"}, catalog.BatchChange{Field: catalog.BatchWithdraw, Value: "Weeded"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed != 2 || res.Refused != 1 || res.HoldsCancelled != 1 {
			t.Errorf("result %+v, %d holds cancelled", res.BatchPreview, res.HoldsCancelled)
		}
		if got := l.str(`SELECT string_agg(barcode || ':' || status || ':' || withdrawn_reason, ' ' ORDER BY barcode) FROM items`); got != "B1:withdrawn:Weeded B2:withdrawn:Weeded B3:on_loan: B4:available:" {
			t.Errorf("items: %s", got)
		}
		if got := l.str(`SELECT status FROM holds WHERE id = ?`, onB1); got != "cancelled" {
			t.Errorf("hold on B1 is %s", got)
		}
		if q := l.queue(rec); !sameIDs(q, []int64{ahead, behind}) {
			t.Errorf("queue after the withdrawal %v, want %v", q, []int64{ahead, behind})
		}
		l.checkClean()
		l.now = l.now.Add(time.Minute)
		late := l.hold(rec, 3, 0, l.now)
		l.now = l.now.Add(time.Minute)
		u, err := l.svc.UndoBatch(ctx, editor, res.BatchID)
		if err != nil || u.Items != 2 {
			t.Fatalf("undo: %+v, %v", u, err)
		}
		// The hold on B1 is back in its place, ahead of the one placed since.
		if u.HoldsRestored != 1 {
			t.Errorf("undo restored %d holds, want 1", u.HoldsRestored)
		}
		if q := l.queue(rec); !sameIDs(q, []int64{ahead, onB1, behind, late}) {
			t.Errorf("queue after the undo %v, want %v", q, []int64{ahead, onB1, behind, late})
		}
		if got := l.str(`SELECT status || '|' || cancel_reason || '|' || coalesce(closed_at, '-') || '|' || coalesce(item_id, 0) FROM holds WHERE id = ?`, onB1); got != fmt.Sprintf("queued||-|%d", items[0]) {
			t.Errorf("hold on B1 after the undo: %s", got)
		}
		if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'hold.restored' AND object_id = ?`, onB1); n != 1 {
			t.Errorf("%d audit rows of the restored hold", n)
		}
		if got := l.str(`SELECT string_agg(barcode || ':' || status || ':' || withdrawn_reason || ':' || coalesce(withdrawn_at, '-'), ' ' ORDER BY barcode) FROM items`); got != "B1:available::- B2:available::- B3:on_loan::- B4:available::-" {
			t.Errorf("items after undo: %s", got)
		}
		_, err = l.svc.UndoBatch(ctx, editor, res.BatchID)
		wantRefused(t, err, stacks.ECONFLICT, "already undone")
		if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'item.batch_undo' AND object_id = ?`, res.BatchID); n != 1 {
			t.Errorf("%d audit rows of the undo", n)
		}
		l.checkClean()
	})

	t.Run("UndoRefused", func(t *testing.T) {
		// B1 and B2 were changed since the location batch (withdrawn, put back).
		_, err := l.svc.UndoBatch(ctx, editor, locationBatch)
		wantRefused(t, err, stacks.ECONFLICT, "B1, B2", "changed since")
		l.now = l.now.Add(time.Minute)
		res, err := l.svc.ApplyBatch(ctx, editor, []string{"B4"}, catalog.BatchChange{Field: catalog.BatchCallNumberPrefix, Value: "REF"})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.str(`SELECT call_number FROM items WHERE barcode = 'B4'`); got != "REF 823 B4" {
			t.Errorf("call number %q", got)
		}
		_, err = l.svc.ApplyBatch(ctx, editor, []string{"B4"}, catalog.BatchChange{Field: catalog.BatchCallNumberPrefix, Value: "REF"})
		wantRefused(t, err, stacks.ECONFLICT, "changes no item")
		l.now = l.now.Add(catalog.BatchUndoWindow + time.Minute)
		_, err = l.svc.UndoBatch(ctx, editor, res.BatchID)
		wantRefused(t, err, stacks.ECONFLICT, "more than a day")
		_, err = l.svc.UndoBatch(ctx, editor, 999999)
		wantRefused(t, err, stacks.ENOTFOUND)
	})

	t.Run("HomeBranchAndType", func(t *testing.T) {
		res, err := l.svc.ApplyBatch(ctx, editor, []string{"B3", "B4"}, catalog.BatchChange{Field: catalog.BatchHomeBranch, Value: "EAS"})
		if err != nil || res.Changed != 2 {
			t.Fatalf("%+v, %v", res.BatchPreview, err)
		}
		// The copy on the shelf moves with its home; the one on loan is still out from Central.
		if got := l.str(`SELECT string_agg(barcode || ':' || home_branch_id || ':' || current_branch_id, ' ' ORDER BY barcode) FROM items WHERE barcode IN ('B3', 'B4')`); got != "B3:2:1 B4:2:2" {
			t.Errorf("branches: %s", got)
		}
		if _, err := l.svc.ApplyBatch(ctx, editor, []string{"B1"}, catalog.BatchChange{Field: catalog.BatchItemType, Value: "DVD"}); err != nil {
			t.Fatal(err)
		}
		if n := l.int(`SELECT item_type_id FROM items WHERE barcode = 'B1'`); n != 2 {
			t.Errorf("item type %d", n)
		}
		if bs, err := l.svc.RecentBatches(ctx); err != nil || len(bs) != 2 {
			t.Errorf("recent batches: %+v, %v (want the two of the last day)", bs, err)
		}
		l.checkClean()
	})
}

// BenchmarkBatchEdit10000 times batch edits of 10,000 items, each in one
// transaction with each item's values kept for the undo, on a library of
// 10,000 copies of 2,500 titles, with durable commits: a shelving location
// set, and a withdrawal undone (reported as ms/batch and ms/undo). A
// withdrawal costs more than a location: it changes the copies' status, which
// redates each title for harvesters (items_updated_redate).
func BenchmarkBatchEdit10000(b *testing.B) {
	const n = 10000
	l := newLib(b, dbtest.Engine())
	ctx := context.Background()
	// 2,500 titles of four copies each, as a library's shelves hold them.
	stamp := db.FormatTime(l.now)
	for start := 0; start < n/4; start += 500 {
		var rows []string
		for i := start; i < start+500; i++ {
			rows = append(rows, fmt.Sprintf("(%d, 'Benchmarked title %d', '%s', '%s')", 1000+i, i, stamp, stamp))
		}
		l.exec(`INSERT INTO records (id, title, created_at, updated_at) VALUES ` + strings.Join(rows, ", "))
	}
	barcodes := make([]string, n)
	for start := 0; start < n; start += 500 {
		var rows []string
		for i := start; i < start+500; i++ {
			barcodes[i] = fmt.Sprintf("BE%06d", i)
			rows = append(rows, fmt.Sprintf("('%s', %d, 1, 1, 1, '823 BEN', '%s', '%s')", barcodes[i], 1000+i/4, stamp, stamp))
		}
		l.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, created_at, updated_at) VALUES ` + strings.Join(rows, ", "))
	}
	shelf := 0 // each batch moves the items to another shelf, across runs
	b.Run("Location", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			shelf++
			res, err := l.svc.ApplyBatch(ctx, editor, barcodes, catalog.BatchChange{Field: catalog.BatchLocation, Value: fmt.Sprintf("Stacks %d", shelf)})
			if err != nil {
				b.Fatal(err)
			}
			if res.Changed != n {
				b.Fatalf("changed %d of %d", res.Changed, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
	b.Run("WithdrawUndo", func(b *testing.B) {
		var apply, undo time.Duration
		for i := 0; i < b.N; i++ {
			// Each batch starts a minute after the last one's undo.
			l.now = l.now.Add(time.Minute)
			start := time.Now()
			res, err := l.svc.ApplyBatch(ctx, editor, barcodes, catalog.BatchChange{Field: catalog.BatchWithdraw, Value: "Weeded"})
			if err != nil || res.Changed != n {
				b.Fatalf("withdraw: %d changed, %v", res.Changed, err)
			}
			apply += time.Since(start)
			l.now = l.now.Add(time.Minute)
			start = time.Now()
			if got, err := l.svc.UndoBatch(ctx, editor, res.BatchID); err != nil || got.Items != n {
				b.Fatalf("undo: %d, %v", got, err)
			}
			undo += time.Since(start)
		}
		b.ReportMetric(float64(apply.Milliseconds())/float64(b.N), "ms/batch")
		b.ReportMetric(float64(undo.Milliseconds())/float64(b.N), "ms/undo")
	})
}

// TestBatchUndoRestoresQueue: undoing a batch withdrawal of two copies queues
// again the holds it cancelled on both, each where it was among the title
// holds, ahead of one placed since; a hold cancelled again since, for another
// reason, stays cancelled.
func TestBatchUndoRestoresQueue(t *testing.T) { forEngines(t, testBatchUndoRestoresQueue) }

func testBatchUndoRestoresQueue(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec, items := l.record("Requeued Zeppelins", "Q1", "Q2", "Q3")
	start := l.now.Add(-time.Hour)
	t1 := l.hold(rec, 1, 0, start)
	h1 := l.hold(rec, 2, items[0], start.Add(time.Minute))
	t2 := l.hold(rec, 3, 0, start.Add(2*time.Minute))
	h2 := l.hold(rec, 1, items[1], start.Add(3*time.Minute))
	h3 := l.hold(rec, 2, items[1], start.Add(4*time.Minute))
	res, err := l.svc.ApplyBatch(ctx, editor, []string{"Q1", "Q2"}, catalog.BatchChange{Field: catalog.BatchWithdraw, Value: "Weeded"})
	if err != nil || res.HoldsCancelled != 3 {
		t.Fatalf("withdraw: %d holds cancelled, %v; want 3", res.HoldsCancelled, err)
	}
	l.now = l.now.Add(time.Minute)
	l.exec(`UPDATE holds SET cancel_reason = 'The patron asked.', closed_at = ? WHERE id = ?`, db.FormatTime(l.now), h3)
	late := l.hold(rec, 3, 0, l.now)
	l.now = l.now.Add(time.Minute)
	u, err := l.svc.UndoBatch(ctx, editor, res.BatchID)
	if err != nil || u.Items != 2 || u.HoldsRestored != 2 {
		t.Fatalf("undo: %+v, %v; want 2 items and 2 holds", u, err)
	}
	if q := l.queue(rec); !sameIDs(q, []int64{t1, h1, t2, h2, late}) {
		t.Errorf("queue after the undo %v, want %v", q, []int64{t1, h1, t2, h2, late})
	}
	if got := l.str(`SELECT status || '|' || cancel_reason FROM holds WHERE id = ?`, h3); got != "cancelled|The patron asked." {
		t.Errorf("the hold cancelled again since: %s", got)
	}
	l.checkClean()
}
