package sip_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
)

// TestCheckinExpiredHold checks in, over the protocol, a copy left on the hold
// shelf past its pickup time: the hold ends as expired, and the answer is that of
// where the copy goes now (the next hold here, or the shelf).
func TestCheckinExpiredHold(t *testing.T) {
	tests := []struct {
		name string
		next bool // P0002 queues for the title at Central
		// want are fields of the answer; none means the field must be absent.
		want  map[string]string
		alert byte
		item  string // items.status afterwards
		holds string // the holds of the title afterwards, "CARD:status" by id
	}{
		{"NextHoldHere", true,
			map[string]string{"CT": "CEN", "CV": "01", "CY": "P0002", "DA": "Blake Owing", "AF": "The hold this item was set aside for has expired and is ended."},
			'Y', "on_hold_shelf", "P0003:expired P0002:waiting"},
		{"BackToShelf", false,
			map[string]string{"CT": none, "CV": none, "CY": none, "DA": none, "AF": "The hold this item was set aside for has expired and is ended."},
			'N', "available", "P0003:expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.settings(func(u *sip.AccountUpdate) { u.Settings.CheckedInOK = true })
			// P0003's hold on I00010 has waited at Central since the 20th; it could
			// be collected until closing on Sunday 29 November (dbtest.Monday is the 30th).
			err := e.d.Write(context.Background(), func(tx *db.Tx) error {
				if _, err := tx.Exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id, waiting_since, pickup_by)
					SELECT i.record_id, p.id, 1, '2026-11-19T10:00:00Z', 0, 'waiting', i.id, '2026-11-20T10:00:00Z', '2026-11-29T20:00:00Z'
					FROM items i, patrons p WHERE i.barcode = 'I00010' AND p.card = 'P0003'`); err != nil {
					return err
				}
				if _, err := tx.Exec(`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00010'`); err != nil {
					return err
				}
				if !tt.next {
					return nil
				}
				_, err := tx.Exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status)
					SELECT i.record_id, p.id, 1, '2026-11-25T10:00:00Z', 1, 'queued'
					FROM items i, patrons p WHERE i.barcode = 'I00010' AND p.card = 'P0002'`)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			c := e.client()
			resp := send(t, c, checkinMsg("I00010"))
			if resp[:3] != "101" || resp[5] != tt.alert {
				t.Errorf("answer %s: want ok 1 and alert %c", resp, tt.alert)
			}
			fields := responseFields(resp, 22)
			for id, want := range tt.want {
				got, ok := fields[id]
				if want == none && ok {
					t.Errorf("%s = %q, want no such field (answer %s)", id, got, resp)
				} else if want != none && (!ok || got != want) {
					t.Errorf("%s = %q, want %q (answer %s)", id, got, want, resp)
				}
			}
			if got := e.queryString(`SELECT status FROM items WHERE barcode = 'I00010'`); got != tt.item {
				t.Errorf("item %s, want %s", got, tt.item)
			}
			got := ""
			for _, r := range queryRows(t, e.d, `SELECT p.card || ':' || h.status AS h FROM holds h JOIN patrons p ON p.id = h.patron_id
				WHERE h.record_id = (SELECT record_id FROM items WHERE barcode = 'I00010') ORDER BY h.id`) {
				if got != "" {
					got += " "
				}
				got += r[len("h="):]
			}
			if got != tt.holds {
				t.Errorf("holds %q, want %q", got, tt.holds)
			}
			if reason := e.queryString(`SELECT cancel_reason FROM holds WHERE status = 'expired'`); reason != "not collected in time" {
				t.Errorf("expired hold's reason %q", reason)
			}
		})
	}
}
