package sip_test

import (
	"testing"

	"github.com/stacks-ils/stacks/sip"
)

// none marks a field that must be absent.
const none = "\x00absent"

// TestCheckinSorterOutcomes drives a checkin for each outcome a sorter routes on and
// checks the answer's sorter fields and where the item now is.
func TestCheckinSorterOutcomes(t *testing.T) {
	bins := sip.SortBins{sip.OutcomeShelf: "S", sip.OutcomeHold: "H", sip.OutcomeRemoteHold: "R", sip.OutcomeTransfer: "T", sip.OutcomeException: "X"}
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{SortBins: bins}})
	// A sorter's account: an item that was not on loan is ok (Koha's checked_in_ok).
	e.settings(func(u *sip.AccountUpdate) { u.Settings.CheckedInOK = true })
	c := e.client()
	// A copy of Eastside's, on its shelf there, that no hold wants.
	eastside := e.queryString(`SELECT i.barcode FROM items i JOIN branches b ON b.id = i.home_branch_id
		WHERE b.code = 'EAS' AND i.status = 'available' AND i.current_branch_id = i.home_branch_id AND i.item_type_id = 1
		AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id LIMIT 1`)

	tests := []struct {
		name    string
		setup   []string
		barcode string
		// want are fields of the answer; none means the field must be absent.
		want       map[string]string
		alert      byte
		ok         byte
		itemStatus string // items.status and the transit destination's code afterwards
	}{
		{"Shelf", []string{checkoutMsg("P0001", "I00001")}, "I00001",
			map[string]string{"AQ": "CEN", "CL": "S", "CT": none, "CV": none, "AA": "P0001", "AJ": "Pride and Prejudice"}, 'N', '1', "available "},
		{"HoldHere", []string{"15+" + sipNow + "BSCEN|BY2|AOCEN|AAP0003|ABI00010|AC|"}, "I00010",
			map[string]string{"AQ": "CEN", "CL": "H", "CT": "CEN", "CV": "01", "CY": "P0003", "DA": "Casey Waiting"}, 'Y', '1', "on_hold_shelf "},
		{"HoldElsewhere", []string{"15+" + sipNow + "BSWES|BY2|AOCEN|AAP0001|ABI00009|AC|"}, "I00009",
			map[string]string{"AQ": "CEN", "CL": "R", "CT": "WES", "CV": "02", "CY": "P0001", "DA": "Alex Reader"}, 'Y', '1', "in_transit WES"},
		{"Transfer", nil, eastside,
			map[string]string{"AQ": "EAS", "CL": "T", "CT": "EAS", "CV": "04", "CY": none}, 'Y', '1', "in_transit EAS"},
		{"Exception", nil, "NOSUCHITEM",
			map[string]string{"AQ": "", "CL": "X", "CV": "99"}, 'Y', '0', ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range tt.setup {
				if resp := send(t, c, m); resp[2] != '1' {
					t.Fatalf("setup %s: %s", m, resp)
				}
			}
			resp := send(t, c, checkinMsg(tt.barcode))
			if resp[:2] != "10" || resp[2] != tt.ok || resp[5] != tt.alert {
				t.Errorf("answer %s: want ok %c and alert %c", resp, tt.ok, tt.alert)
			}
			fields := responseFields(resp, 22)
			if fields["AB"] != tt.barcode || fields["AO"] != "CEN" {
				t.Errorf("answer %s: want AB %s and AO CEN", resp, tt.barcode)
			}
			for id, want := range tt.want {
				got, ok := fields[id]
				if want == none && ok {
					t.Errorf("%s = %q, want no such field (answer %s)", id, got, resp)
				} else if want != none && (!ok || got != want) {
					t.Errorf("%s = %q, want %q (answer %s)", id, got, want, resp)
				}
			}
			if tt.itemStatus != "" {
				got := e.queryString(`SELECT i.status || ' ' || coalesce(b.code, '') FROM items i
					LEFT JOIN branches b ON b.id = i.transit_to_id WHERE i.barcode = ?`, tt.barcode)
				if got != tt.itemStatus {
					t.Errorf("item afterwards: %q, want %q", got, tt.itemStatus)
				}
			}
		})
	}
}
