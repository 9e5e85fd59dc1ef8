package sip_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// TestBlockPatron: block patron (01) blocks the card with a staff note that says
// a self-check did it, whether it kept the card, and the terminal's message; the
// audit log has the same. The block is the terminal's, so patron enable (25) lifts
// it; once staff have set the block themselves, it does not.
func TestBlockPatron(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	resp := send(t, c, "01Y20261130    100000AOCEN|ALLeft in the reader|AAP0001|AC|")
	if !strings.HasPrefix(resp, "24YYYY") {
		t.Fatalf("01: %q, want a patron status with privileges denied", resp)
	}
	const wantNote = "Blocked by a self-check (card retained): Left in the reader"
	if got := queryRows(t, e.d, `SELECT blocked, block_source, block_note FROM patrons WHERE card = 'P0001'`); len(got) != 1 ||
		got[0] != "blocked=1 block_source=sip block_note="+wantNote {
		t.Errorf("patron after 01: %v", got)
	}
	if got := e.queryString(`SELECT detail FROM audit_log WHERE action = 'patron.block' AND object_type = 'patron'
		AND object_id = (SELECT id FROM patrons WHERE card = 'P0001') ORDER BY id DESC LIMIT 1`); got != wantNote {
		t.Errorf("audit detail = %q, want %q", got, wantNote)
	}

	t.Run("EnableLiftsTerminalBlock", func(t *testing.T) {
		if resp := send(t, c, "2520261130    100000AOCEN|AAP0001|AC|"); !strings.HasPrefix(resp, "26              ") {
			t.Fatalf("25: %q", resp)
		}
		if got := e.queryString(`SELECT blocked || '/' || block_source || '/' || block_note FROM patrons WHERE card = 'P0001'`); got != "0//" {
			t.Errorf("patron after 25: %q", got)
		}
		if got := e.queryString(`SELECT detail FROM audit_log WHERE action = 'patron.unblock' ORDER BY id DESC LIMIT 1`); !strings.Contains(got, wantNote) {
			t.Errorf("audit of the lift: %q", got)
		}
	})
	t.Run("EnableKeepsStaffBlock", func(t *testing.T) {
		send(t, c, "01N20261130    100000AOCEN|ALSuspected misuse|AAP0001|AC|")
		// Staff edit the block: it is theirs now.
		err := e.d.Write(context.Background(), func(tx *db.Tx) error {
			id, err := patrons.FindByCard(tx, "P0001")
			if err != nil {
				return err
			}
			return patrons.SetBlock(tx, stacks.Actor{Name: "staff"}, id.ID, true, "See the manager")
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp := send(t, c, "2520261130    100000AOCEN|AAP0001|AC|"); !strings.HasPrefix(resp, "26YYYY") || !strings.Contains(resp, "AFYour account is blocked.") {
			t.Fatalf("25: %q", resp)
		}
		if got := e.queryString(`SELECT blocked || '/' || block_source || '/' || block_note FROM patrons WHERE card = 'P0001'`); got != "1//See the manager" {
			t.Errorf("patron after 25: %q", got)
		}
		// A terminal's block patron does not take staff's block over either.
		send(t, c, "01Y20261130    100000AOCEN|ALAgain|AAP0001|AC|")
		if got := e.queryString(`SELECT blocked || '/' || block_source || '/' || block_note FROM patrons WHERE card = 'P0001'`); got != "1//See the manager" {
			t.Errorf("patron after a second 01: %q", got)
		}
	})
	t.Run("ControlCharactersInMessage", func(t *testing.T) {
		send(t, c, "01N20261130    100000AOCEN|ALa\x01b\x7f|AAP0003|AC|")
		if got := e.queryString(`SELECT block_note FROM patrons WHERE card = 'P0003'`); got != "Blocked by a self-check: a b" {
			t.Errorf("note = %q", got)
		}
	})
}

// TestItemStatusUpdate: 19 stores the item properties on the item, with an audit
// entry; 20 says so.
func TestItemStatusUpdate(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	if resp := send(t, c, "1920261130    100000AOCEN|ABI00003|AC|CHRFID|"); !strings.HasPrefix(resp, "201") {
		t.Fatalf("19: %q", resp)
	}
	if got := e.queryString(`SELECT sip_properties FROM items WHERE barcode = 'I00003'`); got != "RFID" {
		t.Errorf("sip_properties = %q", got)
	}
	if got := e.queryString(`SELECT detail FROM audit_log WHERE action = 'item.sip_properties' ORDER BY id DESC LIMIT 1`); got != `"" to "RFID"` {
		t.Errorf("audit detail = %q", got)
	}
	long := strings.Repeat("x", 256)
	if resp := send(t, c, "1920261130    100000AOCEN|ABI00003|AC|CH"+long+"|"); !strings.HasPrefix(resp, "200") {
		t.Errorf("19 with 256 characters: %q", resp)
	}
	if got := e.queryString(`SELECT sip_properties FROM items WHERE barcode = 'I00003'`); got != "RFID" {
		t.Errorf("sip_properties after a refused update = %q", got)
	}
}
