package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

func marcXML(t *testing.T, fields ...marc.Field) string {
	t.Helper()
	s, err := marc.ToXML(&marc.Record{Leader: "00000nam a2200000 a 4500", Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func df(tag string, subs ...string) marc.Field {
	f := marc.Field{Tag: tag, Ind1: ' ', Ind2: '0'}
	for i := 0; i+1 < len(subs); i += 2 {
		f.Subfields = append(f.Subfields, marc.Subfield{Code: subs[i][0], Value: subs[i+1]})
	}
	return f
}

// TestMergeRecords: the record kept takes the other's copies (one on loan) and
// holds, the two queues joined in the order placed and a patron's second hold
// cancelled; chosen MARC fields replace its own and the catalogue's fields
// follow; the merged record is deleted for OAI-PMH and its link redirects,
// through a second merge too. `stacks check` holds.
func TestMergeRecords(t *testing.T) { forEngines(t, testMergeRecords) }

func testMergeRecords(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	keep, _ := l.record("Zeppelins", "KA1")
	gone, goneItems := l.record("Zeppelins : a history", "GB1", "GB2")
	l.exec(`UPDATE records SET marc = ? WHERE id = ?`, marcXML(t, marc.Field{Tag: "001", Value: "K1"}, df("245", "a", "Zeppelins"), df("650", "a", "Airships")), keep)
	l.exec(`UPDATE records SET marc = ? WHERE id = ?`, marcXML(t, marc.Field{Tag: "001", Value: "G1"}, df("245", "a", "Zeppelins :", "b", "a history"),
		df("520", "a", "How airships flew."), df("650", "a", "Dirigibles"), df("650", "a", "Aeronautics", "x", "History")), gone)
	l.lend(goneItems[0], 3, false)
	t0 := l.now.Add(-10 * time.Hour)
	k1 := l.hold(keep, 1, 0, t0)
	g1 := l.hold(gone, 3, 0, t0.Add(time.Hour))
	k2 := l.hold(keep, 2, 0, t0.Add(2*time.Hour))
	dup := l.hold(gone, 1, 0, t0.Add(3*time.Hour))
	l.checkClean()

	p, err := l.svc.MergePreview(ctx, keep, gone)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.MergeTags, " ") != "245 520 650" || p.KeepHolds != 2 || p.MergeHolds != 2 || len(p.MergeCopies) != 2 {
		t.Errorf("preview: tags %v, holds %d and %d, %d copies", p.MergeTags, p.KeepHolds, p.MergeHolds, len(p.MergeCopies))
	}
	_, err = l.svc.MergeRecords(ctx, editor, keep, keep, nil)
	wantRefused(t, err, stacks.EINVALID, "itself")
	_, err = l.svc.MergeRecords(ctx, editor, keep, gone, []string{"24"})
	wantRefused(t, err, stacks.EINVALID, "not a MARC tag")

	res, err := l.svc.MergeRecords(ctx, editor, keep, gone, []string{"520", "650"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CopiesMoved != 2 || res.HoldsMoved != 1 || res.HoldsCancelled != 1 {
		t.Errorf("result %+v", res)
	}
	if q := l.queue(keep); !sameIDs(q, []int64{k1, g1, k2}) {
		t.Errorf("queue %v, want %v (in the order placed)", q, []int64{k1, g1, k2})
	}
	if got := l.str(`SELECT status FROM holds WHERE id = ?`, dup); got != "cancelled" {
		t.Errorf("the patron's second hold is %s", got)
	}
	if n := l.int(`SELECT count(*) FROM items WHERE record_id = ?`, keep); n != 3 {
		t.Errorf("%d copies on the record kept", n)
	}
	if got := l.str(`SELECT title || '|' || subjects || '|' || control_number FROM records WHERE id = ?`, keep); got != "Zeppelins|Dirigibles\nAeronautics -- History|K1" {
		t.Errorf("record kept: %q", got)
	}
	src := l.str(`SELECT marc FROM records WHERE id = ?`, keep)
	if !strings.Contains(src, "How airships flew.") || strings.Contains(src, "Airships") || strings.Contains(src, "a history") {
		t.Errorf("MARC kept: %s", src)
	}
	h, err := l.svc.HarvestRecord(ctx, gone)
	if err != nil || !h.Deleted {
		t.Errorf("harvest of the merged record: %+v, %v", h, err)
	}
	if to, err := l.svc.RecordRedirect(ctx, gone); err != nil || to != keep {
		t.Errorf("redirect: %d, %v; want %d", to, err, keep)
	}
	if to, err := l.svc.RecordRedirect(ctx, keep); err != nil || to != 0 {
		t.Errorf("redirect of a live record: %d, %v", to, err)
	}
	if n := l.int(`SELECT count(*) FROM audit_log WHERE action IN ('record.merge', 'record.merged') AND object_id IN (?, ?)`, keep, gone); n != 2 {
		t.Errorf("%d audit rows", n)
	}
	l.checkClean()

	third, _ := l.record("Zeppelins (third copy)")
	if _, err := l.svc.MergeRecords(ctx, editor, third, keep, nil); err != nil {
		t.Fatal(err)
	}
	if to, err := l.svc.RecordRedirect(ctx, gone); err != nil || to != third {
		t.Errorf("redirect after a second merge: %d, %v; want %d", to, err, third)
	}
	if q := l.queue(third); !sameIDs(q, []int64{k1, g1, k2}) {
		t.Errorf("queue after a second merge %v", q)
	}
	l.checkClean()
	// The copies moved keep their history: the record they are on now cannot
	// be deleted.
	l.exec(`UPDATE loans SET returned_at = ? WHERE item_id = ?`, db.FormatTime(l.now), goneItems[0])
	l.exec(`UPDATE items SET status = 'available' WHERE id = ?`, goneItems[0])
	_, err = l.svc.DeleteRecord(ctx, editor, third, 0)
	wantRefused(t, err, stacks.ECONFLICT, "GB1 (1 loan)")

	// A record kept and later deleted: the link of the one merged into it no
	// longer leads anywhere (both are deleted for OAI-PMH).
	fourth, _ := l.record("Airships", "AS1")
	fifth, _ := l.record("Airships (duplicate)", "AS2")
	if _, err := l.svc.MergeRecords(ctx, editor, fourth, fifth, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.svc.DeleteRecord(ctx, editor, fourth, 0); err != nil {
		t.Fatal(err)
	}
	if to, err := l.svc.RecordRedirect(ctx, fifth); err != nil || to != 0 {
		t.Errorf("redirect to a deleted record: %d, %v", to, err)
	}
	if n := l.int(`SELECT count(*) FROM deleted_records WHERE record_id IN (?, ?)`, fourth, fifth); n != 2 {
		t.Errorf("%d of the two records reported deleted", n)
	}
	l.checkClean()
}
